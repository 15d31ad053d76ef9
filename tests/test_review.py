"""The review hook of the fix loop (`fix_source(..., review=...)`, `volfix.engine.review`): what a
proposal holds, that declined fixes are never applied nor proposed twice, and that twins
of a declined fix are still asked about."""
from __future__ import annotations

import ast
import json

import pytest

from volfix import api, fix_source
from volfix.fixes.edits import TextEdit, apply_edits
from volfix.settings.config import DEFAULT_CONFIG
from volfix.run.fileproc import process_file
from volfix.model import Applicability, Diagnostic, Fix, Location
from volfix.engine.review import FixProposal, FixReviewer

# A region that adds a line above two identical `async=` keywords.
SHIFTING = """import torch
from torch.autograd import Variable

out = model(Variable(x, volatile=True))
h = x.cuda(async=True)
g = y.cuda(async=True)
"""


class Answers:
    """A review callback answering from a list, recording every proposal."""

    def __init__(self, *answers: bool):
        self.answers = list(answers)
        self.proposals: list = []

    def __call__(self, proposal: FixProposal) -> bool:
        self.proposals.append(proposal)
        return self.answers.pop(0)


def test_a_proposal_shows_one_fix_and_its_clean_up_on_the_current_text():
    review = Answers(True, False, True)
    result = fix_source(SHIFTING, path="m.py", review=review)
    first, second, third = review.proposals
    assert [d.code for d in first.diagnostics] == ["VF101"]
    assert first.path == "m.py" and first.cell is None
    assert first.applicability is Applicability.SAFE
    assert first.message == "Unwrap and run line 4 under `with torch.no_grad():`"
    assert first.note is None
    assert first.before == SHIFTING
    # The fix with the clean-up `volfix fix` does after it: the import it made unused goes.
    assert first.after == SHIFTING.replace("out = model(Variable(x, volatile=True))\n",
                                           "with torch.no_grad():\n    out = model(x)\n").replace(
        "from torch.autograd import Variable\n", "")
    # Each later fix is proposed on the text as accepted so far, each alone.
    assert second.before == first.after and third.before == first.after
    assert second.after == first.after.replace("h = x.cuda(async=True)", "h = x.cuda(non_blocking=True)")
    assert third.after == first.after.replace("g = y.cuda(async=True)", "g = y.cuda(non_blocking=True)")
    assert [d.location for d in second.diagnostics] == [Location(5, 12)]
    assert [d.location for d in third.diagnostics] == [Location(6, 12)]
    # The declined rename is not asked again.
    assert len(review.proposals) == 3
    # What is written is the last accepted proposal, byte for byte.
    assert result.fixed_source == third.after == ("import torch\n\n"
                                                  "with torch.no_grad():\n    out = model(x)\n"
                                                  "h = x.cuda(async=True)\ng = y.cuda(non_blocking=True)\n")
    assert result.applied_codes == ("VF101", "VF301") and result.fixed_count == 2
    assert [(d.code, d.location, d.fixable) for d in result.diagnostics] == [("VF301", Location(5, 12), True)]


def test_declining_everything_changes_nothing():
    review = Answers(False, False, False)
    result = fix_source(SHIFTING, path="m.py", review=review)
    assert len(review.proposals) == 3
    assert result.fixed_source == SHIFTING and not result.changed and result.fixed_count == 0
    assert [d.code for d in result.diagnostics] == ["VF101", "VF301", "VF301"]


def test_accepting_everything_equals_fixing_without_review():
    review = Answers(True, True, True)
    assert fix_source(SHIFTING, path="m.py", review=review).fixed_source == \
        fix_source(SHIFTING, path="m.py").fixed_source


def test_a_twin_of_a_declined_fix_is_still_asked_about():
    source = "import torch\na = x.cuda(async=True)\nb = x.cuda(async=True)\n"
    review = Answers(False, True)
    result = fix_source(source, path="t.py", review=review)
    assert [p.diagnostics[0].snippet for p in review.proposals] == ["async=", "async="]
    assert result.fixed_source == "import torch\na = x.cuda(async=True)\nb = x.cuda(non_blocking=True)\n"


def test_a_twin_that_moves_where_an_accepted_fix_was_is_asked_about():
    """Deleting the first of two identical lines reads, as a text diff, like deleting the
    second: the twin then sits where the accepted finding was, and was applied without a
    question (the property test found it)."""
    source = ("from torch.autograd import Variable\n\nfor x in x:\n"
              "    x = Variable(x, volatile=True)\n    x = Variable(x, volatile=True)\n")
    review = Answers(True, False)
    result = fix_source(source, path="t.py", unsafe_fixes=True, review=review)
    assert len(review.proposals) == 2
    assert result.fixed_count == 1
    assert result.fixed_source.count("Variable(x, volatile=True)") == 1, result.fixed_source


def test_clean_up_after_accepted_fixes_is_part_of_the_proposal_not_a_question():
    source = "import torch\nfrom torch.autograd import Variable\n\nh = Variable(torch.zeros(3))\n"
    review = Answers(True)
    result = fix_source(source, path="c.py", review=review)
    assert [[d.code for d in p.diagnostics] for p in review.proposals] == [["VF110"]]
    assert review.proposals[0].after == "import torch\n\nh = torch.zeros(3)\n"  # the import goes too
    assert result.fixed_source == review.proposals[0].after


# The example: unwrapping leaves `data, target = data, Variable(target)`, which the
# clean-up collapses; the proposal must show the collapsed line that is written.
TUPLE = """import torch
from torch.autograd import Variable


def evaluate(model, loader, criterion):
    total = 0
    for data, target in loader:
        data, target = Variable(data, volatile=True), Variable(target)
        output = model(data)
        total += criterion(output, target).item()
    return total
"""


@pytest.mark.parametrize("unsafe", [False, True])
def test_the_preview_is_what_fix_writes_for_a_tuple_assignment(unsafe):
    review = Answers(True, True)
    result = fix_source(TUPLE, path="e.py", review=review, unsafe_fixes=unsafe)
    assert len(review.proposals) == (2 if unsafe else 1)
    first = review.proposals[0]
    assert "data, target = data" not in first.after
    assert "            target = Variable(target)\n" in first.after
    assert result.fixed_source == review.proposals[-1].after
    assert result.fixed_source == fix_source(TUPLE, path="e.py", unsafe_fixes=unsafe).fixed_source


def test_unsafe_fixes_are_proposed_only_with_unsafe_fixes():
    source = "import torch\nif x.volatile:\n    y = 1\n"
    quiet = Answers()
    assert fix_source(source, path="u.py", review=quiet).fixed_source == source
    assert quiet.proposals == []
    review = Answers(True)
    result = fix_source(source, path="u.py", review=review, unsafe_fixes=True)
    (proposal,) = review.proposals
    assert proposal.applicability is Applicability.UNSAFE
    assert proposal.note == ("unsafe fix: the read asked whether `x` records a graph, "
                             "which `.requires_grad` answers today")
    assert result.fixed_source == "import torch\nif not x.requires_grad:\n    y = 1\n"


def test_a_notebook_proposal_names_its_cell_and_shows_the_cell_source(tmp_path):
    cells = [("code", "import torch\nfrom torch.autograd import Variable"),
             ("markdown", "# eval"),
             ("code", "for x in loader:\n    out = model(Variable(x, volatile=True))\n    %time out.sum()"),
             ("code", "h = x.cuda(async=True)")]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": src.splitlines(True)}
                                          for kind, src in cells],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
    review = Answers(True, False)
    result = process_file(str(path), config=DEFAULT_CONFIG, mode="fix", display_path="nb.ipynb",
                          review=review)
    first, second = review.proposals
    # The fix changes cell 3 and its clean-up cell 1 (the import it made unused): both are
    # shown, each headed with its number, magics restored (not the masked text).
    fixed_cell = "for x in loader:\n    with torch.no_grad():\n        out = model(x)\n        %time out.sum()"
    assert (first.path, first.cell, [d.cell for d in first.diagnostics]) == ("nb.ipynb", None, [3])
    assert first.before == f"# cell 1\n{cells[0][1]}\n# cell 3\n{cells[2][1]}\n"
    assert first.after == f"# cell 1\nimport torch\n# cell 3\n{fixed_cell}\n"
    assert (second.cell, second.before, second.after) == (4, "h = x.cuda(async=True)", "h = x.cuda(non_blocking=True)")
    written = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]
    assert written == ["import torch", "# eval", fixed_cell, "h = x.cuda(async=True)"]
    assert [(d.code, d.cell) for d in result.diagnostics] == [("VF301", 4)]


def test_check_paths_fixes_one_file_at_a_time_in_path_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("b.py", "a.py", "sub/c.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("import torch\nh = x.cuda(async=True)\n")
    review = Answers(True, False, True)
    results = api.check_paths(["."], mode="fix", jobs=4, use_cache=False, review=review)
    assert [p.path for p in review.proposals] == ["a.py", "b.py", "sub/c.py"]
    assert [(r.path, r.changed) for r in results] == [("a.py", True), ("b.py", False), ("sub/c.py", True)]
    assert "non_blocking" not in (tmp_path / "b.py").read_text()
    for name in ("a.py", "sub/c.py"):
        ast.parse((tmp_path / name).read_text())


def test_review_is_refused_in_check_mode():
    with pytest.raises(ValueError, match="review needs mode"):
        api.check_paths(["."], mode="check", review=Answers())


# ---------------------------------------------------------------------------- FixReviewer


def _candidate(row: int, col: int, edits, snippet: str = "Variable(x)"):
    diagnostic = Diagnostic("VF110", "message", Location(row, col), Location(row, col + 11),
                            fix=Fix(Applicability.SAFE, "Remove the wrapper", ()), snippet=snippet)
    return ((("VF110", snippet),), [diagnostic]), edits


TEXT = "h = Variable(x)\ng = Variable(x)\n"  # the twins start at offsets 4 and 20


def _reviewer(review) -> FixReviewer:
    return FixReviewer(review, "r.py", apply_edits)  # a preview without clean-up: the edits alone


def _step(candidate, text: str = TEXT):
    return candidate[0], apply_edits(text, candidate[1])


def test_answers_follow_their_fix_through_the_edits_of_a_step():
    review = Answers(False, True)
    reviewer = _reviewer(review)
    first, second = _candidate(1, 5, [TextEdit(4, 15, "x")]), _candidate(2, 5, [TextEdit(20, 31, "x")])
    assert reviewer.next(TEXT, [first, second]) == _step(second)
    reviewer.follow([TextEdit(0, 0, "# added\n"), TextEdit(20, 31, "x")])
    moved = _candidate(2, 5, [TextEdit(12, 23, "x")])  # the declined one, a line lower now
    assert reviewer.next("# added\n" + TEXT.replace("g = Variable(x)", "g = x"), [moved]) is None
    assert len(review.proposals) == 2


def test_a_declined_fix_whose_text_another_fix_rewrote_is_declined_everywhere():
    review = Answers(False)
    reviewer = _reviewer(review)
    assert reviewer.next(TEXT, [_candidate(1, 5, [TextEdit(4, 15, "x")])]) is None
    reviewer.follow([TextEdit(0, 16, "h = Variable(x)  # rewritten\n")])
    twin = _candidate(2, 5, [TextEdit(33, 44, "x")])
    assert reviewer.next("h = Variable(x)  # rewritten\ng = Variable(x)\n", [twin]) is None
    assert len(review.proposals) == 1


def test_a_later_group_holding_a_declined_finding_is_not_proposed():
    review = Answers(False, True)
    reviewer = _reviewer(review)
    (key, first), edits = _candidate(1, 5, [TextEdit(4, 15, "x")])
    (_, second), _ = _candidate(2, 5, [])
    both = ((key, first + second), [TextEdit(0, 31, "h = x\ng = x")])
    assert reviewer.next(TEXT, [both]) is None
    alone = _candidate(2, 5, [TextEdit(20, 31, "x")])  # regrouped: one of the declined two
    assert reviewer.next(TEXT, [alone]) is None
    other = _candidate(1, 5, [TextEdit(4, 15, "x")], snippet="Variable(y)")  # not declined
    assert reviewer.next(TEXT, [other]) == _step(other)
    assert [len(p.diagnostics) for p in review.proposals] == [2, 1]


def test_one_fix_is_asked_about_at_a_time():
    review = Answers(True)
    reviewer = _reviewer(review)
    accepted = _candidate(1, 5, [TextEdit(4, 15, "x")])
    overlapping = _candidate(1, 5, [TextEdit(0, 15, "h = x")], snippet="h = Variable(x)")
    assert reviewer.next(TEXT, [accepted, overlapping]) == _step(accepted)
    assert len(review.proposals) == 1  # the other one is asked about on the text that results
    assert review.proposals[0].after == "h = x\ng = Variable(x)\n"
