"""How often the language model's first guess is the next token: a module of the project
that never imports torch (main.py hands it the tensors), as research scripts' `utils.py` often
is. Written the PyTorch 0.3 way: the count is read with `.data[0]`.
"""


def accuracy(output, targets):
    _, pred = output.max(1)
    correct = pred.eq(targets)
    return correct.float().sum().data[0] / targets.size(0)
