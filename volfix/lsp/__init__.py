"""The volfix language server (`volfix server`, needs pygls: the `lsp` extra).

    positions.py   volfix locations (1-based, code points) <-> LSP positions (UTF-16 units)
    convert.py     volfix diagnostics and fixes -> LSP diagnostics, edits, actions, hover text
    configs.py     the nearest pyproject.toml/volfix.toml of a document, cached per directory
    notebooks.py   notebook documents checked and fixed as one notebook
    server.py      the pygls server: document sync, code actions, hover

Nothing here is imported by the rest of volfix, so `volfix check` never loads pygls.
"""
