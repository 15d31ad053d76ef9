"""Which `.volatile` attributes are a tensor's flag (shared by VF201-VF203)."""
import ast

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
    if isinstance(obj, ast.Name):
        defines_class = any(isinstance(s, ast.ClassDef) and s.name == obj.id for s in ctx.index.module_statements)
        if defines_class and not ctx.index.shadowed(obj.id, ctx.index.scope_of(node)):
            return False
    return True
