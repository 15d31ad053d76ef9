"""Tiny GAN: one adversarial training step, then sampling images from noise.

Written the PyTorch 0.3 way: sample() feeds volatile noise to the generator.
"""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

nz = 8


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(True), nn.Linear(32, 64), nn.Tanh())

    def forward(self, z):
        return self.main(z).view(-1, 1, 8, 8)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(nn.Linear(64, 32), nn.LeakyReLU(0.2, True), nn.Linear(32, 1),
                                  nn.Sigmoid())

    def forward(self, img):
        return self.main(img.view(-1, 64))


def train_step(netG, netD, optimizerG, optimizerD, real):
    criterion = nn.BCELoss()
    batch_size = real.size(0)
    real_label = Variable(torch.ones(batch_size, 1))
    fake_label = Variable(torch.zeros(batch_size, 1))
    netD.zero_grad()
    errD_real = criterion(netD(Variable(real)), real_label)
    fake = netG(Variable(torch.randn(batch_size, nz)))
    errD_fake = criterion(netD(fake.detach()), fake_label)
    errD = errD_real + errD_fake
    errD.backward()
    optimizerD.step()
    netG.zero_grad()
    errG = criterion(netD(fake), real_label)
    errG.backward()
    optimizerG.step()
    return float(errD.data), float(errG.data)


def sample(netG, n):
    netG.eval()
    noise = Variable(torch.randn(n, nz), volatile=True)
    images = netG(noise)
    return images.mul(0.5).add(0.5)  # from [-1, 1] to [0, 1]


def run():
    torch.manual_seed(2)
    netG, netD = Generator(), Discriminator()
    optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    errD, errG = train_step(netG, netD, optimizerG, optimizerD, torch.rand(16, 1, 8, 8) * 2 - 1)
    samples = sample(netG, 4)
    return {"errD": errD, "errG": errG, "samples": samples,
            "G_grad": netG.main[0].weight.grad, "D_grad": netD.main[0].weight.grad}
