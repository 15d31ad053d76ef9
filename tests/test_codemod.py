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


def readme_codemod_commands():
    """The commands of the README's codemod block, as written (comments dropped)."""
    import re
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- codemod:start -->\n```sh\n(.*?)```\n<!-- codemod:end -->", readme, re.S)
    assert block is not None
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


ASYNC_LEGACY = LEGACY + "\n\ndef to_gpu(x):\n    return x.cuda(async=True)\n"


def test_the_readme_codemod_commands_work_as_written_on_async_files(tmp_path):
    """libcst's tool cannot parse `async=` (nor run without black unless --no-format): the
    README's sequence handles both, and ends where `volfix fix` ends."""
    import shlex

    src = tmp_path / "src"
    src.mkdir()
    (src / "predict.py").write_text(ASYNC_LEGACY, encoding="utf-8")
    (src / "train.py").write_text("import torch\nfrom torch.autograd import Variable\nh = Variable(state)\n",
                                  encoding="utf-8")
    commands = readme_codemod_commands()
    assert [c.split()[:2] for c in commands] == [["volfix", "fix"], ["python", "-m"], ["python", "-m"]]
    assert all("--no-format" in c for c in commands[1:])
    for command in commands:
        argv = shlex.split(command)
        argv = [sys.executable, "-m", "volfix"] + argv[1:] if argv[0] == "volfix" else [sys.executable] + argv[1:]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert proc.returncode == 0, (command, proc.stdout + proc.stderr)
        assert "Failed to codemod 0 files" in proc.stderr or argv[2] == "volfix", proc.stderr
    expected = fix_source(ASYNC_LEGACY, path="src/predict.py").fixed_source
    assert (src / "predict.py").read_text(encoding="utf-8") == expected
    assert "non_blocking=True" in expected and "@torch.no_grad()" in expected
    assert (src / "train.py").read_text(encoding="utf-8") == "import torch\nh = state\n"


def test_without_the_rename_libcsts_tool_fails_on_an_async_file(tmp_path):
    """What the README says: the tool parses before the codemod runs, so it cannot help."""
    target = tmp_path / "a.py"
    target.write_text(ASYNC_LEGACY, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "libcst.tool", "codemod", "--no-format", "-x",
                           "volfix.codemod.VolatileMigration", str(target)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert "Failed to codemod 1 files" in proc.stderr
    assert target.read_text(encoding="utf-8") == ASYNC_LEGACY
