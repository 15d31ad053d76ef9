"""Word-level LSTM language model: truncated-BPTT training and evaluation.

Written the PyTorch 0.3 way: get_batch() makes volatile inputs for evaluation, and
repackage_hidden() detaches the hidden state between chunks.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable

ntokens, bptt, lr = 20, 5, 0.5


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid):
        super(RNNModel, self).__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output.view(-1, self.nhid)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters()).data
        return (Variable(weight.new(1, bsz, self.nhid).zero_()),
                Variable(weight.new(1, bsz, self.nhid).zero_()))


def get_batch(source, i, evaluation=False):
    seq_len = min(bptt, len(source) - 1 - i)
    data = Variable(source[i:i + seq_len], volatile=evaluation)
    target = Variable(source[i + 1:i + 1 + seq_len].view(-1))
    return data, target


def repackage_hidden(h):
    """Wraps hidden states in new Variables, to detach them from their history."""
    if type(h) == Variable:
        return Variable(h.data)
    else:
        return tuple(repackage_hidden(v) for v in h)


def train(model, criterion, train_data):
    model.train()
    hidden = model.init_hidden(train_data.size(1))
    losses = []
    for i in range(0, train_data.size(0) - 1, bptt):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        for p in model.parameters():
            p.data.add_(-lr * p.grad.data)
        losses.append(float(loss.data))
    return losses


def evaluate(model, criterion, data_source):
    model.eval()
    total_loss = 0
    hidden = model.init_hidden(data_source.size(1))
    for i in range(0, data_source.size(0) - 1, bptt):
        data, targets = get_batch(data_source, i, evaluation=True)
        output, hidden = model(data, hidden)
        total_loss += len(data) * criterion(output, targets).data
        hidden = repackage_hidden(hidden)
    return total_loss / len(data_source)


def run():
    torch.manual_seed(6)
    corpus = torch.LongTensor(64).random_(0, ntokens)
    model, criterion = RNNModel(ntokens, 8, 12), nn.CrossEntropyLoss()
    train_data, val_data = corpus[:48].view(16, 3), corpus[48:].view(8, 2)
    losses = train(model, criterion, train_data)
    return {"train_losses": losses, "val_loss": evaluate(model, criterion, val_data),
            "encoder_grad": model.encoder.weight.grad, "decoder_grad": model.decoder.weight.grad}
