"""VF401's `flow.backward_terms`: a value the code calls `.backward()` on without a gradient, as a
term of element-wise arithmetic, held one element in 0.3 (and `backward()` refused anything
else), so `.data[0]` of it is `.item()`. Each case is a read the rule must, or must not, call
one element."""
from __future__ import annotations

import ast
import textwrap

from volfix.flow.scalars import ScalarValues
from volfix.syntax.index import ModuleIndex
from volfix.syntax.positions import SourceText


def one_element(source: str) -> bool:
    """Whether the subject of the module's only `.data[0]` is one element."""
    text = textwrap.dedent(source)
    tree = ast.parse(text)
    index = ModuleIndex(tree, SourceText(text))
    reads = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute)
             and n.value.attr == "data"]
    assert len(reads) == 1
    return ScalarValues(index).one_element(reads[0].value.value, reads[0])


def test_a_term_of_the_sum_backward_runs_on():
    assert one_element('''
        def update(model, obs, coef):
            values, log_probs, entropy = model.evaluate(obs)
            (values.mean() + log_probs.mean() - entropy * coef).backward()
            return entropy.data[0]
        ''')


def test_a_term_of_a_sum_bound_to_a_name_first():
    assert one_element('''
        def update(model, obs):
            values, log_probs, entropy = model.evaluate(obs)
            loss = values.mean() - entropy * 0.01
            loss.backward()
            return entropy.data[0]
        ''')


def test_not_with_a_gradient_given():
    assert not one_element('''
        def update(model, obs, grad):
            values, log_probs, entropy = model.evaluate(obs)
            (values - entropy).backward(grad)
            return entropy.data[0]
        ''')


def test_not_inside_a_call_or_a_matrix_product():
    assert not one_element('''
        def update(model, obs, w):
            values, log_probs, entropy = model.evaluate(obs)
            (torch.dot(entropy, w) + (entropy @ w)).backward()
            return entropy.data[0]
        ''')


def test_not_when_a_jump_may_skip_the_backward():
    assert not one_element('''
        def update(model, batches):
            for obs in batches:
                values, log_probs, entropy = model.evaluate(obs)
                if values is None:
                    continue
                (values.mean() - entropy).backward()
            return entropy.data[0]
        ''')


def test_not_when_the_name_is_bound_again_before_the_backward():
    assert not one_element('''
        def update(model, obs):
            values, log_probs, entropy = model.evaluate(obs)
            keep = entropy
            values, log_probs, entropy = model.evaluate(obs[0])
            (values.mean() - entropy).backward()
            return keep.data[0]
        ''')


def test_an_attribute_the_method_stores_then_sums():
    assert one_element('''
        class Model(object):
            def backward_g(self, fake, real):
                self.loss_gan = self.criterion_gan(fake, real)
                self.loss_g = self.loss_gan + self.criterion_l1(fake, real)
                self.loss_g.backward()

            def errors(self):
                return self.loss_gan.data[0]
        ''')


def test_not_an_attribute_a_method_called_between_stores_again():
    assert not one_element('''
        class Model(object):
            def backward_g(self, fake, real):
                self.loss_gan = self.criterion_gan(fake, real)
                self.reset(fake)
                self.loss_gan.backward()

            def reset(self, fake):
                self.loss_gan = fake  # the rows: `backward()` then ran on those

            def errors(self):
                return self.loss_gan.data[0]
        ''')
