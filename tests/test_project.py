"""Helpers that thread the volatile flag across the files of a run (`volfix.project.index`, SPEC §2.6)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Dict

import pytest

from volfix.settings.config import Config
from volfix.project.index import module_names
from volfix.project.modules import ModuleTable, added_search_dirs
from volfix.run.options import RunOptions
from volfix.run.runner import run
from conftest import code_notebook

HELPER = '''\
import torch
from torch.autograd import Variable


def get_batch(source, i, evaluation=False):
    data = Variable(source[i:i + 2], volatile=evaluation)
    return data
'''

CALLER = '''\
{imports}


def evaluate(model, source):
    total = 0
    for i in range(0, len(source), 2):
        batch = {call}(source, i, evaluation=True)
        total += model(batch).sum().item()
    return total


def train(model, source, opt):
    for i in range(0, len(source), 2):
        batch = {call}(source, i)
        loss = model(batch).sum()
        loss.backward()
        opt.step()
'''


def write(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def fix(root: Path, unsafe: bool = True):
    return {Path(r.path).relative_to(root).as_posix() if Path(r.path).is_absolute() else r.path: r
            for r in run([str(root)], config=Config(), options=RunOptions(mode="fix", unsafe_fixes=unsafe, use_cache=False))}


def check(root: Path):
    return run([str(root)], config=Config(), options=RunOptions(mode="check", use_cache=False))


def with_blocks(source: str):
    """(header text, first body line) of every `with` statement."""
    tree = ast.parse(source)
    return [(ast.unparse(item.context_expr), node.body[0].lineno)
            for node in ast.walk(tree) if isinstance(node, ast.With) for item in node.items]


@pytest.mark.parametrize("imports, call, layout", [
    ("from data import get_batch", "get_batch", "sibling"),
    ("import data", "data.get_batch", "sibling"),
    ("from data import get_batch as gb", "gb", "sibling"),
    ("from .data import get_batch", "get_batch", "package"),
    ("from . import data", "data.get_batch", "package"),
    ("from pkg.data import get_batch", "get_batch", "root"),
])
def test_call_site_in_another_module_gets_the_region(tmp_path, imports, call, layout):
    prefix = {"sibling": "", "package": "pkg/", "root": "pkg/"}[layout]
    files = {f"{prefix}data.py": HELPER}
    if layout == "package":
        files["pkg/__init__.py"] = ""
    caller = "main.py" if layout == "root" else f"{prefix}main.py"
    files[caller] = CALLER.format(imports=imports, call=call)
    write(tmp_path, files)
    results = fix(tmp_path)
    helper = (tmp_path / f"{prefix}data.py").read_text()
    main = (tmp_path / caller).read_text()
    assert "volatile" not in helper and "Variable" not in helper
    # Only the evaluation call is wrapped; the training call is left alone.
    assert with_blocks(main) == [("torch.no_grad()", 9)], main
    assert "import torch" in main
    assert all(r.error is None for r in results.values())
    # Running again changes nothing and reports nothing.
    again = fix(tmp_path)
    assert all(not r.changed for r in again.values())
    assert check(tmp_path) == []


def test_helper_without_a_true_caller_in_the_run_is_not_fixed(tmp_path):
    write(tmp_path, {"data.py": HELPER,
                     "main.py": CALLER.format(imports="from data import get_batch", call="get_batch")
                     .replace("evaluation=True", "evaluation=False")})
    results = fix(tmp_path)
    assert (tmp_path / "data.py").read_text() == HELPER
    [diag] = [d for r in results.values() for d in r.diagnostics if d.code == "VF103"]
    assert diag.fix is None
    assert "no call in this run passes a true `evaluation`" in diag.note


def test_a_helper_named_without_a_call_has_callers_volfix_cannot_see(tmp_path):
    """lcswillems/pytorch-a2c-ppo: `self.preprocess_obss = preprocess_obss or
    default_preprocess_obss` in another file, then `self.preprocess_obss(obs)`, which keeps
    the default `volatile=True`. No call of the name passes a true flag, yet every call
    through the attribute does: the unwrap is unsafe and names the reference (plain `fix`
    once dropped the flag, and the rollout recorded graphs)."""
    helper = textwrap.dedent("""\
        import torch
        from torch.autograd import Variable


        def preprocess(obss, volatile=True):
            return Variable(torch.FloatTensor(obss), volatile=volatile)
        """)
    write(tmp_path, {"pyproject.toml": "", "fmt.py": helper,
                     "algo.py": textwrap.dedent("""\
                         from fmt import preprocess


                         class Algo(object):
                             def __init__(self, model, preprocess_obss=None):
                                 self.model = model
                                 self.preprocess_obss = preprocess_obss or preprocess

                             def collect(self, obs):
                                 return self.model(self.preprocess_obss(obs)).data
                         """)})
    [diag] = [d for r in check(tmp_path) for d in r.diagnostics if d.code == "VF103"]
    assert diag.fix is not None and diag.fix.applicability.value == "unsafe"
    assert "`preprocess()` is also used where volfix cannot follow it (" in diag.note
    assert diag.note.endswith(f"{tmp_path / 'algo.py'}:7)")
    fix(tmp_path, unsafe=False)
    assert (tmp_path / "fmt.py").read_text() == helper


@pytest.mark.parametrize("paths", [["."], ["data.py"]], ids=["the-whole-project", "one-file-of-it"])
def test_helper_without_a_true_caller_in_its_project_is_unwrapped(tmp_path, paths):
    """Under a project root every call of the helper is known, whether the run is the project
    itself (`volfix fix .`, the usual run) or one of its files: none passes a true flag, so the
    `Variable` is only unwrapped, and plain `fix` leaves nothing to report (a flag not named
    `volatile` stays, as the human migrations keep awd-lstm-lm's `evaluation`)."""
    write(tmp_path, {"pyproject.toml": "",
                     "data.py": HELPER,
                     "main.py": CALLER.format(imports="from data import get_batch", call="get_batch")
                     .replace("evaluation=True", "evaluation=False")})
    targets = [str(tmp_path / p) for p in paths]
    found = run(targets, config=Config(), options=RunOptions(mode="check", use_cache=False))
    [diag] = [d for r in found for d in r.diagnostics if d.code == "VF103"]
    assert diag.fix is not None and "no call in the project passes a true `evaluation`" in diag.note
    run(targets, config=Config(), options=RunOptions(mode="fix", unsafe_fixes=False, use_cache=False))
    helper = (tmp_path / "data.py").read_text()
    assert "Variable" not in helper and "data = source[i:i + 2]" in helper
    assert all(not r.diagnostics for r in check(tmp_path))


def test_helper_diagnostic_names_the_call_sites_in_other_files(tmp_path):
    write(tmp_path, {"data.py": HELPER,
                     "main.py": CALLER.format(imports="from data import get_batch", call="get_batch"),
                     "other.py": "from data import get_batch\n\n\ndef f(s, *a):\n    return get_batch(s, *a)\n"})
    results = {Path(r.path).name: r for r in check(tmp_path)}
    [helper] = [d for d in results["data.py"].diagnostics if d.code == "VF103"]
    assert "main.py:7" in helper.note
    # `*a` may carry the flag: named as a call site volfix cannot follow.
    assert "other.py:5" in helper.note and "cannot follow" in helper.note
    [site] = results["main.py"].diagnostics
    assert site.code == "VF101" and site.location.row == 7
    assert "data.py:5" in site.text


def test_caller_passing_its_own_parameter_is_followed_to_its_callers(tmp_path):
    write(tmp_path, {"data.py": HELPER, "main.py": '''\
        from data import get_batch


        def batches(source, volatile=False):
            return [get_batch(source, i, evaluation=volatile) for i in range(0, len(source), 2)]


        def evaluate(model, source):
            out = [model(x) for x in batches(source, volatile=True)]
            return out
        '''})
    fix(tmp_path)
    main = (tmp_path / "main.py").read_text()
    # The whole body of the caller that passes True is the region: the decorator.
    assert "@torch.no_grad()\ndef evaluate(" in main, main
    assert "@torch.no_grad()\ndef batches(" not in main, main


def test_method_helper_called_on_an_instance_elsewhere(tmp_path):
    write(tmp_path, {"model.py": '''\
        import torch.nn as nn
        from torch.autograd import Variable


        class Encoder(nn.Module):
            def forward_emb(self, images, volatile=False):
                images = Variable(images, volatile=volatile)
                return self.fc(images)
        ''', "evaluation.py": '''\
        def encode(model, loader):
            embs = []
            for images in loader:
                emb = model.forward_emb(images, volatile=True)
                embs.append(emb.data.numpy())
            return embs
        '''})
    fix(tmp_path)
    evaluation = (tmp_path / "evaluation.py").read_text()
    assert with_blocks(evaluation) == [("torch.no_grad()", 8)], evaluation
    assert "volatile" not in (tmp_path / "model.py").read_text().split("def forward_emb")[1].split("\n", 2)[1]
    # the parameter is gone, so the caller's `volatile=True` goes too (it raised a TypeError)
    assert "model.forward_emb(images)" in evaluation, evaluation
    assert check(tmp_path) == []


def test_wrapper_lambda_imported_from_another_module(tmp_path):
    write(tmp_path, {"common.py": '''\
        from torch import autograd
        USE_CUDA = False
        Variable = lambda *args, **kwargs: autograd.Variable(*args, **kwargs).cuda() if USE_CUDA else autograd.Variable(*args, **kwargs)
        ''', "agent.py": '''\
        import torch
        from common import Variable


        def act(model, state):
            state = Variable(torch.FloatTensor(state).unsqueeze(0), volatile=True)
            q_value = model(state)
            return q_value.max(1)[1].item()
        '''})
    fix(tmp_path)
    agent = (tmp_path / "agent.py").read_text()
    assert "volatile" not in agent
    # The whole body is the region: the decorator.
    assert "@torch.no_grad()\ndef act(" in agent, agent


def test_wrapper_def_called_through_its_module(tmp_path):
    """A sibling module's `def Variable(data, *args, **kwargs)` forwarder, called as
    `cuda.Variable(x, volatile=True)` after `import cuda` (crlmaze's layout): the call is a
    volatile source, keeps the wrapper (it still moves to the GPU) and gets the region."""
    write(tmp_path, {"cuda.py": '''\
        import torch
        import torch.autograd as autograd

        USE_CUDA = torch.cuda.is_available()


        def Variable(data, *args, **kwargs):
            var = autograd.Variable(data, *args, **kwargs)
            if USE_CUDA:
                var = var.cuda()
            return var
        ''', "agent.py": '''\
        import torch
        import cuda


        def act(model, state):
            state = cuda.Variable(torch.FloatTensor(state), volatile=True)
            q_value = model(state)
            return q_value.max(1)[1].item()
        '''})
    fix(tmp_path)
    agent = (tmp_path / "agent.py").read_text()
    assert "volatile" not in agent and "cuda.Variable(torch.FloatTensor(state))" in agent, agent
    assert "@torch.no_grad()\ndef act(" in agent, agent


def test_wrapper_def_imported_by_name_and_alias(tmp_path):
    """`from utils import wrap` of a `def wrap(data, **kwargs)` that hands its keywords to
    `Variable` (facebookresearch/loop's layout): `wrap(x, volatile=True)` is a volatile source
    like `Variable(x, volatile=True)`, under its alias too (it was read by nothing, so the
    keyword stayed under a clean check)."""
    write(tmp_path, {"utils.py": '''\
        import torch
        from torch.autograd import Variable


        def wrap(data, **kwargs):
            if torch.is_tensor(data):
                return Variable(data, **kwargs)
            return tuple([wrap(x, **kwargs) for x in data])
        ''', "train.py": '''\
        import torch
        from utils import wrap as w2, wrap


        def train(model, loader, optimizer):
            for txt, feat in loader:
                loss = (model(wrap(txt)) - wrap(feat)[0]).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


        def evaluate(model, loader):
            total = 0
            for txt, feat in loader:
                input = wrap(txt, volatile=True)
                target = w2(feat, volatile=True)
                total += (model(input) - target[0]).pow(2).mean().item()
            return total
        '''})
    assert sorted((d.location.row, d.code) for r in check(tmp_path) for d in r.diagnostics) == [(16, "VF101"), (17, "VF101")]
    fix(tmp_path)
    train = (tmp_path / "train.py").read_text()
    assert "volatile" not in train and "target = w2(feat)" in train, train
    assert with_blocks(train) == [("torch.no_grad()", 17)], train
    assert [d for r in check(tmp_path) for d in r.diagnostics] == []


def test_a_function_of_the_same_name_as_a_wrapper_elsewhere_is_not_the_wrapper(tmp_path):
    """`wrap` defined in this file (a dict builder taking its own `volatile=`) is not
    `utils.wrap`, the project's `Variable` wrapper this file imports under another name."""
    write(tmp_path, {"utils.py": '''\
        from torch.autograd import Variable


        def wrap(data, **kwargs):
            return Variable(data, **kwargs)
        ''', "other.py": '''\
        import torch
        from utils import wrap as w


        def wrap(x, volatile=False):
            return {"x": x, "volatile": volatile}


        def go(x):
            return w(x), wrap(x, volatile=True)
        '''})
    assert [d for r in check(tmp_path) for d in r.diagnostics] == []


def test_caller_cache_follows_the_helper(tmp_path):
    """A caller's cached result depends on the helper's file: editing only the helper
    changes what `check` says about the caller."""
    write(tmp_path, {"data.py": HELPER,
                     "main.py": CALLER.format(imports="from data import get_batch", call="get_batch")})
    (tmp_path / ".git").mkdir()
    first = run([str(tmp_path)], config=Config(), options=RunOptions(mode="check"))
    assert any(Path(r.path).name == "main.py" for r in first)
    (tmp_path / "data.py").write_text(HELPER.replace("volatile=evaluation", "volatile=False"))
    second = run([str(tmp_path)], config=Config(), options=RunOptions(mode="check"))
    assert not any(Path(r.path).name == "main.py" and r.diagnostics for r in second)


def test_module_names():
    assert module_names("/r/pkg/utils.py", "/r/main.py") == ["pkg.utils", "r.pkg.utils", ".pkg.utils"]
    assert module_names("/r/pkg/utils.py", "/r/pkg/train.py")[:2] == ["utils", "pkg.utils"]
    assert ".utils" in module_names("/r/pkg/utils.py", "/r/pkg/train.py")
    assert "." in module_names("/r/pkg/__init__.py", "/r/pkg/train.py")
    assert "..sub.utils" in module_names("/r/pkg/sub/utils.py", "/r/pkg/other/train.py")
    # A module in a directory that does not hold the importer is not importable by a bare name.
    assert "utils" not in module_names("/r/lib/utils.py", "/r/scripts/train.py")


def test_the_directories_a_script_adds_to_its_search_path():
    """Read from its bytes: literal paths from the script's directory, `insert` too, the
    `dirname(abspath(__file__))` chain; a comment, `os.getcwd()` and a name add nothing."""
    raw = b"""import os, sys
sys.path.append("../semi-supervised")
# sys.path.append('../commented')
    sys.path.insert(0, '..')
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.append(os.getcwd())
sys.path.insert(0, path)
"""
    assert added_search_dirs(raw, "/r/examples/main.py") == ("/r/semi-supervised", "/r")
    table = ModuleTable(["/r/semi-supervised/inference/__init__.py", "/r/examples/main.py"],
                        read=lambda path: raw if path == "/r/examples/main.py" else None)
    assert table.resolve("inference", "/r/examples/main.py") == "/r/semi-supervised/inference/__init__.py"
    assert table.resolve("inference", "/r/tools/main.py") is None
    assert ModuleTable(list(table)).resolve("inference", "/r/examples/main.py") is None


def project_with_cache(tmp_path: Path, monkeypatch, evaluation: str = "True") -> None:
    """The project of HELPER and CALLER as its own repository, the run's working directory
    (the cache lives in the project root)."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"data.py": HELPER,
                     "main.py": CALLER.format(imports="from data import get_batch", call="get_batch")
                     .replace("evaluation=True", f"evaluation={evaluation}")})
    (tmp_path / ".git").mkdir(exist_ok=True)


def summary(results):
    return sorted((Path(r.path).name, d.code, d.location.row, d.note or "") for r in results for d in r.diagnostics)


def refuse(*_args, **_kwargs):
    raise AssertionError("recomputed a fact the cache holds")


def test_warm_run_takes_the_project_facts_from_the_cache(tmp_path, monkeypatch):
    """Linking analyses every helper file and parses every caller: a warm run must not."""
    import volfix.project.index as project

    project_with_cache(tmp_path, monkeypatch)
    cold = summary(run([str(tmp_path)], config=Config(), options=RunOptions(mode="check")))
    assert ("main.py", "VF101", 7) in [entry[:3] for entry in cold]
    monkeypatch.setattr(project, "file_helpers", refuse)
    monkeypatch.setattr(project, "file_calls", refuse)
    assert summary(run([str(tmp_path)], config=Config(), options=RunOptions(mode="check", jobs=1))) == cold


def test_an_edited_caller_is_parsed_again_and_the_helper_file_is_not(tmp_path, monkeypatch):
    import volfix.project.index as project

    project_with_cache(tmp_path, monkeypatch)
    run([str(tmp_path)], config=Config(), options=RunOptions(mode="check"))
    parsed = []
    real_calls = project.file_calls
    monkeypatch.setattr(project, "file_helpers", refuse)
    monkeypatch.setattr(project, "file_calls", lambda item: parsed.append(Path(item[0]).name) or real_calls(item))
    (tmp_path / "main.py").write_text(
        (tmp_path / "main.py").read_text().replace("evaluation=True", "evaluation=False"))
    warm = summary(run([str(tmp_path)], config=Config(), options=RunOptions(mode="check", jobs=1)))
    assert parsed == ["main.py"]
    monkeypatch.undo()
    # The same answer as a run without any cache.
    assert warm == summary(run([str(tmp_path)], config=Config(), options=RunOptions(mode="check", use_cache=False)))
    assert not any(name == "main.py" for name, *_ in warm)


def test_damaged_fact_entries_are_recomputed(tmp_path, monkeypatch):
    project_with_cache(tmp_path, monkeypatch)
    cold = summary(run([str(tmp_path)], config=Config(), options=RunOptions(mode="check")))
    from volfix.run.cache import _checksum

    damaged = 0
    for entry in (tmp_path / ".volfix_cache").rglob("*.json"):
        if entry.read_bytes().partition(b"\n")[2].startswith(b"["):  # facts are lists; results are objects
            garbage = b'[["get_batch", "five"]]'  # with a right checksum: only the decoding can refuse it
            entry.write_bytes(_checksum(entry.stem, garbage) + b"\n" + garbage)
            damaged += 1
    assert damaged >= 2  # the helper file's helpers, the caller's calls
    assert summary(run([str(tmp_path)], config=Config(), options=RunOptions(mode="check"))) == cold


def test_a_file_that_cannot_name_the_helpers_module_is_not_parsed(tmp_path, monkeypatch):
    """Calling another file's helper needs an import that spells its module: a file that
    only shares the helper's name is skipped without parsing."""
    import volfix.project.index as project

    write(tmp_path, {"data.py": HELPER,
                     "main.py": CALLER.format(imports="from data import get_batch", call="get_batch"),
                     "notes.py": "# get_batch is defined in another project\nget_batch = None\n"})
    parsed = []
    real_calls = project.file_calls
    monkeypatch.setattr(project, "file_calls", lambda item: parsed.append(Path(item[0]).name) or real_calls(item))
    check(tmp_path)
    # The check previews one `fix` run of this project (the helper waits for main.py's region,
    # test_check_fix_agree.py), which links the fixed texts again: no cache here, so the
    # linked files are parsed twice; notes.py never.
    assert sorted(set(parsed)) == ["data.py", "main.py"]


def test_one_safe_fix_run_converges_across_files(tmp_path):
    """The caller's region is written first, then the helper is unwrapped in the same run:
    a second run changes nothing (it used to unwrap the helper then)."""
    write(tmp_path, {"data.py": HELPER,
                     "main.py": CALLER.format(imports="from data import get_batch", call="get_batch")})
    first = fix(tmp_path, unsafe=False)
    assert "volatile" not in (tmp_path / "data.py").read_text()
    assert with_blocks((tmp_path / "main.py").read_text()) == [("torch.no_grad()", 9)]
    assert first["data.py"].changed and first["data.py"].fixed_count == 1
    assert all(not r.changed for r in fix(tmp_path, unsafe=False).values())
    assert check(tmp_path) == []


FIELD = '''\
from torch.autograd import Variable


class {name}Field:
    def as_tensor(self, values, for_training=True):
        tensor = Variable(values, volatile=not for_training)
        return tensor
'''


def test_a_method_family_gets_every_call_and_one_run_converges(tmp_path):
    """`field.as_tensor(..., for_training=False)` may reach any class of the run that defines
    `as_tensor` (allennlp's fields): every one gets the call, and one run fixes them all (the
    call used to go to the first class only, and each later run unwrapped one more), with no
    stale call-site finding left in the report."""
    names = ["Array", "Index", "Label", "MultiLabel", "ProductionRule", "SequenceLabel", "Span"]
    write(tmp_path, {f"fields/{n.lower()}_field.py": FIELD.format(name=n) for n in names})
    write(tmp_path, {"instance.py": '''\
        def as_tensor_dict(fields, values, for_training=True):
            return {name: field.as_tensor(values, for_training=for_training) for name, field in fields.items()}
        ''', "evaluate.py": '''\
        from instance import as_tensor_dict


        def evaluate(model, fields, batches):
            for values in batches:
                tensors = as_tensor_dict(fields, values, for_training=False)
                print(model(**tensors))
        '''})
    first = fix(tmp_path)
    for n in names:
        assert "volatile" not in (tmp_path / f"fields/{n.lower()}_field.py").read_text(), n
    assert with_blocks((tmp_path / "evaluate.py").read_text()) == [("torch.no_grad()", 8)]
    assert [d for r in first.values() for d in r.diagnostics] == []
    assert all(not r.changed for r in fix(tmp_path).values())
    assert check(tmp_path) == []


ITERATOR = '''\
class Batch:
    def __init__(self, fields):
        self.fields = fields

    def as_tensor_dict(self, for_training=True):
        return {name: field.as_tensor(for_training=for_training) for name, field in self.fields.items()}


class DataIterator:
    def __call__(self, instances, num_epochs=None, for_training=True):
        for _ in range(num_epochs or 1):
            yield from self._yield_one_epoch(instances, for_training)

    def _yield_one_epoch(self, instances, for_training):
        for batch in self._create_batches(instances):
            yield batch.as_tensor_dict(for_training=for_training)

    def _create_batches(self, instances):
        return [Batch(fields) for fields in instances]
'''


def test_an_instance_call_reaches_its_class_call_and_the_region_covers_the_generator(tmp_path):
    """allennlp's chain: `iterator(instances, num_epochs=1, for_training=False)` runs
    `DataIterator.__call__`, a generator that hands the flag through `_yield_one_epoch` (same
    file) and `Batch.as_tensor_dict` to every field's `as_tensor`. The calls of the instance
    (a parameter, and an attribute `self._iterator`) are linked to `__call__`, and the region
    goes where the generator is consumed, the evaluation loop; the training loop gets none."""
    write(tmp_path, {"fields.py": FIELD.format(name="Array"), "iterator.py": ITERATOR, "evaluate.py": '''\
        def evaluate(model, instances, data_iterator):
            model.eval()
            iterator = data_iterator(instances, num_epochs=1, for_training=False)
            for batch in iterator:
                model(**batch)
            return model.get_metrics(reset=True)
        ''', "trainer.py": '''\
        class Trainer:
            def __init__(self, model, iterator, optimizer):
                self._model, self._iterator, self._optimizer = model, iterator, optimizer

            def train_epoch(self, data):
                for batch in self._iterator(data, num_epochs=1):
                    loss = self._model(**batch)["loss"]
                    self._optimizer.zero_grad()
                    loss.backward()
                    self._optimizer.step()

            def validation_loss(self, data):
                total = 0.0
                for batch in self._iterator(data, num_epochs=1, for_training=False):
                    total += self._model(**batch)["loss"].item()
                return total
        ''', "trainer_test.py": '''\
        def test_losses(trainer, batch):
            assert trainer._batch_loss(batch, for_training=False) is not None
        '''})
    fix(tmp_path)
    assert "volatile" not in (tmp_path / "fields.py").read_text()
    evaluate = (tmp_path / "evaluate.py").read_text()
    assert with_blocks(evaluate) == [("torch.no_grad()", 7)], evaluate
    trainer = (tmp_path / "trainer.py").read_text()
    assert with_blocks(trainer) == [] and trainer.count("no_grad") == 1, trainer
    assert "    @torch.no_grad()\n    def validation_loss(self, data):" in trainer, trainer
    # a method called with the same keyword is not the instance's call
    assert "torch" not in (tmp_path / "trainer_test.py").read_text()
    assert [d for r in check(tmp_path) for d in r.diagnostics] == []


def test_a_helper_handed_to_a_mapper_returns_through_it(tmp_path):
    """fastai's `VV(x)`: `map_over(x, VV_)` with `def map_over(x, f): return [f(o) for o in x]
    if is_listy(x) else f(x)`, and `VV_` returning `create_variable(x, True)`: the mapper's
    call returns what `VV_` returns, so `VV` is a helper with a volatile result and its callers
    in another file (validate, predict) get their regions."""
    write(tmp_path, {"fastai/__init__.py": "", "fastai/core.py": '''\
        import torch
        from torch.autograd import Variable


        def is_listy(x): return isinstance(x, (list, tuple))
        def map_over(x, f): return [f(o) for o in x] if is_listy(x) else f(x)


        def create_variable(x, volatile, requires_grad=False):
            return Variable(torch.as_tensor(x), requires_grad=requires_grad, volatile=volatile)


        def V(x, requires_grad=False):
            return map_over(x, lambda o: create_variable(o, False, requires_grad=requires_grad))


        def VV_(x):
            return create_variable(x, True)


        def VV(x):
            return map_over(x, VV_)
        ''', "fastai/model.py": '''\
        from .core import V, VV


        def predict_batch(m, x):
            return m(VV(x))


        def validate(stepper, dl, metrics):
            res = []
            for x, y in iter(dl):
                preds, l = stepper.evaluate(VV(x), VV(y))
                res.append([f(preds.data, y) for f in metrics])
            return res


        def fit_batch(m, opt, x, y):
            loss = (m(V(x)) - V(y)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        '''})
    fix(tmp_path)
    model = (tmp_path / "fastai/model.py").read_text()
    assert "@torch.no_grad()\ndef predict_batch(" in model, model
    assert with_blocks(model) == [("torch.no_grad()", 14)], model
    assert "volatile" not in (tmp_path / "fastai/core.py").read_text()
    assert [d for r in check(tmp_path) for d in r.diagnostics] == []


STAR_EXPORTER = '''\
import torch
import torch.nn as nn
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def predict(model, x):
    return model(Variable(x, volatile=True))
'''




@pytest.mark.parametrize("keeps", [True, False], ids=["importer-uses-Variable", "importer-does-not"])
def test_a_star_imported_module_keeps_variable_while_a_notebook_uses_it(tmp_path, keeps):
    """`from main import *` in a notebook that calls `Variable`: main.py's import of it must
    stay, or the notebook raises NameError (issue 22). A notebook that does not use it does
    not hold the import back."""
    (tmp_path / ".git").mkdir()
    use = "x = Variable(torch.randn(3, 4))\n" if keeps else "x = torch.randn(3, 4)\n"
    write(tmp_path, {"main.py": STAR_EXPORTER,
                     "demo.ipynb": code_notebook("from main import *\n", "model = Net()\n" + use + "print(model(x))\n")})
    fix(tmp_path)
    fixed = (tmp_path / "main.py").read_text()
    assert "volatile" not in fixed and "@torch.no_grad()" in fixed
    assert ("from torch.autograd import Variable" in fixed) is keeps


def test_a_star_importing_script_is_checked_and_fixed_and_runs(tmp_path):
    """A .py file that star-imports main and calls `Variable` is a candidate (its `Variable`
    resolves through main), gets its VF110, and runs after the fix."""
    torch = pytest.importorskip("torch")  # noqa: F841
    import subprocess
    import sys

    (tmp_path / ".git").mkdir()
    write(tmp_path, {"main.py": STAR_EXPORTER,
                     "script.py": "from main import *\n\nmodel = Net()\ny = predict(model, Variable(torch.randn(2, 4)))\n"
                                  "print(y.requires_grad)\n"})
    results = check(tmp_path)
    codes = sorted((Path(r.path).name, d.code) for r in results for d in r.diagnostics)
    assert codes == [("main.py", "VF101"), ("script.py", "VF110")]
    fix(tmp_path, unsafe=False)
    assert "Variable" not in (tmp_path / "script.py").read_text()
    done = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("reexport", ["from .net import *", "from models.net import *"])
def test_a_star_import_of_a_package_that_star_imports_its_module(tmp_path, reexport):
    """`from models import *` where `models/__init__.py` star-imports `net.py`, which imports
    torch and `Variable` (a helper's fresh tree, a facial-expression classifier): `Variable`
    resolves through both star imports, so its calls are torch's (safe fixes, VF110 reported),
    and the script runs after plain `fix` without any `Variable` left."""
    torch = pytest.importorskip("torch")  # noqa: F841
    import subprocess
    import sys

    (tmp_path / ".git").mkdir()
    write(tmp_path, {"models/__init__.py": reexport + "\n",
                     "models/net.py": """\
                         import torch
                         import torch.nn as nn
                         from torch.autograd import Variable


                         class Net(nn.Module):
                             def __init__(self):
                                 super(Net, self).__init__()
                                 self.fc = nn.Linear(4, 3)

                             def forward(self, x):
                                 return self.fc(x)
                         """,
                     "main.py": """\
                         from models import *

                         torch.manual_seed(0)
                         net = Net()
                         x = torch.randn(2, 4)
                         y = torch.LongTensor([0, 2])
                         inputs, targets = Variable(x, volatile=True), Variable(y)
                         out = net(inputs)
                         print(out.requires_grad, targets.tolist())
                         """})
    results = check(tmp_path)
    found = sorted((Path(r.path).name, d.code, d.fix.applicability.value if d.fix else None)
                   for r in results for d in r.diagnostics)
    assert found == [("main.py", "VF101", "safe"), ("main.py", "VF110", "safe")]
    fix(tmp_path, unsafe=False)
    assert "Variable" not in (tmp_path / "main.py").read_text()
    done = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False [0, 2]"


@pytest.mark.parametrize(("listed", "resolves"), [('["Net", "Variable", "torch"]', True), ('["Net"]', False)])
def test_a_star_import_binds_what_all_lists(tmp_path, listed, resolves):
    """A module's `__all__` is all a star import of it binds: `Variable` resolves through the
    package only when `net.py` lists it."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, {"models/__init__.py": "from .net import *\n",
                     "models/net.py": "import torch\nfrom torch.autograd import Variable\n\n__all__ = " + listed
                                      + "\n\n\nclass Net(torch.nn.Module):\n    pass\n",
                     "main.py": "import torch\nfrom models import *\n\nx = Variable(torch.ones(2), volatile=True)\n"})
    [vf101] = [d for r in check(tmp_path) for d in r.diagnostics if d.code == "VF101"]
    assert (vf101.note is None or "does not resolve" not in vf101.note) == resolves, vf101.note


def test_an_import_nothing_used_stays_when_only_another_rule_fixes_the_file(tmp_path):
    """utils.py imports `Variable` for the script that star-imports it and uses it nowhere
    itself. A run of VF403 alone never reads the script (nothing in it can hold a VF403
    finding), so it cannot see the star import: the fix of utils.py must not drop an import
    its own fixes did not leave unused, or the script raises NameError (found by a helper on
    2026-11-27). The script runs after the fix and gives the gradient 0.3 gave."""
    torch = pytest.importorskip("torch")  # noqa: F841
    import subprocess
    import sys

    (tmp_path / ".git").mkdir()
    write(tmp_path, {
        "utils.py": "import torch\nfrom torch.autograd import Variable\n\n\ndef penalty_step(w):\n"
                    "    one = torch.FloatTensor([1])\n    (w * 2).mean().backward(one)\n",
        "train.py": "import torch\nfrom utils import *\n\nw = Variable(torch.ones(3), requires_grad=True)\n"
                    "penalty_step(w)\nprint(w.grad.tolist())\n"})
    results = run([str(tmp_path)], config=Config(select=("VF403",)),
                  options=RunOptions(mode="fix", use_cache=False))
    assert [Path(r.path).name for r in results if r.changed] == ["utils.py"]
    fixed = (tmp_path / "utils.py").read_text()
    assert "one = torch.tensor(1, dtype=torch.float)" in fixed and "from torch.autograd import Variable" in fixed
    done = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0.6666666865348816, 0.6666666865348816, 0.6666666865348816]"


SHIMS = {
    "fastai": '''\
        import contextlib
        from distutils.version import LooseVersion
        from .torch_imports import *

        IS_TORCH_04 = LooseVersion(torch.__version__) >= LooseVersion('0.4')


        def no_grad_context(): return torch.no_grad() if IS_TORCH_04 else contextlib.suppress()
    ''',
    "fairseq": '''\
        import contextlib

        import torch


        def no_grad_context(condition=True):
            if hasattr(torch, 'no_grad') and condition:
                return torch.no_grad()
            # no-op context manager
            return contextlib.ExitStack()
    ''',
    "contextmanager": '''\
        from contextlib import contextmanager

        import torch


        @contextmanager
        def no_grad_context():
            with torch.no_grad():
                yield
    ''',
}

SHIM_CALLER = '''\
    import torch
    from torch.autograd import Variable
    {imports}


    def validate(model, batches):
        losses = []
        with {call}():
            for x, y in batches:
                preds = model(Variable(x, volatile=True))
                losses.append(float((preds - y).abs().mean()))
        return losses
'''


@pytest.mark.parametrize("shape", sorted(SHIMS))
@pytest.mark.parametrize("imports, call", [
    ("from .core import *", "no_grad_context"),
    ("from .core import no_grad_context", "no_grad_context"),
    ("from .core import no_grad_context as ngc", "ngc"),
    ("from . import core", "core.no_grad_context"),
    ("from pkg import core", "core.no_grad_context"),
])
def test_a_grad_mode_function_of_another_file_covers_its_with_block(tmp_path, shape, imports, call):
    """fastai's star-imported `no_grad_context()` and fairseq's `utils.maybe_no_grad()`: the
    code inside their `with` is covered, so the fix only unwraps (it nested a new region)."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/torch_imports.py": "import torch\n",
                     "pkg/core.py": SHIMS[shape], "pkg/model.py": SHIM_CALLER.format(imports=imports, call=call)})
    (tmp_path / ".git").mkdir()
    assert [(Path(r.path).name, d.code, d.note) for r in check(tmp_path) for d in r.diagnostics] == \
        [("model.py", "VF101", "already inside a grad-disabled region")]
    fix(tmp_path)
    fixed = (tmp_path / "pkg/model.py").read_text()
    assert "preds = model(x)" in fixed
    assert [header for header, _ in with_blocks(fixed)] == [f"{call}()"]


def test_a_grad_mode_function_whose_condition_is_false_is_no_region(tmp_path):
    write(tmp_path, {"core.py": SHIMS["fairseq"],
                     "main.py": SHIM_CALLER.format(imports="import core", call="core.no_grad_context")
                     .replace("core.no_grad_context()", "core.no_grad_context(False)")})
    (tmp_path / ".git").mkdir()
    fix(tmp_path)
    assert [h for h, _ in with_blocks((tmp_path / "main.py").read_text())] == \
        ["core.no_grad_context(False)", "torch.no_grad()"]


def test_a_helpers_calls_under_a_grad_mode_function_of_its_file_let_it_unwrap(tmp_path):
    """airbus: fastai/model.py calls core.py's `VV(x)` (volatile) inside core.py's own
    `no_grad_context()`: the calls are covered, so the helper is unwrapped and no region added."""
    core = (textwrap.dedent(SHIMS["fastai"])
            + "\n\ndef create_variable(x, volatile): return Variable(x, volatile=volatile)"
            "\n\n\ndef VV(x): return create_variable(x, True)\n").replace(
        "from .torch_imports import *", "from .torch_imports import *\nfrom torch.autograd import Variable")
    caller = '''\
        from .core import *


        def validate_next(stepper, val_iter):
            with no_grad_context():
                x, y = val_iter.next()
                preds, loss = stepper.evaluate(VV(x), VV(y))
            return loss
    '''
    write(tmp_path, {"pkg/__init__.py": "", "pkg/torch_imports.py": "import torch\n", "pkg/core.py": core,
                     "pkg/model.py": caller})
    (tmp_path / ".git").mkdir()
    assert [(d.code, d.location.row) for d in check(tmp_path)[0].diagnostics] == [("VF103", 12)]
    fix(tmp_path)
    assert (tmp_path / "pkg/core.py").read_text().endswith(
        "def create_variable(x): return x\n\n\ndef VV(x): return create_variable(x)\n")
    assert (tmp_path / "pkg/model.py").read_text() == textwrap.dedent(caller)
    assert [d for r in check(tmp_path) for d in r.diagnostics] == []


def test_grad_mode_functions_come_from_the_cache_and_follow_their_file(tmp_path, monkeypatch):
    """The facts of a grad-mode function are cached by content: a warm run reads none of
    them again, and editing the function (now no region) changes what the caller gets."""
    import volfix.project.index as project

    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"core.py": SHIMS["fairseq"],
                     "main.py": SHIM_CALLER.format(imports="import core", call="core.no_grad_context")})
    (tmp_path / ".git").mkdir()
    cold = summary(run([str(tmp_path)], config=Config(), options=RunOptions(mode="check")))
    assert cold == [("main.py", "VF101", 10, "already inside a grad-disabled region")]
    monkeypatch.setattr(project, "file_shims", refuse)
    monkeypatch.setattr(project, "shims_called", refuse)
    assert summary(run([str(tmp_path)], config=Config(), options=RunOptions(mode="check", jobs=1))) == cold
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "core.py").write_text(textwrap.dedent(SHIMS["fairseq"]).replace(" and condition", " and not condition"))
    warm = summary(run([str(tmp_path)], config=Config(), options=RunOptions(mode="check")))
    assert warm == [("main.py", "VF101", 10, "")]


MAKE_VARIABLE = '''\
import torch
from torch.autograd import Variable


def make_variable(tensor, volatile=False):
    if torch.cuda.is_available():
        tensor = tensor.cuda()
    return Variable(tensor, volatile=volatile)
'''

EVAL_TGT = '''\
import torch.nn as nn

from utils import make_variable


def eval_tgt(encoder, classifier, data_loader):
    loss = 0
    criterion = nn.CrossEntropyLoss()
    for (images, labels) in data_loader:
        images = make_variable(images, volatile=True)
        labels = make_variable(labels)
        preds = classifier(encoder(images))
        loss += criterion(preds, labels).data[0]
    return loss / len(data_loader)
'''


def test_a_call_that_only_makes_the_value_converges_and_keeps_the_signature_whole(tmp_path):
    """pytorch-adda: `images = make_variable(images, volatile=True)` only makes the value, so
    its region starts below the call. A plain run writes that region and then unwraps the
    helper (the call's value is only read under it); before, the helper waited for a region
    around the call line forever. `--unsafe-fixes` drops the parameter and the argument
    together: the call no longer passes a keyword the helper lost (a TypeError before)."""
    write(tmp_path, {"utils.py": MAKE_VARIABLE, "evaluate.py": EVAL_TGT})
    fix(tmp_path, unsafe=False)
    assert "Variable(" not in (tmp_path / "utils.py").read_text()
    assert with_blocks((tmp_path / "evaluate.py").read_text()) == [("torch.no_grad()", 14)]
    assert all(not r.changed for r in fix(tmp_path, unsafe=False).values())
    fix(tmp_path, unsafe=True)
    assert "volatile" not in (tmp_path / "utils.py").read_text()
    assert "volatile" not in (tmp_path / "evaluate.py").read_text()
    assert [d.code for r in check(tmp_path) for d in r.diagnostics] == []


TO_VARIABLE = '''\
import torch
from torch.autograd import Variable


def to_variable(batch, cuda=False, volatile=False):
    if cuda:
        batch = batch.cuda()
    return Variable(batch, volatile=volatile)
'''

ENGINES = '''\
from utils import to_variable


def _prepare_batch(batch, cuda, volatile=False):
    x, y = batch
    x = to_variable(x, cuda=cuda, volatile=volatile)
    y = to_variable(y, cuda=cuda, volatile=volatile)
    return x, y


def evaluate(model, batches):
    total = 0
    for batch in batches:
        x, y = _prepare_batch(batch, False, volatile=True)
        total += (model(x) - y).abs().sum().item()
    return total
'''


def test_a_parameter_other_files_pass_is_kept(tmp_path):
    """pytorch/ignite: `to_variable(x, cuda=cuda, volatile=volatile)` in `engines.py` hands its
    own flag on to `utils.py`'s helper. Once the helper is unwrapped its `volatile` parameter
    is dead, but dropping it made those calls raise a TypeError; the parameter stays while
    another file passes it, and VF105 says which calls do."""
    write(tmp_path, {"utils.py": TO_VARIABLE, "engines.py": ENGINES})
    fix(tmp_path, unsafe=True)
    fix(tmp_path, unsafe=True)
    helper = (tmp_path / "utils.py").read_text()
    assert "Variable(" not in helper and "volatile=False" in helper
    assert "volatile=volatile" in (tmp_path / "engines.py").read_text()
    notes = [d.note for r in check(tmp_path) if r.path.endswith("utils.py") for d in r.diagnostics]
    # the calls' lines after the fix added `import torch` to engines.py
    assert any("calls in other files pass it (" in (n or "") and "engines.py:7, " in n and "engines.py:8)" in n
               for n in notes), notes


# Issue 22: torchtext's `test/common/torchtext_test_case.py` asserts `batch.text.volatile is not
# train` and imports nothing of torch; the tests that call it do.
TORCHLESS_HELPER = '''\
def verify_numericalized(example, train=True):
    for row in example.t():
        assert row.volatile is not train
'''


@pytest.mark.parametrize("layout", ["whole", "helper alone"])
def test_a_volatile_read_in_a_file_without_torch_counts_in_a_torch_project(tmp_path, layout):
    write(tmp_path, {
        "setup.py": "",
        "test/common/case.py": TORCHLESS_HELPER,
        "test/data/test_field.py": "import torch\nfrom ..common.case import verify_numericalized\n",
    })
    target = tmp_path if layout == "whole" else tmp_path / "test" / "common" / "case.py"
    results = run([str(target)], config=Config(), options=RunOptions(mode="check", use_cache=False))
    assert [entry[:3] for entry in summary(results)] == [("case.py", "VF201", 3)]


def test_a_volatile_write_in_a_file_whose_comments_name_torch_counts_in_a_torch_project(tmp_path):
    """w121211/pytorch-seq2seq's trainer: `src_seq.volatile = True` on a torchtext batch, no
    import of torch in the file, but "torch" in its text; the file was neither a torch file
    nor one the project was asked about, and `check` read clean."""
    write(tmp_path, {
        "setup.py": "",
        "trainer.py": "# batches come from torchtext\n\n\ndef evaluate(model, src_seq):\n"
                      "    src_seq.volatile = True\n    return model(src_seq)\n",
        "model.py": "import torch\n",
    })
    results = run([str(tmp_path)], config=Config(), options=RunOptions(mode="check", use_cache=False))
    assert [entry[:3] for entry in summary(results)] == [("trainer.py", "VF202", 5)]


@pytest.mark.parametrize("other", ["import numpy as np\n", "from pycparser import c_ast\n"])
def test_a_volatile_attribute_in_a_project_without_torch_is_not_a_tensor_flag(tmp_path, other):
    write(tmp_path, {"setup.py": "", "pkg/case.py": TORCHLESS_HELPER, "pkg/other.py": other})
    results = run([str(tmp_path)], config=Config(), options=RunOptions(mode="check", use_cache=False))
    assert summary(results) == []
    assert {Path(r.path).name for r in results} >= {"case.py"}  # analysed, and nothing found


def test_the_torch_fact_follows_the_project_in_a_warm_run(tmp_path, monkeypatch):
    """The links key holds every file of the project: a file that stops importing torch
    takes the finding away in the next cached run."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"setup.py": "", "case.py": TORCHLESS_HELPER, "model.py": "import torch\n"})
    options = RunOptions(mode="check")
    assert [entry[1] for entry in summary(run([str(tmp_path)], config=Config(), options=options))] == ["VF201"]
    assert any((tmp_path / ".volfix_cache").rglob("*.json"))
    # warm and unchanged: the same answer from the cache
    assert [entry[1] for entry in summary(run([str(tmp_path)], config=Config(), options=options))] == ["VF201"]
    (tmp_path / "model.py").write_text("import numpy\n", encoding="utf-8")
    assert summary(run([str(tmp_path)], config=Config(), options=options)) == []


# jihunchoi/unsupervised-treelstm's `utils/helper.py`: the flag is a required positional
# parameter; `--unsafe-fixes` dropped the callers' `volatile=True` and kept the parameter.
REQUIRED_HELPER = '''\
from torch.autograd import Variable


def wrap_with_variable(tensor, volatile, gpu):
    if gpu > -1:
        return Variable(tensor.cuda(gpu), volatile=volatile)
    return Variable(tensor, volatile=volatile)
'''
REQUIRED_CALLER = '''\
import torch
from utils.helper import wrap_with_variable


def evaluate(model, batches):
    correct = 0
    for x, y in batches:
        x = wrap_with_variable(x, volatile=True, gpu=-1)
        label = wrap_with_variable(y, volatile=True, gpu=-1)
        correct += torch.eq(label, model(x).max(1)[1]).long().sum().data[0]
    return correct
'''


def _signature_fits(helper: str, caller: str) -> bool:
    """Every call of `wrap_with_variable` in `caller` binds to the def in `helper` (no TypeError)."""
    import inspect

    namespace: dict = {}
    exec(compile("\n".join(line for line in helper.splitlines() if not line.startswith(("from", "import"))),
                 "helper", "exec"), namespace)
    signature = inspect.signature(namespace["wrap_with_variable"])
    calls = [node for node in ast.walk(ast.parse(caller)) if isinstance(node, ast.Call)
             and getattr(node.func, "id", None) == "wrap_with_variable"]
    assert calls
    for call in calls:
        signature.bind(*range(len(call.args)), **{k.arg: None for k in call.keywords})  # raises TypeError
    return True


def test_a_required_volatile_parameter_keeps_its_arguments_through_two_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # paths in notes as the user's
    write(tmp_path, {"setup.py": "", "utils/__init__.py": "", "utils/helper.py": REQUIRED_HELPER,
                     "evaluate.py": REQUIRED_CALLER})
    for _ in range(2):
        fix(tmp_path)
    helper = (tmp_path / "utils" / "helper.py").read_text()
    caller = (tmp_path / "evaluate.py").read_text()
    assert "Variable" not in helper and "with torch.no_grad():" in caller  # migrated
    assert _signature_fits(helper, caller)
    notes = {(entry[0], entry[2]): entry[3] for entry in summary(check(tmp_path))}
    # `check` does not read clean: both ends of the flag are named
    assert "takes `volatile` without a default" in notes[("evaluate.py", 9)]
    assert "calls in other files pass it (evaluate.py:9, evaluate.py:10)" in notes[("helper.py", 1)]


def test_a_notebook_passing_volatile_keeps_the_helper_parameter_and_its_fix_unsafe(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    helper = "from torch.autograd import Variable\n\n\ndef variable(x, volatile=False):\n" \
             "    return Variable(x, volatile=volatile)\n"
    caller = "import torch\nfrom utils import variable\n\n\ndef evaluate(model, x):\n" \
             "    return model(variable(x, volatile=True))\n"
    write(tmp_path, {"setup.py": "", "utils.py": helper, "evaluate.py": caller,
                     "demo.ipynb": code_notebook("import torch\nfrom utils import variable",
                                             "img = variable(torch.ones(3), volatile=True)")})
    safe = summary(check(tmp_path))
    vf103 = next(e for e in safe if e[1] == "VF103")
    assert vf103[3].startswith("unsafe fix: `variable()` is also used where volfix cannot follow it "
                               "(demo.ipynb:cell 2:1)")
    fix(tmp_path)
    fixed = (tmp_path / "utils.py").read_text()
    assert "def variable(x, volatile=False):" in fixed and "Variable" not in fixed
    notes = [e[3] for e in summary(check(tmp_path)) if e[0] == "utils.py"]
    assert any("calls in other files pass it (demo.ipynb:cell 2:1)" in n for n in notes)


def test_a_notebook_calling_its_own_def_of_the_name_is_no_caller_of_the_helper(tmp_path, monkeypatch):
    """fastai-dl2's `Example.ipynb` defines its own `variable(x, volatile=False)` and calls it:
    the helper of `utils.py` keeps its safe unwrap."""
    monkeypatch.chdir(tmp_path)
    helper = "from torch.autograd import Variable\n\n\ndef variable(x, volatile=False):\n" \
             "    return Variable(x, volatile=volatile)\n"
    caller = "import torch\nfrom utils import variable\n\n\ndef evaluate(model, x):\n" \
             "    return model(variable(x, volatile=True))\n"
    own = "from torch.autograd import Variable\n\ndef variable(x, volatile=False):\n" \
          "    return Variable(x, volatile=volatile)"
    write(tmp_path, {"setup.py": "", "utils.py": helper, "evaluate.py": caller,
                     "demo.ipynb": code_notebook("import torch", own, "img = variable(torch.ones(3), volatile=True)")})
    vf103 = [e for e in summary(check(tmp_path)) if e[0] == "utils.py" and e[1] == "VF103"]
    assert len(vf103) == 1 and "demo.ipynb" not in vf103[0][3] and not vf103[0][3].startswith("unsafe")
