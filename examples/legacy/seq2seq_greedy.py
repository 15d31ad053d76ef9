"""GRU encoder-decoder with greedy decoding of a source sentence.

Written the PyTorch 0.3 way: the decoder's hidden state is carried across the loop.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

SOS_token, EOS_token, VOCAB, HIDDEN = 0, 1, 12, 16


class EncoderRNN(nn.Module):
    def __init__(self):
        super(EncoderRNN, self).__init__()
        self.embedding = nn.Embedding(VOCAB, HIDDEN)
        self.gru = nn.GRU(HIDDEN, HIDDEN)

    def forward(self, src):
        return self.gru(self.embedding(src).view(len(src), 1, -1))


class DecoderRNN(nn.Module):
    def __init__(self):
        super(DecoderRNN, self).__init__()
        self.embedding = nn.Embedding(VOCAB, HIDDEN)
        self.gru = nn.GRU(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def forward(self, token, hidden):
        output, hidden = self.gru(F.relu(self.embedding(token).view(1, 1, -1)), hidden)
        return F.log_softmax(self.out(output[0]), dim=1), hidden


def greedy_decode(encoder, decoder, sentence, max_length=8):
    input_variable = Variable(sentence, volatile=True)
    encoder_outputs, hidden = encoder(input_variable)
    decoder_input = Variable(torch.LongTensor([SOS_token]), volatile=True)
    decoded_words, scores = [], []
    for di in range(max_length):
        decoder_output, hidden = decoder(decoder_input, hidden)
        topv, topi = decoder_output.data.topk(1)
        ni = int(topi[0][0])
        decoded_words.append(ni)
        scores.append(float(topv[0][0]))
        if ni == EOS_token:
            break
        decoder_input = Variable(torch.LongTensor([ni]), volatile=True)
    return decoded_words, scores


def run():
    torch.manual_seed(17)
    encoder, decoder = EncoderRNN(), DecoderRNN()
    words, scores = greedy_decode(encoder, decoder, torch.LongTensor([3, 4, 5, 6, 2]))
    return {"words": words, "scores": scores}
