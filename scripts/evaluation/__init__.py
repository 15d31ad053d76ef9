"""How good volfix is on real and generated code: one package, one entry point.

    python scripts/evaluation COMMAND [ARGS...]      (COMMAND --help for its options)

See README.md beside this file for the commands and how they fit together."""
