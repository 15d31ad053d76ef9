"""A 0.3-era image-similarity module (multi-scale SSIM) and the script that optimises with it.

`msssim` joins one SSIM value and one contrast term per scale with `torch.cat`: in 0.3 each
was a full reduction of shape (1,), so the joins gave 1-dim tensors of the per-scale values.
Since 0.4 they are 0-dim, and `torch.cat` raises. The contrast terms are 0-dim whatever the
call; the SSIM values only while `size_average` keeps its default, which `msssim` hands on to
`ssim` and `_ssim`'s `if size_average:` (a caller passing False gets per-image values, 1-dim,
which `torch.cat` joins in every version). A denoiser trains on `1 - msssim(...)` and is
evaluated with volatile inputs; both read the similarity with `.data[0]`, a Python number in
0.3.
"""
from math import exp

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


def gaussian(window_size, sigma):
    gauss = torch.Tensor([exp(-(x - window_size // 2) ** 2 / float(2 * sigma ** 2)) for x in range(window_size)])
    return gauss / gauss.sum()


def create_window(window_size, channel):
    _1D_window = gaussian(window_size, 1.5).unsqueeze(1)
    _2D_window = _1D_window.mm(_1D_window.t()).float().unsqueeze(0).unsqueeze(0)
    return Variable(_2D_window.expand(channel, 1, window_size, window_size).contiguous())


def _ssim(img1, img2, window, channel, size_average=True, full=False):
    mu1 = F.conv2d(img1, window, groups=channel)
    mu2 = F.conv2d(img2, window, groups=channel)
    mu1_sq, mu2_sq, mu1_mu2 = mu1.pow(2), mu2.pow(2), mu1 * mu2
    sigma1_sq = F.conv2d(img1 * img1, window, groups=channel) - mu1_sq
    sigma2_sq = F.conv2d(img2 * img2, window, groups=channel) - mu2_sq
    sigma12 = F.conv2d(img1 * img2, window, groups=channel) - mu1_mu2
    C1, C2 = 0.01 ** 2, 0.03 ** 2
    ssim_map = ((2 * mu1_mu2 + C1) * (2 * sigma12 + C2)) / ((mu1_sq + mu2_sq + C1) * (sigma1_sq + sigma2_sq + C2))
    cs = torch.mean((2.0 * sigma12 + C2) / (sigma1_sq + sigma2_sq + C2))
    if size_average:
        ret = ssim_map.mean()
    else:
        ret = ssim_map.mean(1).mean(1).mean(1)
    if full:
        return ret, cs
    return ret


def ssim(img1, img2, window_size=5, size_average=True, full=False):
    (_, channel, height, width) = img1.size()
    real_size = min(window_size, height, width)
    window = create_window(real_size, channel).type_as(img1)
    return _ssim(img1, img2, window, channel, size_average, full=full)


def msssim(img1, img2, window_size=5, size_average=True):
    weights = Variable(torch.FloatTensor([0.0448, 0.2856, 0.3001]))
    levels = weights.size()[0]
    mssim = []
    mcs = []
    for _ in range(levels):
        sim, cs = ssim(img1, img2, window_size=window_size, size_average=size_average, full=True)
        mssim.append(sim)
        mcs.append(cs)
        img1 = F.avg_pool2d(img1, (2, 2))
        img2 = F.avg_pool2d(img2, (2, 2))
    mssim = torch.cat(mssim)
    mcs = torch.cat(mcs)
    return torch.prod(mcs[0:levels - 1] ** weights[0:levels - 1]) * (mssim[levels - 1] ** weights[levels - 1])


class Denoiser(nn.Module):
    def __init__(self):
        super(Denoiser, self).__init__()
        self.conv = nn.Conv2d(1, 1, 3, padding=1)
        self.conv.weight.data.fill_(0.1)  # start near an average of the neighbourhood

    def forward(self, x):
        return torch.sigmoid(self.conv(x))


def train(net, pairs, optimizer):
    losses = []
    for noisy, clean in pairs:
        optimizer.zero_grad()
        loss = 1 - msssim(net(Variable(noisy)), Variable(clean))
        loss.backward()
        optimizer.step()
        losses.append(loss.data[0])
    return losses


def evaluate(net, pairs):
    scores = []
    for noisy, clean in pairs:
        restored = net(Variable(noisy, volatile=True))
        scores.append(msssim(restored, Variable(clean, volatile=True)).data[0])
    return scores, restored


def run():
    torch.manual_seed(0)
    net = Denoiser()
    clean = [torch.rand(1, 1, 24, 24) for _ in range(3)]
    pairs = [(c + 0.1 * torch.randn(1, 1, 24, 24), c) for c in clean]
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    losses = train(net, pairs[:2], optimizer)
    scores, restored = evaluate(net, pairs[2:])
    return {"losses": losses, "scores": scores, "restored": restored, "weight": net.conv.weight.data.clone()}


if __name__ == "__main__":
    print(run())
