"""`python -m volfix.legacy [--strict] [--no-async-rewrite] script.py [args...]`"""
from __future__ import annotations

import sys
from typing import List, Optional

USAGE = """usage: python -m volfix.legacy [--strict] [--no-async-rewrite] script.py [args ...]

Runs a PyTorch <= 0.3 script on this torch with 0.3's `volatile` semantics
(docs/LEGACY_RUNTIME.md).
  --strict            Variable(variable) raises, as in 0.3 (default: re-wraps its data)
  --no-async-rewrite  do not rename `async=` keywords of PyTorch calls to `non_blocking=`
"""


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    options = {"strict": False, "rewrite_async": True}
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        if flag == "--strict":
            options["strict"] = True
        elif flag == "--no-async-rewrite":
            options["rewrite_async"] = False
        else:
            sys.stderr.write(f"unknown option {flag}\n{USAGE}")
            return 2
    if not args:
        sys.stderr.write(USAGE)
        return 2
    from . import run_path

    run_path(args[0], args[1:], **options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
