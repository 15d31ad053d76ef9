"""Which `.volatile` attributes are a tensor's flag (shared by VF201-VF203)."""
import ast

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
