"""Errors the library raises for caller mistakes (the CLI turns them into exit code 2)."""


class VolfixConfigError(Exception):
    """A caller mistake: unknown rule code, malformed [tool.volfix], bad option value."""
