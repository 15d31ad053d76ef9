"""A stand-in for gym's CartPole (observations of shape (4,)), for driving a legacy example."""
import numpy as np


class _Spec:
    reward_threshold = 10.5


class _CartPole:
    spec = _Spec()

    def __init__(self):
        self._rng = np.random.RandomState(0)
        self._t = 0

    def seed(self, seed):
        self._rng = np.random.RandomState(seed)

    def reset(self):
        self._t = 0
        return self._rng.randn(4)

    def step(self, action):
        assert action in (0, 1), action
        self._t += 1
        return self._rng.randn(4), 1.0, self._t >= 20, {}

    def render(self):
        pass


def make(name):
    return _CartPole()
