"""The whole migration as a libcst codemod (`volfix.codemod.VolatileMigration`)."""
import subprocess
import sys
import textwrap

import libcst as cst
from libcst.codemod import CodemodContext, TransformSkip, TransformSuccess, transform_module

from volfix.api import fix_source
from volfix.codemod import VolatileMigration

LEGACY = textwrap.dedent("""\
    import torch
    from torch.autograd import Variable


    def predict(model, x):
        x = Variable(x, volatile=True)
        return model(x).argmax(1)
    """)


def test_the_codemod_migrates_a_module_through_libcsts_api():
    context = CodemodContext(filename="predict.py")
    result = transform_module(VolatileMigration(context), LEGACY)
    assert isinstance(result, TransformSuccess)
    assert result.code == fix_source(LEGACY, path="predict.py").fixed_source
    assert "@torch.no_grad()" in result.code and "Variable" not in result.code


def test_the_codemod_transforms_a_parsed_tree():
    out = VolatileMigration(CodemodContext()).transform_module(cst.parse_module(LEGACY))
    assert out.code == fix_source(LEGACY).fixed_source


def test_modern_code_is_skipped_and_unfixable_code_is_warned_about():
    context = CodemodContext(filename="clean.py")
    assert isinstance(transform_module(VolatileMigration(context), "import torch\nx = 1\n"), TransformSkip)
    result = transform_module(VolatileMigration(CodemodContext(filename="f.py")),
                              "from torch.autograd import Variable\nv = Variable(x, volatile=None)\n")
    assert isinstance(result, TransformSkip)
    assert any("VF103" in w and "TypeError" in w for w in result.warning_messages)


def test_unsafe_fixes_are_an_option_of_the_codemod():
    text = "import torch\nfrom torch.autograd import Variable\nh = Variable(state)\n"
    safe = transform_module(VolatileMigration(CodemodContext(filename="s.py")), text)
    assert isinstance(safe, TransformSkip)  # the only fix is unsafe
    unsafe = transform_module(VolatileMigration(CodemodContext(filename="s.py"), unsafe_fixes=True), text)
    assert isinstance(unsafe, TransformSuccess) and unsafe.code == "import torch\nh = state\n"


def test_libcsts_codemod_tool_runs_it(tmp_path):
    target = tmp_path / "predict.py"
    target.write_text(LEGACY, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "libcst.tool", "codemod", "-x", "volfix.codemod.VolatileMigration",
                           "--no-format", str(target)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert target.read_text(encoding="utf-8") == fix_source(LEGACY, path=str(target)).fixed_source
