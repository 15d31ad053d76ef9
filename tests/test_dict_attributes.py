"""VF405 across files: an element of a plain tensor keying a dict another file of the project
builds (`Links.dict_attributes`, `volfix.project.dict_attributes`).

Found by a helper on floydhub-era chatbots (pytorch_chatbot's `train.py` decodes with
`data_loader.output_lang.index2word[ni]`; the `Lang` class that builds `self.index2word = {0:
"SOS", 1: "EOS"}` lives in `datasets/data_loader.py`): `check` read clean, and the fixed
program's greedy decoder stopped at its first word with a `KeyError` on torch 2.x. The
programs run: the original under the 0.3 runtime, the fixed one under torch 2.13."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from volfix.files.prefilter import ELEMENT_KEY, attribute_keys
from volfix.model import Applicability
from volfix.project.dict_attributes import project_dicts
from conftest import project_tree, run_results

VOCAB = '''\
    class Lang(object):
        def __init__(self, name):
            self.name = name
            self.word2index = {}
            self.index2word = {0: "SOS", 1: "EOS"}
            self.n_words = 2

        def add_word(self, word):
            self.word2index[word] = self.n_words
            self.index2word[self.n_words] = word
            self.n_words += 1
    '''

MAIN = '''\
    import torch
    from torch.autograd import Variable

    from vocab import Lang


    class Loader(object):
        def __init__(self):
            self.output_lang = Lang("eng")
            for word in ["cat", "dog"]:
                self.output_lang.add_word(word)


    def evaluate(data_loader, logits):
        decoded_words = []
        for di in range(logits.size(0)):
            decoder_output = Variable(logits[di].unsqueeze(0), volatile=True)
            topv, topi = decoder_output.data.topk(1)
            ni = topi[0][0]
            if ni == 1:
                decoded_words.append("<EOS>")
                break
            decoded_words.append(data_loader.output_lang.index2word[ni])
        return decoded_words


    logits = torch.Tensor([[0, 0, 5, 1], [0, 0, 1, 5], [0, 9, 0, 0]])
    print(evaluate(Loader(), logits))
    '''


def _run(root, *args):
    return subprocess.run([sys.executable, *args, "main.py"], cwd=root, capture_output=True, text=True, timeout=240)


def test_an_element_keying_another_files_dict_is_found_and_fixed(tmp_path):
    root = project_tree(tmp_path / "repo", {"vocab.py": VOCAB, "main.py": MAIN})
    (found,) = [d for d in run_results(root, "check")["main.py"].diagnostics if d.code == "VF405"]
    assert found.fix is not None and found.fix.applicability == Applicability.SAFE
    assert "`data_loader.output_lang.index2word`" in found.message
    run_results(root, "fix")
    fixed = (root / "main.py").read_text()
    assert "decoded_words.append(data_loader.output_lang.index2word[ni.item()])" in fixed
    assert (root / "vocab.py").read_text() == textwrap.dedent(VOCAB)


def test_the_fixed_program_decodes_as_0_3_did(tmp_path):
    pytest.importorskip("torch")
    root = project_tree(tmp_path / "repo", {"vocab.py": VOCAB, "main.py": MAIN})
    legacy = _run(root, "-m", "volfix.legacy")
    assert legacy.returncode == 0, legacy.stderr
    assert legacy.stdout == "['cat', 'dog', '<EOS>']\n"
    broken = _run(root)  # what `check` read clean before: the tensor finds no key
    assert broken.returncode != 0 and "KeyError" in broken.stderr
    run_results(root, "fix")
    fixed = _run(root)
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout == legacy.stdout


@pytest.mark.parametrize("other", [
    "class Table(object):\n    def __init__(self):\n        self.index2word = ['SOS', 'EOS']\n",
    "def load(lang, words):\n    lang.index2word += words\n",
    "def swap(lang, pairs):\n    lang.word2index, lang.index2word = pairs\n",
])
def test_an_attribute_another_file_assigns_otherwise_is_not_a_dict(tmp_path, other):
    root = project_tree(tmp_path / "repo", {"vocab.py": VOCAB, "main.py": MAIN, "other.py": other})
    assert [d.code for d in run_results(root, "check")["main.py"].diagnostics if d.code == "VF405"] == []


def test_a_file_assigning_the_attribute_itself_is_read_alone(tmp_path):
    # `main.py` builds its own `index2word` as a list: the project's dict is another object's
    main = MAIN.replace('            self.output_lang = Lang("eng")\n',
                        '            self.output_lang = Lang("eng")\n'
                        '            self.output_lang.index2word = ["SOS", "EOS"]\n')
    root = project_tree(tmp_path / "repo", {"vocab.py": VOCAB, "main.py": main})
    assert [d.code for d in run_results(root, "check")["main.py"].diagnostics if d.code == "VF405"] == []


def test_a_warm_run_sees_the_other_file_change(tmp_path, monkeypatch):
    from volfix.run.options import RunOptions
    from volfix.run.runner import run
    from volfix.settings.config import Config

    root = project_tree(tmp_path / "repo", {"vocab.py": VOCAB, "main.py": MAIN})
    monkeypatch.chdir(root)
    options = RunOptions(mode="check")  # the cache: `.volfix_cache/` in the current directory

    def codes():
        (main,) = [r for r in run([str(root)], config=Config(), options=options) if r.path.endswith("main.py")]
        return [d.code for d in main.diagnostics if d.code == "VF405"]

    assert codes() == ["VF405"]
    assert codes() == ["VF405"]  # warm
    assert (root / ".volfix_cache").is_dir()
    (root / "vocab.py").write_text(textwrap.dedent(VOCAB).replace('{0: "SOS", 1: "EOS"}', '["SOS", "EOS"]'))
    assert codes() == []


def test_what_the_bytes_say_an_attribute_is():
    names = frozenset("abcdefgh")
    source = textwrap.dedent('''\
        self.a = {0: "SOS"}
        x.b: Dict[int, str] = collections.OrderedDict()
        self.c = []
        self.d, self.e = {}, {}
        self.f = {}
        self.f += [1]
        self.g = \\
            defaultdict(int)
        self.h = Counter(words)
        json.dump(self.a, out, indent=2)
        if self.c == {}:
            pass
        ''').encode()
    assert project_dicts(names, [source]) == {"a", "b", "g", "h"}
    assert project_dicts(names, [source, b"obj.h = vocab.counts\n"]) == {"a", "b", "g"}


def test_which_attributes_a_file_may_key():
    source = (b"import torch\nni = topi.data[0][0]\nw = data_loader.output_lang.index2word[ni]\n"
              b"if w in self.vocab.stoi:\n    i = vocab.w2i.get(w)\nx = table.rows[topi[0][0]]\ny = z.data[i]\n")
    assert attribute_keys(source) == {"index2word", "stoi", "w2i", "rows"}
    assert ELEMENT_KEY(source)
    assert not ELEMENT_KEY(source.replace(b"index2word[ni]", b"index2word").replace(b"in self.vocab.stoi", b"")
                           .replace(b"vocab.w2i.get(w)", b"0").replace(b"table.rows[topi[0][0]]", b"0"))
