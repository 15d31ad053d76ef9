"""`async=` sites found from a parsed guess (`mask_async`) agree with the tokenizer
(`find_async_keywords`), which is exact but slow."""
from __future__ import annotations

import ast

import pytest

from volfix.syntax.async_keywords import PLACEHOLDER, AsyncKeyword, find_async_keywords, mask_async

AGREE = [
    "x.cuda(async=True)\n",
    "s = 'async=1'\nx.cuda(async=True)\n",
    "# async=1\nx = 1\n",
    "f = lambda async=True: 1\n",
    "def f(a, async=False):\n    pass\n",
    "é = 'ü'; y = x.cuda(async = True)\r\nz = t.to(d, async=True)\r\n",
    "@dec(async=True)\ndef f():\n    return g(h(async=1), async=2)\n",
    "class A:\n    def f(self):\n        try:\n            x.cuda(async=True)\n        except E:\n"
    "            y.cuda(async=True)\n",
    "x = [a.cuda(async=True)\n     for a in b]\n",
    "async = 1\n",
    "if async == 1: pass\n",
    "foo()(async=1)\n",
    "def f(x=g(async=True)): pass\n",
    "if a: x.cuda(async=True); y.cuda(async=True)\n",
    "x = 1; y = z.cuda(async=True)\n",
    "async def f():\n    await g(async=True)\n",
    "with torch.no_grad():\n    out = m(x.cuda(async=True))\n",
    "match x:\n    case 1:\n        y.cuda(async=True)\n",
    "x = 1\n\x0c\ny = x.cuda(async=True)\n",
    "def f(*, async=True):\n    pass\n",
    '"""async=True"""\nx.cuda(async=True)\n',
]


@pytest.mark.parametrize("text", AGREE)
def test_sites_agree_with_the_tokenizer(text):
    masked, sites, tree = mask_async(text)
    assert sites == find_async_keywords(text)
    assert len(masked) == len(text)
    if tree is not None:  # reused only when it is the tree of the masked text itself
        assert ast.dump(tree) == ast.dump(ast.parse(masked))


def test_a_match_in_a_string_is_not_masked_and_the_guess_is_not_reused():
    text = "s = 'async=1'\nx.cuda(async=True)\n"
    masked, sites, tree = mask_async(text)
    assert masked == f"s = 'async=1'\nx.cuda({PLACEHOLDER}=True)\n"
    assert sites == [AsyncKeyword(2, 7, "cuda", False)]
    assert tree is None


def test_the_tree_is_reused_when_every_match_is_a_keyword():
    text = "y = x.cuda(async=True)\n"
    masked, _, tree = mask_async(text)
    assert tree is not None and ast.dump(tree) == ast.dump(ast.parse(masked))


def test_a_parameter_is_named_with_its_function():
    [site] = mask_async("def load(path, async=False):\n    pass\n")[1]
    assert site == AsyncKeyword(1, 15, "load", True) and not site.safe


def test_a_keyword_inside_an_f_string_is_found_where_the_tokenizer_of_this_python_may_not():
    # Code in a replacement field is code: `async=` there fails to parse as anywhere else.
    masked, sites, _ = mask_async("s = f'{x.cuda(async=True)}'\n")
    assert sites == [AsyncKeyword(1, 14, "cuda", False)]
    ast.parse(masked)


def test_an_unparsable_guess_falls_back_to_the_tokenizer():
    text = "x.cuda(async=True)\nx = = 1\n"
    masked, sites, tree = mask_async(text)
    assert tree is None and sites == find_async_keywords(text) == [AsyncKeyword(1, 7, "cuda", False)]
