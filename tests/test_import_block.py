"""The import block after a fix (SPEC §2.8), in the shape a reviewer expects: a new `import torch`
joins the file's plain imports, not the project's own names after them, and removing the
`Variable` import that opened a file does not leave the file opening with blank lines."""
from __future__ import annotations

import textwrap

from conftest import invoke

import volfix

HELPER = textwrap.dedent("""\
    from torch.autograd import Variable


    def get_batch(source, i, evaluation=False):
        data = Variable(source[i:i + 10], volatile=evaluation)
        return data
""")

CALLER = textwrap.dedent("""\
    import os
    import numpy as np
    from data import get_batch


    def evaluate(model, source):
        total = 0
        for i in range(0, len(source), 10):
            data = get_batch(source, i, evaluation=True)
            total += model(data)
        return total
""")


def test_import_torch_joins_the_plain_imports_before_the_projects_own(project):
    (project / "data.py").write_text(HELPER)
    (project / "main.py").write_text(CALLER)
    assert invoke("fix", "--no-cache", ".").exit_code == 0
    fixed = (project / "main.py").read_text()
    assert fixed.startswith("import os\nimport numpy as np\nimport torch\nfrom data import get_batch\n\n\n")
    assert "        with torch.no_grad():\n            data = get_batch(" in fixed


def test_removing_the_first_statement_leaves_no_blank_lines_at_the_top(project):
    (project / "data.py").write_text(HELPER)
    (project / "main.py").write_text(CALLER)
    assert invoke("fix", "--no-cache", ".").exit_code == 0
    assert (project / "data.py").read_text() == HELPER.replace(
        "from torch.autograd import Variable\n\n\n", "").replace(
        "Variable(source[i:i + 10], volatile=evaluation)", "source[i:i + 10]")


def test_a_block_of_plain_imports_only_still_gets_the_import_at_its_end():
    fixed = volfix.fix_source(textwrap.dedent("""\
        import os
        import numpy as np
        from torch.autograd import Variable as V

        out = model(V(x, volatile=True))
    """)).fixed_source
    # The torch import is the anchor: `import torch` goes just above it.
    assert fixed.startswith("import os\nimport numpy as np\nimport torch\n")


def test_future_imports_do_not_end_the_plain_imports(project):
    (project / "data.py").write_text(HELPER)
    (project / "main.py").write_text("from __future__ import print_function\n" + CALLER)
    assert invoke("fix", "--no-cache", ".").exit_code == 0
    assert (project / "main.py").read_text().startswith(
        "from __future__ import print_function\nimport os\nimport numpy as np\nimport torch\nfrom data import")


def test_blank_lines_above_the_removed_import_are_the_authors_and_stay():
    source = "\n\nfrom torch.autograd import Variable\n\n\ndef f(m, x):\n    return m(Variable(x))\n"
    fixed = volfix.fix_source(source, unsafe_fixes=True).fixed_source
    assert fixed == "\n\ndef f(m, x):\n    return m(x)\n"
