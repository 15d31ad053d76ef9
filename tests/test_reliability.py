"""The smaller faults of the fault campaign (issue 24, item 7): deep expressions, encoding
declarations CPython refuses, findings marked fixable that `fix` never applies, file names
that are not UTF-8, a closed stdin."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import volfix


def fix(text: str):
    return volfix.fix_source(text, path="legacy.py", unsafe_fixes=True)


@pytest.mark.parametrize("terms", [1_000, 2_500])
def test_a_long_operator_chain_is_fixed_not_a_recursion_error(terms):
    # Valid code CPython compiles (up to ~2,900 terms); the tree is `terms` deep.
    chain = " + ".join(["x"] * terms)
    text = (f"from torch.autograd import Variable\ndef f(y):\n    x = model(Variable(y, volatile=True))\n"
            f"    z = {chain}\n    return z\n")
    result = fix(text)
    assert result.error is None
    assert result.fixed_count == 1 and not result.diagnostics
    compile(result.fixed_source, "<fixed>", "exec")
    assert f"    z = {chain}\n" in result.fixed_source
    assert [d.code for d in volfix.check_source(text, path="legacy.py").diagnostics] == ["VF101"]


def test_a_chain_too_deep_for_cpython_is_vf001_not_an_error():
    text = "from torch.autograd import Variable\nx = Variable(y, volatile=True)\nz = " + " + ".join(["1"] * 20_000) + "\n"
    result = fix(text)
    assert result.error is None
    assert [d.code for d in result.diagnostics] == ["VF001"]
    assert result.fixed_source == text


def test_a_long_operator_chain_in_a_notebook_is_fixed():
    import json

    from volfix.settings.config import Config
    from volfix.notebook import process_notebook

    chain = " + ".join(["x"] * 1_000)
    cell = f"from torch.autograd import Variable\nx = model(Variable(y, volatile=True))\nz = {chain}\n"
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": cell, "outputs": [],
                           "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result, new = process_notebook(json.dumps(notebook).encode(), path="eval.ipynb", config=Config(), mode="fix",
                                   unsafe_fixes=True)
    assert result.error is None and result.fixed_count == 1
    fixed = "".join(json.loads(new)["cells"][0]["source"])
    assert f"z = {chain}" in fixed and "volatile" not in fixed


BOM = b"\xef\xbb\xbf"
LEGACY_BODY = b"from torch.autograd import Variable\nx = Variable(y, volatile=True)\n"


def _cpython_compiles(data: bytes) -> bool:
    try:
        compile(data, "<file>", "exec", dont_inherit=True)  # bytes: CPython's own PEP 263 reading
    except SyntaxError:
        return False
    return True


@pytest.mark.parametrize("header", [
    BOM + b"# coding: utf8\n",  # CPython: "encoding problem: utf8 with BOM"
    BOM + b"#!/usr/bin/env python\n# -*- coding: utf8 -*-\n",
    BOM + b"# coding: latin-1\n",
    BOM + BOM,  # "invalid non-printable character U+FEFF"
    BOM + b"\xef\xbb\xbf# coding: utf-8\n",
    b"# coding: klingon\n",
    BOM + b"# coding: utf-8\n", BOM + b"# coding: UTF-8\n", BOM + b"# coding: utf_8\n",
    BOM + b"# coding: utf-8-unix\n", BOM, b"# coding: utf8\n",
])
def test_a_file_is_rewritten_only_if_cpython_reads_its_encoding_header(tmp_path, header):
    from volfix.settings.config import DEFAULT_CONFIG
    from volfix.run.fileproc import process_file

    data = header + LEGACY_BODY
    path = tmp_path / "legacy.py"
    path.write_bytes(data)
    result = process_file(str(path), config=DEFAULT_CONFIG, mode="fix", unsafe_fixes=True)
    written = path.read_bytes()
    assert result.error is None
    if _cpython_compiles(data):
        assert written != data and _cpython_compiles(written)
        assert written.startswith(header)
    else:
        assert written == data, "a file Python refuses was rewritten"
        assert {d.code for d in result.diagnostics} & {"VF001", "VF002"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="closing a child's fd 0")
@pytest.mark.parametrize("command", ["check", "fix"])
def test_a_closed_stdin_is_a_usage_error_not_an_internal_error(command):
    proc = subprocess.run([sys.executable, "-m", "volfix", command, "-"], capture_output=False,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                          preexec_fn=lambda: os.close(0),
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 2
    assert "standard input, but it is closed" in proc.stderr
    assert "internal error" not in proc.stderr and proc.stdout == ""
