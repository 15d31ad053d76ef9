"""volfix.legacy: PyTorch 0.3's `Variable` and `volatile` on torch 2.x, one test (or a few)
per fact of SEMANTICS.md §1, with real torch. Every test enters `legacy_semantics()` itself;
`test_exit_restores_torch` checks that leaving it restores torch's own behaviour (§2)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import warnings

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from volfix.legacy import is_volatile, legacy_semantics, run_path  # noqa: E402


@pytest.fixture
def legacy():
    """The 0.3 `Variable`, imported the way legacy code does, inside the semantics."""
    with legacy_semantics():
        from torch.autograd import Variable

        yield Variable


def recorded(fn):
    """`fn()`'s result and every warning raised meanwhile (SEMANTICS.md fact 18)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [str(w.message) for w in caught]


# ------------------------------------------------------------------ fact 1: two flags


def test_fact1_volatile_forces_requires_grad_off(legacy):
    v = legacy(torch.randn(3), volatile=True)
    assert v.volatile is True and v.requires_grad is False and v.grad_fn is None
    assert is_volatile(v)
    plain = legacy(torch.randn(3), requires_grad=True)
    assert plain.volatile is False and plain.requires_grad is True and plain.is_leaf


# ------------------------------------------------------------- fact 2: propagation


def test_fact2_any_volatile_input_makes_the_output_volatile(legacy):
    a = legacy(torch.randn(3), requires_grad=True)
    b = legacy(torch.randn(3), volatile=True)
    out = a * b + a
    assert out.volatile and out.grad_fn is None and out.requires_grad is False
    assert type(out) is legacy
    # No volatile input: history is recorded as usual.
    c = a * 2
    assert not c.volatile and c.grad_fn is not None and c.requires_grad


def test_fact2_tensor_lists_count(legacy):
    a = legacy(torch.randn(2), requires_grad=True)
    b = legacy(torch.randn(2), volatile=True)
    for out in (torch.cat([a, b]), torch.stack((a, b)), torch.cat([b.data, a])):
        assert type(out) is legacy
    assert torch.cat([a, b]).volatile and torch.stack((a, b)).grad_fn is None
    # `b.data` is plain data (fact 10): it does not make the result volatile.
    assert torch.cat([b.data, a]).grad_fn is not None


def test_fact2_methods_and_multiple_outputs(legacy):
    v = legacy(torch.randn(4, 3), volatile=True)
    values, indices = v.max(1)
    assert values.volatile and indices.volatile and type(values) is legacy
    first, second = v.split(2)
    assert first.volatile and second.volatile


def test_fact2_plain_inputs_handed_back_stay_plain(legacy):
    plain, other = torch.zeros(3), torch.ones(3)
    same = plain.type_as(legacy(torch.ones(3)))  # converts nothing: returns `plain` itself
    assert same is plain and type(plain) is torch.Tensor
    first, second = torch.atleast_1d([plain, legacy(other)])
    assert type(plain) is torch.Tensor and type(second) is legacy


def test_fact2_in_place_write_of_a_volatile_value(legacy):
    buffer = legacy(torch.zeros(2, 3))
    buffer[0] = legacy(torch.ones(3), volatile=True)
    assert buffer.volatile  # 0.3: the written Variable became volatile
    target = legacy(torch.zeros(3))
    target.add_(legacy(torch.ones(3), volatile=True))
    assert target.volatile and torch.equal(target.data, torch.ones(3))


# --------------------------------------------- fact 3: modules with parameters


def test_fact3_volatile_input_wins_over_parameters(legacy):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    out = model(legacy(torch.randn(5, 3), volatile=True))
    assert out.volatile and out.requires_grad is False and out.grad_fn is None
    trained = model(legacy(torch.randn(5, 3)))
    assert trained.requires_grad and trained.grad_fn is not None and not trained.volatile


def test_fact3_recurrent_modules_and_their_state(legacy):
    lstm = nn.LSTM(3, 4)
    out, (h, c) = lstm(legacy(torch.randn(5, 2, 3), volatile=True))
    assert out.volatile and h.volatile and c.volatile and h.grad_fn is None
    assert type(h) == legacy  # noqa: E721 - the 0.3 idiom repackage_hidden() relies on
    out, (h, c) = lstm(legacy(torch.randn(5, 2, 3)))
    assert type(h) == legacy and h.grad_fn is not None  # noqa: E721


# ------------------------------------------------ fact 4: data flow, not scope


def test_fact4_volatility_follows_the_value_anywhere(legacy):
    model = nn.Linear(3, 3)
    features = model(legacy(torch.randn(2, 3), volatile=True))

    def later(x):  # another function, much later: still volatile
        return model(x * 2).sum()

    assert later(features).volatile and later(features).grad_fn is None
    # Reset the flag on the (leaf) result: it becomes ordinary data (fact 9).
    features.volatile = False
    assert later(features).grad_fn is not None


# --------------------------------------------------- fact 5: backward refuses


def test_fact5_backward_on_a_volatile_root_raises(legacy):
    model = nn.Linear(3, 1)
    loss = model(legacy(torch.randn(2, 3), volatile=True)).sum()
    with pytest.raises(RuntimeError, match="element 0 of variables tuple is volatile"):
        loss.backward()
    with pytest.raises(RuntimeError, match="element 1 of variables tuple is volatile"):
        torch.autograd.backward([model(legacy(torch.randn(2, 3))).sum(), loss])
    with pytest.raises(RuntimeError, match="is volatile"):
        torch.autograd.grad(loss, [model.weight])
    assert model.weight.grad is None


def test_fact5_register_hook_on_volatile_raises(legacy):
    with pytest.raises(RuntimeError, match="cannot register a hook on a volatile variable"):
        legacy(torch.randn(2), volatile=True).register_hook(lambda g: g)
    leaf = legacy(torch.randn(2), requires_grad=True)
    seen = []
    leaf.register_hook(seen.append)
    (leaf * 3).sum().backward()
    assert len(seen) == 1 and torch.equal(seen[0], torch.full((2,), 3.0))


def test_fact5_training_still_works(legacy):
    model = nn.Linear(3, 1)
    loss = model(legacy(torch.randn(4, 3))).pow(2).mean()
    loss.backward()
    assert model.weight.grad is not None and torch.count_nonzero(model.weight.grad) > 0


# --------------------------------------------- fact 6: constructor, flag order


def test_fact6_positional_flags(legacy):
    x = torch.randn(2)
    assert legacy(x, True).requires_grad is True
    assert legacy(x, False, True).volatile is True
    with pytest.raises(ValueError, match="can't be volatile and require_grad"):
        legacy(x, True, True)
    # 0.3 raised RuntimeError (THPUtils_assert), torch 2.x ValueError: both clauses catch it.
    with pytest.raises(RuntimeError):
        legacy(x, requires_grad=True, volatile=True)
    with pytest.raises(TypeError):
        legacy(x, requires_grad=None)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        legacy([1.0, 2.0])


def test_fact6_result_is_a_variable_sharing_storage(legacy):
    x = torch.randn(3)
    v = legacy(x)
    assert type(v) == legacy and isinstance(v, torch.Tensor)  # noqa: E721
    assert v.data_ptr() == x.data_ptr() and v.is_leaf and v.grad_fn is None
    x.add_(1)
    assert torch.equal(v.data, x)


def test_fact6_isinstance_as_in_0_3(legacy):
    model = nn.Linear(2, 2)
    assert isinstance(legacy(torch.zeros(1)), legacy)
    assert isinstance(model.weight, legacy) and type(model.weight) != legacy  # noqa: E721
    assert not isinstance(torch.zeros(1), legacy)  # 0.3's FloatTensor was no Variable
    assert not isinstance(legacy(torch.zeros(1)).data, legacy)


# ------------------------------------------------- fact 7: Variable(variable)


def test_fact7_variable_of_a_variable_rewraps_its_data(legacy):
    w = legacy(torch.randn(3), requires_grad=True)
    v = legacy(w * 2)
    assert v.is_leaf and v.grad_fn is None and v.requires_grad is False
    volatile = legacy(torch.randn(3), volatile=True)
    assert legacy(volatile).volatile is False
    assert legacy(volatile, volatile=True).volatile is True


def test_fact7_strict_mode_raises_as_0_3():
    with legacy_semantics(strict=True):
        from torch.autograd import Variable

        with pytest.raises(RuntimeError, match="Variable data has to be a tensor, but got Variable"):
            Variable(Variable(torch.randn(2)))
        assert Variable(torch.randn(2)).volatile is False


# ------------------------------------------------------ facts 8-9: the attribute


def test_fact8_volatile_reads_the_flag_without_warnings(legacy):
    model = nn.Linear(2, 2)
    v = legacy(torch.randn(2), volatile=True)
    flags, caught = recorded(lambda: (v.volatile, (v * 2).volatile, model.weight.volatile,
                                      torch.zeros(1).volatile, model(legacy(torch.randn(2))).volatile))
    assert flags == (True, True, False, False, False)
    assert caught == []


def test_fact9_volatile_write(legacy):
    v = legacy(torch.randn(2))
    _, caught = recorded(lambda: setattr(v, "volatile", True))
    assert caught == [] and v.volatile and (v + 1).grad_fn is None
    with pytest.raises(RuntimeError, match="volatile must be a bool"):
        v.volatile = 1
    w = legacy(torch.randn(2), requires_grad=True)
    with pytest.raises(RuntimeError, match="volatile can only be set on leaf variables"):
        (w * 2).volatile = True
    # A plain tensor made volatile is watched from then on.
    plain = torch.randn(2)
    plain.volatile = True
    assert (plain * w).volatile and (plain * w).grad_fn is None


# ------------------------------------------------ fact 10: .data and detach()


def test_fact10_data_is_plain_and_rewrapping_drops_volatility(legacy):
    model = nn.Linear(3, 3)
    out = model(legacy(torch.randn(2, 3), volatile=True))
    data = out.data
    assert type(data) is torch.Tensor and not is_volatile(data)
    fresh = legacy(out.data)
    assert fresh.volatile is False and fresh.is_leaf
    assert model(fresh).grad_fn is not None


def test_fact10_detach_keeps_volatility(legacy):
    v = legacy(torch.randn(2), volatile=True)
    assert v.detach().volatile is True
    assert legacy(torch.randn(2), requires_grad=True).detach().volatile is False


# --------------------------------------------- one-element results: `.data[0]`


def test_data_index_on_a_zero_dim_loss_gives_a_number(legacy):
    model = nn.Linear(3, 1)
    loss = model(legacy(torch.randn(4, 3))).pow(2).mean()
    number = loss.data[0]
    assert isinstance(number, float) and number == loss.item()
    count = (legacy(torch.tensor([1, 2, 3])) > 1).long().sum()
    assert count.data[0] == 2 and isinstance(count.data[0], int)
    # loss[0] was a one-element Variable in 0.3: it keeps the graph (and volatility).
    picked = loss[0]
    assert type(picked) is legacy and picked.grad_fn is not None and picked.item() == number
    assert model(legacy(torch.randn(4, 3), volatile=True)).sum()[0].volatile


def test_data_index_on_a_comparison_gives_the_int_of_a_byte_tensor(legacy):
    """0.3 had no bool tensors: a comparison made a ByteTensor, whose `[0]` was the int 1 or
    0 (pytorch/pytorch#21113 made comparisons bool in 1.2); `.item()` today gives a bool."""
    loss = nn.Linear(3, 1)(legacy(torch.randn(4, 3))).pow(2).mean()
    same = (loss == loss).data[0]
    assert same == 1 and type(same) is int
    assert type((loss.data < -1)[0]) is int and (loss.data < -1)[0] == 0


def test_one_element_results_join_as_they_did(legacy):
    """0.3's one-element results had shape (1,): `torch.cat([a.mean(), b.mean()])` (msssim's
    list of per-scale values, visdial-rl's rankers) was a 1-dim tensor of their numbers; today
    0-dim tensors cannot be concatenated. Volatility and graphs ride along; other joins, and
    torch.cat outside the semantics, are torch's own."""
    a, b = legacy(torch.randn(3), requires_grad=True), legacy(torch.randn(3), volatile=True)
    joined = torch.cat([a.mean(), a.sum(), torch.ones(2)])
    assert joined.shape == (4,) and joined.grad_fn is not None
    assert torch.allclose(joined[:2].data, torch.stack([a.data.mean(), a.data.sum()]))
    assert torch.cat((b.mean(), b.max()), 0).volatile
    assert torch.cat([torch.ones(2, 1), torch.zeros(1, 1)]).shape == (3, 1)


def test_torch_cat_is_torch_own_outside_the_semantics():
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        torch.cat([torch.ones(3).mean(), torch.ones(3).sum()])


def test_the_numpy_array_of_a_one_element_result_has_one_dimension(legacy):
    """0.3's one-element results had shape (1,), and so had their arrays: `[0]` of
    `loss.data.cpu().numpy()` was a NumPy scalar. Other arrays are torch's own."""
    import numpy as np

    loss = nn.Linear(3, 1)(legacy(torch.randn(4, 3))).pow(2).mean()
    array = loss.data.cpu().numpy()
    assert array.shape == (1,) and isinstance(array[0], np.float32) and array[0] == loss.item()
    array[0] = 5.0  # the same memory, as before
    assert loss.item() == 5.0
    assert torch.zeros(2, 3).numpy().shape == (2, 3)


def test_the_list_of_a_one_element_result_has_one_item(legacy):
    """`loss.data.tolist()` was a list of one number in 0.3 (shape (1,)); `[0]` was the number.
    Lists of tensors with dimensions are torch's own."""
    loss = nn.Linear(3, 1)(legacy(torch.randn(4, 3))).pow(2).mean()
    listed = loss.data.tolist()
    assert listed == [loss.item()] and isinstance(listed[0], float)
    assert loss.data.cpu().numpy().tolist() == [loss.item()]
    assert torch.tensor([[1, 2]]).tolist() == [[1, 2]] and torch.arange(3).tolist() == [0, 1, 2]


def test_a_one_element_gradient_for_a_one_element_root(legacy):
    """0.3's one-element results had shape (1,), so the gradient given for one did too: the
    WGAN idiom `one = torch.FloatTensor([1]); mone = one * -1; D_real.mean().backward(mone)`.
    Today the root is 0-dim and torch refuses that gradient; here it is the root's number,
    through `Tensor.backward`, `torch.autograd.backward` (also 0.3's `grad_variables=`) and
    `torch.autograd.grad`. Other shapes stay torch's own."""
    w = legacy(torch.tensor([1.0, 2.0, 4.0]), requires_grad=True)
    one = torch.FloatTensor([1])
    mone = one * -1
    w.mean().backward(mone)
    assert w.grad.tolist() == pytest.approx([-1 / 3] * 3)
    torch.autograd.backward([w.sum()], [one * 3])
    assert w.grad.tolist() == pytest.approx([3 - 1 / 3] * 3)
    torch.autograd.backward(w.sum(), grad_variables=one)
    assert w.grad.tolist() == pytest.approx([4 - 1 / 3] * 3)
    (grad,) = torch.autograd.grad(w.pow(2).sum(), w, one)
    assert grad.tolist() == [2.0, 4.0, 8.0]
    p = nn.Parameter(torch.ones(2))  # not a Variable here: torch's backward, patched the same
    p.sum().backward(one)
    assert p.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        w.mean().backward(torch.ones(2))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (w * 2).backward(one)  # a root with dimensions takes a gradient of its own shape, as in 0.3
    with pytest.raises(RuntimeError, match="is volatile"):
        legacy(torch.ones(3), volatile=True).mean().backward(one)


def test_the_arguments_0_4_removed(legacy):
    """`backward(retain_variables=True)` (0.3's name of `retain_graph`, through `Tensor.backward`,
    its fourth positional, and `torch.autograd.backward`) and `probs.multinomial()` (0.3 drew one
    sample by default): both raise TypeError today."""
    w = legacy(torch.tensor([1.0, 2.0]), requires_grad=True)
    loss = (w * w).sum()
    loss.backward(retain_variables=True)
    loss.backward()  # the graph was kept
    assert w.grad.tolist() == [4.0, 8.0]
    loss = (w * w).sum()
    loss.backward(None, None, False, True)
    torch.autograd.backward([loss], retain_variables=True)
    loss.backward()
    assert w.grad.tolist() == [10.0, 20.0]  # three more times 2w
    with pytest.raises(ValueError, match="only one of retain_graph and retain_variables"):
        (w * w).sum().backward(retain_graph=True, retain_variables=True)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss = (w * w).sum()
        loss.backward(retain_variables=False)
        loss.backward()
    with pytest.raises(RuntimeError, match="is volatile"):
        legacy(torch.ones(2), volatile=True).sum().backward(retain_variables=True)
    probs = legacy(torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
    drawn = probs.multinomial()
    assert isinstance(drawn, legacy) and drawn.tolist() == [[1], [0]]
    assert torch.tensor([0.0, 1.0]).multinomial(replacement=True).tolist() == [1]
    assert probs.multinomial(2).shape == (2, 2)


class _BinActive(torch.autograd.Function):
    """XNOR-Net's binarization, a legacy Function: methods, state on `self`."""

    def forward(self, input):
        self.save_for_backward(input)
        self.rows = input.size(0)
        return input.sign(), torch.mean(input.abs(), 1, keepdim=True)

    def backward(self, grad_output, grad_mean):
        input, = self.saved_tensors
        assert grad_output.size(0) == self.rows
        return self.clip(grad_output.clone(), input)

    def clip(self, grad, input):
        grad[input.ge(1)] = 0
        grad[input.le(-1)] = 0
        return grad


class _Scale(torch.autograd.Function):
    def __init__(self, k):
        super(_Scale, self).__init__()
        self.k = k

    def forward(self, x):
        return x * self.k

    def backward(self, grad):
        return grad * self.k


def test_legacy_autograd_functions_run_as_in_0_3(legacy):
    """0.3's Function with `forward(self, ...)` / `backward(self, ...)` methods, called as
    `Fn(params)(inputs)`: today that call raises. Here it runs: state stored on `self` in
    `forward` reaches `backward`, `__init__`'s too, `self.saved_tensors` is the context's, and
    a volatile input gives volatile outputs without a graph, as any 0.3 operation."""
    x = legacy(torch.tensor([[0.5, -2.0], [-0.5, 3.0]]), requires_grad=True)
    out, mean = _BinActive()(x)
    assert isinstance(out, legacy) and out.tolist() == [[1.0, -1.0], [-1.0, 1.0]]
    assert type(out.grad_fn).__name__ == "_BinActiveBackward"
    (out.sum() + _Scale(3.0)(x).sum()).backward()
    assert x.grad.tolist() == [[4.0, 3.0], [4.0, 3.0]]
    volatile = _Scale(2.0)(legacy(torch.ones(2), volatile=True))
    assert is_volatile(volatile) and volatile.grad_fn is None


def test_indexing_of_tensors_with_dimensions_is_unchanged(legacy):
    rows = legacy(torch.arange(6.0).view(2, 3))
    assert torch.equal(rows.data[0], torch.tensor([0.0, 1.0, 2.0]))
    element = torch.arange(3.0)[0]
    assert isinstance(element, torch.Tensor) and element.dim() == 0 and element.item() == 0.0
    with pytest.raises(IndexError):
        torch.tensor(1.0)[1]


def test_elements_of_plain_tensors_find_their_numbers_keys(legacy):
    """0.3 gave a plain tensor's element as a Python number (`ni = topi[0][0]` after
    `decoder_output.data.topk(1)`, a seq2seq tutorial's greedy decoder), so it found its key
    in a dict: `index2word[ni]`. Today the element is a 0-dim tensor, hashed by identity: a
    KeyError. Here the element hashes as its number, by indexing and by iteration (also a
    comparison's element, 0.3's ByteTensor int); it stays a 0-dim tensor for migrated code
    (`ni.item()`), and a Variable's element is torch's."""
    index2word = {0: "SOS", 1: "EOS", 2: "cat"}
    scores = legacy(torch.tensor([[0.1, 0.2, 0.7]]))
    _, topi = scores.data.topk(1)
    ni = topi[0][0]
    assert index2word[ni] == "cat" and index2word[topi[0, 0]] == "cat" and ni in {2}
    assert isinstance(ni, torch.Tensor) and ni.dim() == 0 and ni.item() == 2
    assert [index2word[w] for w in torch.LongTensor([1, 0])] == ["EOS", "SOS"]
    assert index2word[(torch.arange(3) > 0)[1]] == "EOS"
    assert f"{ni}" == "2" and repr(ni) == "tensor(2)" and type(ni + 1) is torch.Tensor
    with pytest.raises(KeyError):
        index2word[scores[0][2].long()]  # a Variable's element: a one-element Variable in 0.3
    with pytest.raises(KeyError):
        index2word[torch.arange(3)[torch.tensor(2)]]  # indexing by a tensor: not 0.3's


def test_elements_print_as_0_3s_numbers(legacy, tmp_path):
    """A data generator writes `str(tensor[-1])` into a text file and reads it back with `int()`
    (neural-combinatorial-rl's sorting task): 0.3's element was a number, so the file held `3`;
    today's 0-dim tensor writes `tensor(3)`, which `int()` cannot read. Under the runtime
    `str()` and `print` give the number again; `repr` and formatting stay torch's."""
    sample = torch.LongTensor([5, 3])
    path = tmp_path / "sorted.txt"
    path.write_text(" ".join(str(sample[i]) for i in range(2)) + " " + str(sample[-1]) + "\n")
    assert [int(tok) for tok in path.read_text().split()] == [5, 3, 3]
    assert str(torch.FloatTensor([0.5])[0]) == "0.5" and f"{sample[0]}" == "5"
    assert repr(sample[0]) == "tensor(5)"
    element = legacy(sample)[0]  # a Variable's element: a one-element Variable in 0.3, printed as one
    assert str(element) == repr(element) != "5"


def test_byte_masks_write_as_in_0_3(legacy):
    """0.3 had no bool tensors: masks were ByteTensors (`mask = torch.zeros(n).byte()`, then
    `logits[mask] = -np.inf`, a pointer network's visited cities). Today a write through a uint8
    mask raises `masked_fill_ only supports boolean masks`; under the runtime it writes, through
    indexing, `masked_fill` and `masked_fill_`, on plain tensors and on Variables, and
    `masked_select` and `masked_scatter(_)` take it too."""
    mask = torch.ByteTensor([1, 0, 1])
    logits = torch.zeros(3)
    logits[mask] = -1.0
    assert logits.tolist() == [-1.0, 0.0, -1.0]
    assert logits.masked_fill(mask, 5.0).tolist() == [5.0, 0.0, 5.0]
    rows = torch.zeros(2, 3)
    rows[0, mask] = 2.0
    assert rows.tolist() == [[2.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    v = legacy(torch.zeros(3))
    v.data.masked_fill_(mask, 1.0)
    assert v.data.tolist() == [1.0, 0.0, 1.0]
    assert torch.arange(3.0).masked_select(mask).tolist() == [0.0, 2.0]
    assert torch.zeros(3).masked_scatter(mask, torch.ones(3)).tolist() == [1.0, 0.0, 1.0]
    scattered = torch.zeros(3)
    scattered.masked_scatter_(mask, torch.ones(3))
    assert scattered.tolist() == [1.0, 0.0, 1.0]


def test_elements_of_plain_tensors_are_copies_as_numbers_were(legacy):
    """A DQN's prioritized replay reads `old_val = target[0][action]`, writes `target[0][action]
    = reward + ...`, then takes `abs(old_val - target[0][action])` as the priority. 0.3's
    `old_val` was a number, so it kept the old value; today's 0-dim view follows the write and
    the error is always 0. Here the element is a copy, by indexing and by iteration."""
    target = torch.tensor([[1.0, 2.0, 3.0]])
    old_val = target[0][1]
    target[0][1] = 7.0
    assert old_val.item() == 2.0 and abs(old_val - target[0][1]).item() == 5.0
    values = torch.tensor([4.0, 5.0])
    first = next(iter(values))
    values[0] = 0.0
    assert first.item() == 4.0


def test_tensors_are_no_sequences_for_constructors_and_numpy(legacy):
    """torch's `__getitem__` is a mapping slot only; the patched one must not make every tensor
    a sequence for C code, or `torch.Tensor([r])` of an element `r` of a 1-dim tensor (an RL
    loop's normalised reward) raises `len() of a 0-d tensor`, which neither 0.3 (where `r` was
    a number) nor torch 2.x does."""
    rewards = torch.Tensor([1.0, 2.0, 4.0])
    rewards = (rewards - rewards.mean()) / rewards.std()
    targets = [torch.Tensor([r]) for r in rewards]
    assert [t.shape for t in targets] == [torch.Size([1])] * 3
    assert torch.equal(torch.cat(targets), rewards)
    loss = legacy(torch.ones(3), requires_grad=True).sum()
    assert torch.FloatTensor([loss.data, loss.data]).tolist() == [3.0, 3.0]
    assert loss.data[0] == 3.0 and torch.arange(3.0).view(3, 1)[0].tolist() == [0.0]
    import numpy

    assert numpy.array([torch.ones(())]).shape == (1, 1)  # 0.3's (1,) array of a one-element tensor


# ------------------------------------------------------------ the context manager


def test_integer_tensors_divide_as_in_0_3(legacy):
    """0.3 divided an integer tensor by an integer as C does (a beam search's `prev_k =
    bestScoresId / num_words` of flat `topk` indices); today `/` divides truly and gives floats
    (deprecated in 1.5, changed in 1.7), and the beam's indices then fail as indices. Float
    operands, and Variables of floats, divide as before."""
    ids = torch.LongTensor([7, -7, 9])
    assert (ids / 2).tolist() == [3, -3, 4] and (ids / 2).dtype is torch.int64
    assert (ids / torch.LongTensor([2, 2, 2])).tolist() == [3, -3, 4]
    assert (7 / torch.LongTensor([2])).tolist() == [3]
    assert torch.div(ids, 2).tolist() == [3, -3, 4] and ids.div(2).tolist() == [3, -3, 4]
    copy = ids.clone()
    copy /= 2
    assert copy.tolist() == [3, -3, 4]
    copy = ids.clone()
    copy.div_(2)
    assert copy.tolist() == [3, -3, 4]
    assert (torch.FloatTensor([7]) / 2).tolist() == [3.5] and (ids.float() / 2).tolist() == [3.5, -3.5, 4.5]
    assert (legacy(ids) / 2).tolist() == [3, -3, 4]
    w = legacy(torch.FloatTensor([3.0]), requires_grad=True)
    (w / 2).sum().backward()
    assert w.grad.tolist() == [0.5]


def test_size_0_of_a_one_element_result_is_one(legacy):
    """0.3's one-element results had shape (1,): `idxs.size(0)` of `all_idxs[-1]` (a beam
    search's last index) was 1; today's 0-dim result raises. Other sizes are torch's."""
    ids = legacy(torch.LongTensor([4, 5, 6]))
    last = ids[-1]
    assert last.size(0) == 1 and last.size(-1) == 1 and tuple(last.size()) == ()
    assert torch.zeros(2, 3).size(1) == 3
    with pytest.raises(IndexError):
        last.size(1)


def test_exit_restores_torch():
    import torch.autograd.variable as variable_module

    before = (torch.autograd.Variable, variable_module.Variable, dict(torch.Tensor.__dict__),
              torch.autograd.backward, torch.autograd.grad)
    with legacy_semantics():
        with legacy_semantics():  # nested entries: only the outermost restores
            from torch.autograd import Variable as Legacy
        assert torch.autograd.Variable is Legacy
    after = (torch.autograd.Variable, variable_module.Variable, dict(torch.Tensor.__dict__),
             torch.autograd.backward, torch.autograd.grad)
    assert after == before
    from torch.autograd import Variable

    made, caught = recorded(lambda: Variable(torch.randn(2), volatile=True))
    assert type(made) is torch.Tensor
    assert any("volatile was removed" in message for message in caught)
    flag, caught = recorded(lambda: made.volatile)
    assert flag is False and caught == ["volatile was removed (Variable.volatile is always False)"]
    with pytest.raises(IndexError):
        torch.tensor(1.0)[0]
    assert torch.Tensor([torch.tensor(2.0)]).tolist() == [2.0] and torch.tensor(2.0).tolist() == 2.0
    assert (torch.LongTensor([7]) / 2).tolist() == [3.5] and torch.LongTensor([7]).div(2).tolist() == [3.5]
    with pytest.raises(IndexError):
        torch.tensor(1).size(0)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        torch.ones(2, requires_grad=True).sum().backward(torch.FloatTensor([1]))
    with pytest.raises(TypeError, match="retain_variables"):
        torch.ones(2, requires_grad=True).sum().backward(retain_variables=True)
    with pytest.raises(TypeError, match="num_samples"):
        torch.ones(2).multinomial()
    with pytest.raises(RuntimeError, match="Legacy autograd function"), \
            pytest.warns(DeprecationWarning, match="should not be instantiated"):
        _Scale(2.0)(torch.ones(2))


def test_exit_restores_torch_after_an_exception():
    with pytest.raises(KeyError):
        with legacy_semantics():
            raise KeyError("boom")
    assert "volatile" not in torch.Tensor.__dict__
    assert type(torch.autograd.Variable(torch.zeros(1))) is torch.Tensor


def test_nesting_with_a_different_strictness_is_refused():
    with legacy_semantics():
        with pytest.raises(RuntimeError, match="already active"):
            with legacy_semantics(strict=True):
                pass
    assert "volatile" not in torch.Tensor.__dict__


def test_the_class_is_importable_from_volfix_legacy(legacy):
    import volfix.legacy

    assert volfix.legacy.Variable is legacy
    with pytest.raises(AttributeError):
        volfix.legacy.Tensor  # noqa: B018


def test_variables_made_inside_are_plain_outside():
    with legacy_semantics():
        from torch.autograd import Variable

        v = Variable(torch.randn(2), volatile=True)
        w = Variable(torch.randn(2), requires_grad=True)
    # Nothing is volatile any more: operations record history as torch 2.x does.
    assert (w * v).grad_fn is not None
    assert is_volatile(v) is True  # the flag itself is kept, for inspection


def test_threads_started_inside_see_the_semantics(legacy):
    model = nn.Linear(2, 2)
    seen = {}

    def worker():
        seen["out"] = model(legacy(torch.randn(2), volatile=True))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen["out"].volatile and seen["out"].grad_fn is None


def test_deepcopy_keeps_the_flag(legacy):
    import copy

    v = legacy(torch.randn(2), volatile=True)
    twin = copy.deepcopy(v)
    assert type(twin) is legacy and twin.volatile and torch.equal(twin, v) and twin is not v


# ------------------------------------------------------------------- running scripts


SCRIPT = textwrap.dedent("""\
    import sys
    import torch
    import torch.nn as nn
    from torch.autograd import Variable

    model = nn.Linear(2, 1)
    x = torch.randn(3, 2)
    if torch.cuda.is_available():
        x = x.cuda(async=True)
    out = model(Variable(x, volatile=True))
    loss = model(Variable(x)).sum()
    print(sys.argv[1:], out.volatile, out.grad_fn is None, type(loss.data[0]).__name__)
    """)


def test_run_path_runs_a_legacy_script(tmp_path, capsys):
    script = tmp_path / "legacy_script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    with pytest.raises(SyntaxError):  # `async=` does not even compile today
        compile(SCRIPT, "legacy_script.py", "exec")
    namespace = run_path(str(script), ["--flag"])
    # Read after the semantics are gone: `.volatile` is torch's again, is_volatile() is not.
    assert is_volatile(namespace["out"]) and namespace["__name__"] == "__main__"
    assert capsys.readouterr().out == "['--flag'] True True float\n"
    assert "volatile" not in torch.Tensor.__dict__
    with pytest.raises(SyntaxError):
        run_path(str(script), rewrite_async=False)


def test_command_line(tmp_path):
    script = tmp_path / "legacy_script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "volfix.legacy", str(script), "a", "b"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "['a', 'b'] True True float\n"
    assert "volatile was removed" not in done.stderr
    usage = subprocess.run([sys.executable, "-m", "volfix.legacy"], capture_output=True, text=True,
                           timeout=120)
    assert usage.returncode == 2 and "usage:" in usage.stderr


def test_importing_volfix_does_not_import_torch():
    code = ("import sys, volfix, volfix.cli.commands, volfix.legacy\n"
            "from volfix.legacy import is_volatile\n"
            "assert is_volatile(1) is False\n"
            "print('torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False\n"
