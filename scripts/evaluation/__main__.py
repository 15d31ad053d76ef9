"""`python scripts/evaluation COMMAND [ARGS...]` (or `python -m evaluation` with scripts/ on the path).

    corpus     export the real-world corpus (docs/eval-corpus.json) and the human migrations
    measure    measure a volfix checkout on the corpus: found, resolved, broken, leftovers
    human      compare volfix with the humans' own migrations, site by site
    repos      measure volfix on any repository checkouts (no manifest)
    leftovers  what a fix left that a reviewer would reject, in two versions of one file
    helpers    helpers that thread the volatile flag (docs/helper-sites.json)
    generated  the long differential run over generated legacy programs (issue 21)
    fuzz       the fault and fuzz campaign on copies of real legacy files (issue 24)
    data-index the `.data[0]` reads a fix leaves, against docs/data-index-sites.json (issue 22)
    runs       the reads only a run can tell: `volfix verify --fix` on docs/verify-runs.json (issue 22)
"""
import importlib
import os
import sys

COMMANDS = {"corpus": "corpus", "measure": "measure", "human": "human", "repos": "repos",
            "leftovers": "leftovers", "helpers": "helper_sites", "generated": "generated", "fuzz": "fuzz",
            "data-index": "data_index", "runs": "runs"}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if not argv or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    module = importlib.import_module(f"{PACKAGE}.{COMMANDS[argv[0]]}")
    sys.argv = [f"evaluation {argv[0]}", *argv[1:]]
    return module.main(argv[1:])


if __package__:  # python -m evaluation
    PACKAGE = __package__
else:  # python scripts/evaluation: this folder is on sys.path, its parent is not
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    PACKAGE = "evaluation"

if __name__ == "__main__":
    sys.exit(main())
