"""Names that wrap a tensor once per phase (as segmentation and GAN training scripts of 2017
did): `inputs = Variable(images)` in the training loop, `inputs = Variable(images,
volatile=True)` in the validation loop, `inputv` reused for a second value, a closure reading
a wrapped target, and a batch whose CPU copy is still saved after it moved."""
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
critic = nn.Linear(3, 1)
optimizer = torch.optim.SGD(list(model.parameters()) + list(critic.parameters()), lr=0.1)
criterion = nn.CrossEntropyLoss()
train_loader = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]
val_loader = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]
use_cuda = False


def train_and_validate():
    for images, labels in train_loader:
        if use_cuda:
            images = images.cuda()
        inputs = Variable(images)
        targets = Variable(labels)
        outputs = model(inputs)
        optimizer.zero_grad()
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
    val_losses = []
    for images, labels in val_loader:
        inputs = Variable(images, volatile=True)
        targets = Variable(labels, volatile=True)
        outputs = model(inputs)
        val_losses.append(criterion(outputs, targets))
    return val_losses


def critic_step(real, fake_source):
    inputv = Variable(real)
    err_real = critic(model(inputv)).mean()
    fake = Variable(model(Variable(fake_source, volatile=True)).data)
    inputv = fake
    err_fake = critic(inputv).mean()
    optimizer.zero_grad()
    (err_real - err_fake).backward()
    optimizer.step()
    return err_fake


def fit_closure(batch, returns):
    targets = Variable(returns)

    def closure():
        optimizer.zero_grad()
        value_loss = (critic(model(Variable(batch))).squeeze(1) - targets).pow(2).mean()
        value_loss.backward()
        return value_loss

    return optimizer.step(closure)


def save_after_move(batch, saved):
    real = Variable(batch, volatile=True)
    if use_cuda:
        real = real.cuda()
    scores = model(real)
    saved.append(batch)
    return scores


def run():
    val_losses = train_and_validate()
    err_fake = critic_step(torch.randn(6, 4), torch.randn(6, 4))
    closure_loss = fit_closure(torch.randn(6, 4), torch.randn(6))
    saved = []
    scores = save_after_move(torch.randn(2, 4), saved)
    return {"val_loss": val_losses[-1], "err_fake": err_fake, "closure_loss": closure_loss,
            "scores": scores, "saved": saved[0], "grad": model[0].weight.grad, "weight": model[2].weight}
