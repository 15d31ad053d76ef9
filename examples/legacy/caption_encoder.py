"""Image captioning, the tutorial's training step: a frozen CNN under a trained head.

Written the PyTorch 0.3 way: the batch of images is volatile, so the CNN runs without a
graph; the encoder then rebuilds its features with `Variable(features.data)`, a fresh value
that is not volatile, so its linear layer and the decoder train on them. A `no_grad` region
around `encoder(images)` would stop that layer from training.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class EncoderCNN(nn.Module):
    def __init__(self):
        super(EncoderCNN, self).__init__()
        self.cnn = nn.Linear(6, 5)  # stands in for the pretrained ResNet
        self.linear = nn.Linear(5, 3)

    def forward(self, images):
        features = self.cnn(images)
        features = Variable(features.data)
        return self.linear(features)


class DecoderRNN(nn.Module):
    def __init__(self):
        super(DecoderRNN, self).__init__()
        self.embed = nn.Embedding(7, 3)
        self.out = nn.Linear(3, 7)

    def forward(self, features, captions):
        return self.out(features.unsqueeze(1) + self.embed(captions))


class Trainer(object):
    def __init__(self):
        self.encoder = EncoderCNN()
        self.decoder = DecoderRNN()
        params = list(self.decoder.parameters()) + list(self.encoder.linear.parameters())
        self.optimizer = torch.optim.SGD(params, lr=0.5)

    def step(self, images, captions):
        images = Variable(images, volatile=True)
        captions = Variable(captions)
        features = self.encoder(images)
        outputs = self.decoder(features, captions)
        loss = nn.functional.cross_entropy(outputs.view(-1, 7), captions.view(-1))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.data[0]


def run():
    torch.manual_seed(5)
    trainer = Trainer()
    losses = [trainer.step(torch.randn(4, 6), torch.LongTensor(4, 2).random_(7)) for _ in range(2)]
    return {"losses": losses, "linear_weight": trainer.encoder.linear.weight.data,
            "cnn_weight": trainer.encoder.cnn.weight.data}
