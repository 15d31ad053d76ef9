"""A 0.3-era evaluation script whose readings are 0-dim only by the ranks of what they index.

Each `.data[0]` below gave a Python number in 0.3, when indexing a 1-dim Variable gave shape
(1,); since 0.4 each value is 0-dim and the read raises IndexError. Nothing here is a loss or
a reduction over everything: the shapes come from the steps between. A pointer-cache
evaluation (as in language-model repositories) picks one probability out of a row of
`softmax(output.view(-1, ntokens))`, mixed with a cache distribution made of one-hot rows; a
beam search re-sorts its scores with `topk` and walks a row of the order; a simulator
returns shape-(1,) times that `torch.cat` joins, then reads each one and their spread. A
REINFORCE baseline starts as `torch.zeros(1)` and becomes a decayed mean of rewards; a value
loss gets its weight decay added in place, so it stays 0-dim whatever scales it. A TRPO-style
line search reads the loss function it is passed, `f(True).data[0]`.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

WINDOW, THETA, LAMBDAH = 5, 1.0, 0.3
BETA = 0.9


class LanguageModel(nn.Module):
    def __init__(self, ntokens, nhid):
        super(LanguageModel, self).__init__()
        self.embed = nn.Embedding(ntokens, nhid)
        self.decoder = nn.Linear(nhid, ntokens)

    def forward(self, x):
        hidden = torch.tanh(self.embed(x))
        return self.decoder(hidden), hidden


def one_hot(idx, size):
    a = np.zeros((1, size), np.float32)
    a[0][idx] = 1
    return Variable(torch.from_numpy(a))


def pointer_evaluate(model, batches, ntokens):
    total = 0
    history = None
    hidden_history = None
    for data, target in batches:
        output, hidden = model(Variable(data, volatile=True))
        targets = Variable(target.view(-1), volatile=True)
        output_flat = output.view(-1, ntokens)
        rnn_out = hidden.view(-1, hidden.size(-1))
        start = len(history) if history is not None else 0
        if history is None:
            history = torch.cat([one_hot(t.data[0], ntokens) for t in targets])
        else:
            history = torch.cat([history, torch.cat([one_hot(t.data[0], ntokens) for t in targets])])
        if hidden_history is None:
            hidden_history = Variable(rnn_out.data)
        else:
            hidden_history = torch.cat([hidden_history, Variable(rnn_out.data)], 0)
        probs = F.softmax(output_flat, 1)
        for idx, vocab in enumerate(probs):
            p = vocab
            if start + idx > WINDOW:
                valid = history[start + idx - WINDOW:start + idx]
                valid_hidden = hidden_history[start + idx - WINDOW:start + idx]
                logits = torch.mv(valid_hidden, rnn_out[idx])
                attention = F.softmax(THETA * logits, 0).view(-1, 1)
                cache = (attention.expand_as(valid) * valid).sum(0).squeeze()
                p = LAMBDAH * cache + (1 - LAMBDAH) * vocab
            target_p = p[targets[idx].data]
            total += (-torch.log(target_p)).data[0]
        history = history[-WINDOW:]
        hidden_history = hidden_history[-WINDOW:]
    return total / len(batches)


def rerank(model, x, b, k):
    output, _ = model(Variable(x, volatile=True))
    scores = F.log_softmax(output, 1)[:, 0]
    sorted_score, _ = scores.view(b, k).topk(k)
    s = sorted_score.clone()
    s, order = s.topk(k)
    ranked = [[j.data[0] for j in order[b_idx, :]] for b_idx in range(b)]
    return ranked, s


def simulate(mu, steps=10, dt=0.1):
    t = Variable(torch.zeros(1))
    velocity = Variable(torch.zeros(1))
    acceleration = Variable(torch.Tensor([2.0])) - Variable(torch.Tensor([1.5])) * mu
    for _ in range(steps):
        velocity += acceleration * dt
        t += dt
    return t + 0.01 * velocity


def measure(mus):
    observed = torch.cat([simulate(Variable(torch.Tensor([mu]))) for mu in mus])
    mean = np.mean([t.data[0] for t in observed])
    spread = torch.std(observed, 0)
    return float(mean), spread.data[0]


def baselines(reward_batches):
    baseline = torch.zeros(1)
    averages = []
    for batch_id, rewards in enumerate(reward_batches):
        reward = Variable(rewards)
        if batch_id == 0:
            baseline = reward.mean()
        else:
            baseline = (baseline * BETA) + ((1. - BETA) * reward.mean())
        baseline = baseline.detach()
        averages.append(baseline.data[0])
    return averages


def value_loss(weights, states, targets, l2_reg):
    loss = (Variable(states).mv(weights) - Variable(targets)).pow(2).mean()
    for param in [weights]:
        loss += param.pow(2).sum() * l2_reg
    return loss.data[0]


def line_search(f, x, fullstep, max_backtracks=4):
    fval = f(True).data[0]
    for stepfrac in [.5 ** k for k in range(max_backtracks)]:
        x_new = x + stepfrac * fullstep
        fval_new = f(True, x_new).data[0]
        if fval - fval_new > 0:
            return True, x_new
    return False, x


def policy_step(states, x, fullstep):
    def get_loss(evaluating=False, params=None):
        params = x if params is None else params
        return (Variable(states).mv(params) ** 2).mean()
    return line_search(get_loss, x, fullstep)


def run():
    torch.manual_seed(11)
    ntokens = 7
    model = LanguageModel(ntokens, 4)
    batches = [(torch.LongTensor(3, 2).random_(0, ntokens), torch.LongTensor(3, 2).random_(0, ntokens))
               for _ in range(3)]
    pointer = pointer_evaluate(model, batches, ntokens)
    ranked, scores = rerank(model, torch.LongTensor(6).random_(0, ntokens), 2, 3)
    mean, spread = measure([0.1, 0.4, 0.7])
    averages = baselines([torch.rand(4) for _ in range(3)])
    weights = Variable(torch.randn(3), requires_grad=True)
    decayed = value_loss(weights, torch.randn(5, 3), torch.randn(5), 0.01)
    accepted, stepped = policy_step(torch.randn(5, 3), torch.randn(3), -0.1 * torch.randn(3))
    return {"pointer": pointer, "ranked": ranked, "scores": scores, "mean": mean, "spread": spread,
            "averages": averages, "decayed": decayed, "accepted": accepted, "stepped": stepped}


if __name__ == "__main__":
    print(run())
