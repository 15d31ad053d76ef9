"""VF405: `index2word[ni]` with `ni = topi[0][0]` of a tensor: a number in 0.3, a 0-dim tensor
since 0.4, which a dict hashes by identity."""
import ast

from ..files import prefilter
from ..model import Applicability
from .base import Rule, on
from .plain_elements import ELEMENT_NAMES, PlainElements

# What makes a dict: a missing key raises (`dict`), or is made (`defaultdict`, `Counter`); in
# each a tensor key is another key than its number.
_DICTS = frozenset({"dict", "collections.OrderedDict", "collections.defaultdict", "collections.Counter"})


class ElementKey(Rule):
    """
    ## What it does
    Finds an element of a tensor read from `.data` or made by a constructor (`ni = topi[0][0]`
    after `decoder_output.data.topk(1)`, also in torch's function forms: `word_id =
    torch.multinomial(prob, 1)[0]` with `prob = output.squeeze().data.exp()`; each `w` of `for w
    in indices.data:`, `labels[i]` of `labels = torch.LongTensor(ys)`) used as the key of a dict or set the file builds
    (`index2word[ni]`, `vocab.get(w)`, `w in counts`, `w in {EOS, PAD}`), or of an attribute
    that the project's other files only ever assign a dict or a set
    (`data_loader.output_lang.index2word[ni]`, where another module's `Lang` holds
    `self.index2word = {0: "SOS", 1: "EOS"}`).

    ## Why is this bad?
    In PyTorch 0.3 an element of a tensor was a Python number, so it found its number's key.
    Since 0.4 it is a 0-dim tensor, and a tensor hashes by identity: `index2word[ni]` raises
    `KeyError` (a seq2seq decoder's greedy loop stops at its first word), `.get` returns
    `None`, and `in` says `False` (also for a set). The line runs on 0.3, and crashes or
    quietly does something else on a modern stack.

    ## Example
    ```python
    import torch

    index2word = {0: "SOS", 1: "EOS", 2: "cat"}
    topv, topi = decoder_output.data.topk(1)
    ni = topi[0][0]
    word = index2word[ni]
    ```

    ## Use instead
    ```python
    import torch

    index2word = {0: "SOS", 1: "EOS", 2: "cat"}
    topv, topi = decoder_output.data.topk(1)
    ni = topi[0][0]
    word = index2word[ni.item()]
    ```

    ## Fix safety
    The key becomes `key.item()`, the number 0.3 used: the lookup finds what it found on 0.3.
    The fix is safe. In 0.3 only a number found a key here (a tensor with dimensions, as a
    Variable, hashed by identity too), so wherever the legacy program's lookup succeeded the
    element was 0-dim, and `.item()` gives its number.
    """

    CODE = "VF405"
    MESSAGE = "a tensor element is a 0-dim tensor since PyTorch 0.4, not a number: as a dict key it finds nothing"
    FIX = Applicability.SAFE
    FIX_TITLE = "Key the dict by the element's number (`.item()`)"
    NEEDS = prefilter.ELEMENT_KEY
    NAMES = ELEMENT_NAMES

    @on(ast.Subscript)
    def subscript(self, node, ctx):
        self._check(node.value, node.slice, node, ctx)

    @on(ast.Call, callee=("get", "pop", "setdefault"))
    def call(self, node, ctx):
        if isinstance(node.func, ast.Attribute) and node.args and not isinstance(node.args[0], ast.Starred):
            self._check(node.func.value, node.args[0], node, ctx)

    @on(ast.Compare)
    def compare(self, node, ctx):
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            container = node.comparators[0]
            if isinstance(container, (ast.Set, ast.Dict)):  # `w in {EOS, PAD}`
                if ctx.index.parents.get(container) is node and _Keys(ctx.index).element(node.left, node):
                    self._report(container, node.left, ctx)
                return
            self._check(container, node.left, node, ctx)

    def _check(self, container: ast.AST, key: ast.AST, at: ast.AST, ctx) -> None:
        if isinstance(key, (ast.Slice, ast.Tuple)):
            return
        facts = _Keys(ctx.index)
        if facts.dict(container, at, ctx.links.dict_attributes if ctx.links is not None else ()) \
                and facts.element(key, at):
            self._report(container, key, ctx)

    def _report(self, container: ast.AST, key: ast.AST, ctx) -> None:
        src = ctx.src
        fix = ctx.edit_fix(Applicability.SAFE, self.FIX_TITLE,
                           ctx.expr.replace(key, f"{ctx.expr.attr_base(key)}.item()"))
        ctx.report(self.CODE, key, fix=fix,
                   message=f"`{src.segment(key)}` is a tensor element, a 0-dim tensor since PyTorch 0.4, not a "
                           f"number: as a key of `{src.segment(container)}` it finds nothing; use "
                           f"`{ctx.expr.attr_base(key)}.item()`")


class _Keys(PlainElements):
    """Plain elements, and the containers (a dict or set the module builds) they key."""

    def dict(self, container: ast.AST, at: ast.AST, project_dicts=()) -> bool:
        """Whether `container` is a dict or set the module builds, or, an attribute the module
        never assigns, one the project's other files build (`project_dicts`)."""
        if isinstance(container, ast.Attribute) and not (isinstance(container.value, ast.Name)
                                                          and container.value.id == "self"):
            values = self._assigned(container.attr)  # `output_lang.index2word`: any object's
            if not values:
                return container.attr in project_dicts  # `Links.dict_attributes`
        else:
            values = self.names.of(container, at)
        return bool(values) and all(isinstance(v, ast.AST) and self._makes_dict(v) for v in values)

    def _assigned(self, attr: str) -> list:
        """The values assigned to `<anything>.attr` in the module (None for an unpacked one)."""
        out = []
        for node in self.index.attributes.get(attr, ()):
            if isinstance(node.ctx, ast.Store):
                parent = self.index.parents.get(node)
                out.append(parent.value if isinstance(parent, ast.Assign) and node in parent.targets else None)
        return out

    def _makes_dict(self, value: ast.AST) -> bool:
        """A dict, or a set (`w in {EOS, PAD}` hashes too)."""
        if isinstance(value, (ast.Dict, ast.DictComp, ast.Set, ast.SetComp)):
            return True
        return isinstance(value, ast.Call) and (
            isinstance(value.func, ast.Name) and value.func.id in ("dict", "set", "frozenset")
            and self.index.qual(value.func) in (None, value.func.id) or self.index.qual(value.func) in _DICTS)
