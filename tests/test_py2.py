"""volfix.syntax.py2: naming the Python 2 construct that keeps a file from parsing."""
from __future__ import annotations

import time

import pytest

from volfix.syntax.py2 import parser_limit_reason, python2_reason, tokens


def reason(what: str, line: int) -> str:
    return f"Python 2 syntax ({what} at line {line}): port to Python 3 first"


@pytest.mark.parametrize("source, what, line", [
    ('import torch\n\nprint "loss", loss.data[0]\n', "print statement", 3),
    ("for x in xs:\n    print x,\n", "print statement", 2),
    # `print >>f, x` parses as Python 3 (a shift and a tuple): the real error comes later.
    ("print >>sys.stderr, 'oops'\nprint 'x'\n", "print statement", 2),
    ("print >>sys.stderr, 'oops'\nx = (\n", "print statement", 1),
    ("if verbose: print 'epoch', epoch\n", "print statement", 1),
    ("x = 1; print x\n", "print statement", 1),
    ('print "a", \\\n    "b"\n', "print statement", 1),
    ('exec "import torch"\n', "exec statement", 1),
    ("exec code in namespace\n", "exec statement", 1),
    ("try:\n    pass\nexcept ValueError, e:\n    pass\n", "`except E, e:`", 3),
    ("try:\n    pass\nexcept (IOError, OSError), e:\n    pass\n", "`except E, e:`", 3),
    ('raise ValueError, "bad size"\n', "`raise E, message`", 1),
    ("name = `x`\n", "backticks", 1),
    ("if a <> b:\n    pass\n", "`<>` operator", 1),
    ("s = ur'\\d+'\n", "`ur` string prefix", 1),
    ("n = 10L\n", "long integer literal `10L`", 1),
    ("mask = 0xFFFFFFFFL\n", "long integer literal `0xFFFFFFFFL`", 1),
    ("os.chmod(path, 0777)\n", "octal literal `0777`", 1),
    ("def f(a, (b, c)):\n    return a\n", "tuple parameter", 1),
    ("key = lambda (k, v): v\n", "tuple parameter", 1),
])
def test_each_python2_construct_is_named(source, what, line):
    assert python2_reason(source) == reason(what, line)


def test_the_construct_on_the_error_line_wins():
    source = "x = 0777\ny = 1\nprint 'hi'\n"
    assert python2_reason(source, error_line=3) == reason("print statement", 3)
    assert python2_reason(source) == reason("octal literal `0777`", 1)  # Python's own first error


def test_a_python2_only_construct_elsewhere_is_named_when_the_error_is_something_else():
    # `async=` (repaired by VF301) is the first error here, but the file is also Python 2.
    source = "x = y.cuda(async=True)\nprint 'copied'\n"
    assert python2_reason(source) == reason("print statement", 2)


@pytest.mark.parametrize("source", [
    's = "print \'x\'"\nx = (\n',  # inside a string
    "# print 'x'\n# exec code\nx = (\n",  # inside comments
    "'''\nprint 'docs'\nexcept E, e:\n'''\nx = (\n",  # inside a docstring
    "print('x')\nx = (\n",  # Python 3 print
    "print = log.info\nprint.x = 1\nx = (\n",
    "try:\n    pass\nexcept (A, B):\n    pass\nx = (\n",
    "raise ValueError('a, b')\nx = (\n",
    "x = 0o777 + 0.5 + 00 + 0777.5 + 1e10 + 10j\nx = (\n",
    "def f(a, b=(1, 2)):\n    pass\nx = (\n",
    "f = lambda a, b: (a, b)\nx = (\n",
    "s = r'\\d' + u'x' + rb'y' + f'{x}'\nx = (\n",
    "class Foo:\n    def __init__(self):\n        pass\n  bad indentation\n",
    "",
    "x = = 1\n",
])
def test_python3_code_and_text_in_strings_or_comments_is_not_called_python2(source):
    assert python2_reason(source) is None


def test_a_vendored_c_file_is_not_called_python2():
    c_source = ("#include <stdio.h>\n\nint main(void) {\n"
                "    chmod(\"x\", 0777);\n    long n = 10L;\n    return 0;\n}\n")
    assert python2_reason(c_source) is None
    assert python2_reason(c_source, error_line=4) is None


def test_unterminated_strings_and_garbage_do_not_crash():
    for text in ["'abc", '"""never closed\nprint "x"', "x = $ ? !", "\\", "'\\", "\x00\x01",
                 "print '\\\n'", "\r\r\n\n\r"]:
        python2_reason(text)  # must not raise
        list(tokens(text))


def test_tokens_count_lines_across_cr_crlf_and_continuations():
    text = "a = 1\r\nb = '''x\ny'''\rc = \\\n  2\n"
    lines = {tok.text: tok.line for tok in tokens(text) if tok.kind == "NAME"}
    assert lines == {"a": 1, "b": 2, "c": 4}


def test_lexer_is_linear_on_a_large_file():
    text = "print 'x', `y`, 10L  # comment\n" * 20_000
    start = time.perf_counter()
    assert python2_reason(text) == reason("print statement", 1)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("source, expected", [
    ("x = " + "(" * 201 + ")" * 201 + "\n", "too many nested parentheses at line 1"),
    ("x = " + "+".join(["1"] * 1200) + "\n", "expression nested more than 1000 levels"),
    ("x = a" + ".b" * 1200 + "\n", "expression nested more than 1000 levels"),
    ("x = " + "-" * 1200 + "1\n", "expression nested more than 1000 levels"),
])
def test_parser_limit_refuses_what_would_crash_the_parser(source, expected):
    assert expected in parser_limit_reason(source)


@pytest.mark.parametrize("source", [
    "x = " + "(" * 200 + ")" * 200 + "\n",
    "table = [" + ", ".join(["-1"] * 20_000) + "]\n",  # long, but flat
    "x = 1\n" * 5_000,
    "s = '" + "(" * 5_000 + "'\n",  # brackets in a string
    "# " + "+" * 5_000 + "\n",
])
def test_parser_limit_accepts_long_but_shallow_code(source):
    assert parser_limit_reason(source) is None
