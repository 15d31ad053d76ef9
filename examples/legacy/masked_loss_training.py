"""Sequence tagger trained with a padding mask, from the 0.3 -> 0.4 transition.

The labels and the mask were marked volatile "because they never need gradients".
PyTorch 0.3 refused to backpropagate through such a loss; 0.4+ only warns. The volatile
values are plain data inside a training step, so no no-grad region may cover it.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class Tagger(nn.Module):
    def __init__(self, vocab=30, n_tags=5, hidden=16):
        super(Tagger, self).__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.out = nn.Linear(hidden, n_tags)

    def forward(self, tokens):
        return self.out(torch.tanh(self.embed(tokens)))


def train_step(model, optimizer, tokens, tags, lengths):
    mask = (torch.arange(tokens.size(1)).expand_as(tokens) < lengths.unsqueeze(1)).float()
    tokens = Variable(tokens)
    tags = Variable(tags.view(-1), volatile=True)
    mask = Variable(mask.view(-1), volatile=True)
    scores = model(tokens).view(-1, 5)
    loss = (F.cross_entropy(scores, tags, reduce=False) * mask).sum() / mask.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.data)


def run():
    torch.manual_seed(10)
    model = Tagger()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(3):
        tokens = torch.LongTensor(4, 7).random_(0, 30)
        tags = torch.LongTensor(4, 7).random_(0, 5)
        lengths = torch.LongTensor(4).random_(3, 8)
        losses.append(train_step(model, optimizer, tokens, tags, lengths))
    return {"losses": losses, "embed_grad": model.embed.weight.grad,
            "out_grad": model.out.weight.grad, "out_weight": model.out.weight}
