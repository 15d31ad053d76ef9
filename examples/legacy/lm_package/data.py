"""Batching for the language model: the research-script layout, imported by main.py as
`from data import get_batch`.

Written the PyTorch 0.3 way: evaluation batches are volatile.
"""
from torch.autograd import Variable

bptt = 4


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[:nbatch * bsz].view(bsz, -1).t().contiguous()


def get_batch(source, i, evaluation=False):
    seq_len = min(bptt, len(source) - 1 - i)
    data = Variable(source[i:i + seq_len], volatile=evaluation)
    target = Variable(source[i + 1:i + 1 + seq_len].view(-1))
    return data, target
