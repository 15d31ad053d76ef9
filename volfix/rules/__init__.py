"""Rule definitions: one class per code, its docstring is its documentation; what the rules
share (`base`, `context`, `variable_calls`, `volatile_attributes`) and the registry that finds
them and builds the selection and the bytes prefilter (`registry`)."""
