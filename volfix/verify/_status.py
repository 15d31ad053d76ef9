"""Exit status of the tracer when torch cannot be imported (shared by the tracer and its caller,
which must not import the tracer: `python -m volfix.verify._trace` would then find it imported)."""
TORCH_MISSING_STATUS = 3
