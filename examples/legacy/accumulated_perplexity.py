"""A 0.3-era language-model script that sums `.data` of its losses and reads the sum with `[0]`.

Evaluation adds `len(data) * criterion(...).data` per chunk and returns `total_loss[0]`
over the length; training adds `raw_loss.data` and logs `total_loss[0]` every few
batches. In 0.3 the sum was a one-element tensor and `[0]` its Python number; since 0.4
it is 0-dim and `[0]` raises IndexError. The file holds no `.data[0]` at all.
"""
import math

import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable


class TinyLM(nn.Module):
    def __init__(self, ntokens, nhid):
        super(TinyLM, self).__init__()
        self.encoder = nn.Embedding(ntokens, nhid)
        self.decoder = nn.Linear(nhid, ntokens)

    def forward(self, data):
        return self.decoder(torch.tanh(self.encoder(data)))


criterion = nn.CrossEntropyLoss()
NTOKENS = 11
BPTT = 4


def batchify(n, bsz):
    return torch.LongTensor(n, bsz).random_(0, NTOKENS)


def evaluate(model, source):
    model.eval()
    total_loss = 0
    for i in range(0, source.size(0) - 1, BPTT):
        seq_len = min(BPTT, source.size(0) - 1 - i)
        data = Variable(source[i:i + seq_len], volatile=True)
        targets = Variable(source[i + 1:i + 1 + seq_len].view(-1))
        output_flat = model(data).view(-1, NTOKENS)
        total_loss += len(data) * criterion(output_flat, targets).data
    return total_loss[0] / len(source)


def train(model, optimizer, source, log_interval=2):
    model.train()
    total_loss = 0
    log = []
    for batch, i in enumerate(range(0, source.size(0) - 1, BPTT)):
        seq_len = min(BPTT, source.size(0) - 1 - i)
        data = Variable(source[i:i + seq_len])
        targets = Variable(source[i + 1:i + 1 + seq_len].view(-1))
        optimizer.zero_grad()
        raw_loss = criterion(model(data).view(-1, NTOKENS), targets)
        raw_loss.backward()
        optimizer.step()
        total_loss += raw_loss.data
        if batch % log_interval == 0 and batch > 0:
            cur_loss = total_loss[0] / log_interval
            log.append(math.exp(cur_loss))
            total_loss = 0
    return log


def run():
    torch.manual_seed(7)
    model = TinyLM(NTOKENS, 6)
    optimizer = optim.SGD(model.parameters(), lr=0.5)
    log = train(model, optimizer, batchify(21, 3))
    val_loss = evaluate(model, batchify(13, 3))
    return {"log": log, "val_loss": val_loss, "ppl": math.exp(val_loss),
            "encoder_grad": model.encoder.weight.grad, "decoder_grad": model.decoder.weight.grad}
