"""Train and evaluate the language model split over data.py / model.py, imported as
sibling modules the way research scripts do.

Written the PyTorch 0.3 way: evaluate() asks get_batch() for volatile batches.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable

import model
from data import batchify, bptt, get_batch
from metrics import accuracy

ntokens, lr = 16, 0.5


def repackage_hidden(h):
    return Variable(h.data)


def train(lm, criterion, train_data):
    lm.train()
    hidden = lm.init_hidden(train_data.size(1))
    losses = []
    for i in range(0, train_data.size(0) - 1, bptt):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        lm.zero_grad()
        output, hidden = lm(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        for p in lm.parameters():
            p.data.add_(-lr * p.grad.data)
        losses.append(float(loss.data))
    return losses


def evaluate(lm, criterion, data_source):
    lm.eval()
    total_loss, outputs, hits = 0.0, [], []
    hidden = lm.init_hidden(data_source.size(1))
    for i in range(0, data_source.size(0) - 1, bptt):
        data, targets = get_batch(data_source, i, evaluation=True)
        output, hidden = lm(data, hidden)
        total_loss += len(data) * float(criterion(output, targets).data)
        outputs.append(output)
        hits.append(accuracy(output, targets))
    return total_loss / len(data_source), torch.cat(outputs), hits


def run():
    torch.manual_seed(13)
    corpus = torch.LongTensor(60).random_(0, ntokens)
    lm, criterion = model.RNNModel(ntokens, 6, 10), nn.CrossEntropyLoss()
    losses = train(lm, criterion, batchify(corpus[:40], 4))
    val_loss, val_output, val_accuracy = evaluate(lm, criterion, batchify(corpus[40:], 2))
    return {"train_losses": losses, "val_loss": val_loss, "val_output": val_output,
            "val_accuracy": val_accuracy,
            "encoder_grad": lm.encoder.weight.grad, "decoder_grad": lm.decoder.weight.grad}
