"""Which `.volatile` attributes are a tensor's flag (shared by VF201-VF203)."""
import ast

from ..flow.scalars import ScalarValues
from ..syntax import names as nm

# Packages built on torch whose objects carry its tensors (torchtext's `Batch` fields, an
# allennlp `Field`'s tensors): in a file that imports one, `x.volatile` is a tensor's flag as
# surely as in a file that imports torch (a torchtext test asserting `batch.text.volatile`).
# `volatile` in a file that imports neither (C declarations in strings, a parser's AST node
# attribute) is never a tensor's flag to volfix.
TORCH_PACKAGES = frozenset({"torch", "torchtext", "torchvision", "torchaudio", "torchnet", "allennlp", "fastai",
                            "pyro", "ignite", "onmt", "inferno", "skorch", "pytorch_lightning", "torch_geometric"})

# Classes whose `volatile` attribute is a descriptor, not a tensor's flag.
_TORCH_CLASS_PREFIXES = ("torch.Tensor", "torch.autograd.Variable", "torch._C", "torch.nn.Parameter")


def is_tensor_attribute(node: ast.Attribute, ctx) -> bool:
    """`x.volatile` on a value; not `Tensor.volatile.__get__` (a descriptor of a class object,
    as in PyTorch's own override tables) nor an attribute of a class the file defines."""
    parent = ctx.index.parents.get(node)
    if isinstance(parent, ast.Attribute) and parent.attr.startswith("__") and parent.attr.endswith("__"):
        return False
    obj = node.value
    qual = ctx.index.qual(obj)
    if qual is not None and qual.startswith(_TORCH_CLASS_PREFIXES):
        return False
    if qual is not None and qual.rpartition(".")[2][:1].isupper() and qual.startswith("torch."):
        return False  # torch.FloatTensor.volatile and the like
    if isinstance(obj, ast.Name) and obj.id == "self" and _own_flag(node, ctx):
        return False  # `self.volatile = True` in a model's `set_eval()`: the object's own flag
    if isinstance(obj, ast.Name) and obj.id != "self" and _instance_flag(obj, node, ctx):
        return False  # `model.volatile` of `model = Speller()`, whose methods set `self.volatile`
    if isinstance(obj, ast.Name):
        defines_class = any(isinstance(s, ast.ClassDef) and s.name == obj.id for s in ctx.index.module_statements)
        if defines_class and not ctx.index.shadowed(obj.id, ctx.index.scope_of(node)):
            return False
    return True


# Bases that make `self` a tensor (a Variable or Tensor subclass): its `volatile` is the tensor's.
_TENSOR_BASES = frozenset({"Variable", "Tensor", "Parameter", "FloatTensor", "LongTensor"})


def _own_flag(node: ast.Attribute, ctx) -> bool:
    """`self.volatile` in a method of a class that is no tensor (an `nn.Module`, a data loader):
    an attribute the class keeps for itself, not a tensor's flag. Also in a function nested in
    such a method, whose `self` is the method's (`def wrap(b): return Variable(b,
    volatile=self.volatile)` in a dataset's `__getitem__`)."""
    index = ctx.index
    fn = index.function_of(node)
    while isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and "self" not in nm.function_params(fn) \
            and index.method_class(fn) is None:
        fn = index.function_of(fn)
    cls = index.method_class(fn) if fn is not None else None
    if cls is None or not fn.args.args or fn.args.args[0].arg != "self":
        return False
    return not any(isinstance(b, (ast.Name, ast.Attribute)) and (b.id if isinstance(b, ast.Name) else b.attr)
                   in _TENSOR_BASES for b in cls.bases)


def _instance_flag(obj: ast.Name, node: ast.Attribute, ctx) -> bool:
    """`obj` is only ever an instance of classes of this module that keep a `volatile` of their
    own (a method sets `self.volatile`)."""
    index = ctx.index
    owners = {id(index.method_class(index.function_of(a))) for a in index.attributes.get("volatile", ())
              if isinstance(a.ctx, ast.Store) and isinstance(a.value, ast.Name) and a.value.id == "self"
              and index.function_of(a) is not None}
    if not owners:  # no class here keeps a flag of its own: the instances need not be looked for
        return False
    classes = ScalarValues(index).instance_classes(obj, node)
    if not classes or not all(isinstance(c, ast.ClassDef) for c in classes):
        return False
    return all(id(c) in owners for c in classes)
