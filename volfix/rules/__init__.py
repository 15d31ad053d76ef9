"""Rule definitions: one class per code, its docstring is its documentation."""
