"""The same input gives the same report whatever Python's string hashes are: a note that names
one of several values (`partly_volatile`'s "`x` is volatile on one branch only") named a
different one from run to run, read from sets filled in hash order (rowanz/neural-motifs'
`object_detector.py`). Each run is a fresh interpreter with its own `PYTHONHASHSEED`."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

DETECTOR = '''\
    import torch
    import torch.nn as nn
    from torch.autograd import Variable

    head = nn.Linear(4, 4)


    def detect(boxes, scores, labels, inds, use_gt):
        if use_gt:
            nms_boxes = Variable(boxes, volatile=True)
            nms_scores = Variable(scores, volatile=True)
            nms_labels = Variable(labels, volatile=True)
            nms_inds = Variable(inds, volatile=True)
        else:
            nms_boxes, nms_scores, nms_labels, nms_inds = boxes, scores, labels, inds
        return head(nms_boxes + nms_scores + nms_labels + nms_inds)
    '''


def test_a_note_naming_one_of_several_values_names_the_same_one_under_every_hash_seed(tmp_path):
    path = tmp_path / "detector.py"
    path.write_text(textwrap.dedent(DETECTOR), encoding="utf-8")
    outputs = set()
    for seed in range(6):
        env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        done = subprocess.run([sys.executable, "-m", "volfix", "check", "--no-cache", "--output-format", "json",
                               str(path)], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert "`nms_boxes` is volatile on one branch only" in outputs.pop()
