"""`python -m volfix`: the same command line as the `volfix` console script."""
from .cli import main

if __name__ == "__main__":
    main(prog_name="volfix")
