"""`python -m volfix ...` runs the command line."""
from .cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through subprocesses
    main(prog_name="volfix")
