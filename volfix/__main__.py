"""`python -m volfix`: the same command line as the `volfix` console script."""
from .cli.commands import entry

if __name__ == "__main__":
    entry()
