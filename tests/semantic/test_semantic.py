"""Semantic tests with real PyTorch: run each bundled legacy program before and after
`volfix fix --unsafe-fixes` and compare what it computes.

For every program in examples/legacy/ we check that the fixed program
- no longer emits PyTorch's "volatile was removed" warnings (and that the original did,
  which proves warnings are seen at all: SEMANTICS.md fact 18);
- computes the same numbers (same seeds, tight tolerance);
- returns inference results without an autograd graph, where the original built one
  (SEMANTICS.md E2d: `model(Variable(x, volatile=True))` records a graph today);
- produces the same gradients on its training paths;
- records graphs in exactly the forward calls that train: a global forward hook notes, for
  every top-level call of a module with parameters, whether its output has a `grad_fn`.

Two originals cannot run unchanged on Python 3.11 / torch 2.x; see `Case.repair`.
"""
from __future__ import annotations

import importlib.util
import itertools
import re
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

torch = pytest.importorskip("torch")

from volfix.api import check_paths, check_source, fix_source  # noqa: E402
from volfix.settings.config import Config  # noqa: E402

from harness import (  # noqa: E402
    EXAMPLES, PACKAGE, Outcome, assert_same, legacy_names_in, run_package, run_program,
    volatile_warnings,
)


@dataclass(frozen=True)
class Repair:
    """A minimal hand edit that lets an original run on Python 3.11 / torch 2.x.

    The unrepaired original must fail with `error` (matching `match`): that failure is the
    reason the edit exists. The edit touches no volatile code, so the repaired original
    still shows the legacy behaviour the fixed program is compared with.
    """

    old: str
    new: str
    error: type
    match: str
    at_compile: bool = False
    more: Tuple[Tuple[str, str], ...] = ()  # further (old, new) edits of the same kind

    def apply(self, source: str) -> str:
        for old, new in ((self.old, self.new),) + self.more:
            assert old in source, old
            source = source.replace(old, new)
        return source


@dataclass(frozen=True)
class Case:
    name: str
    # Codes `volfix check` reports for the original file, exactly.
    codes: frozenset
    # run() keys holding results computed in a migrated inference region.
    inference: Tuple[str, ...] = ()
    # run() keys holding gradients (or parameters updated from them) on training paths.
    grads: Tuple[str, ...] = ()
    # Forward-graph profiles: one letter per top-level call of a module with parameters,
    # T = its output has a grad_fn, F = it has none. Regexes, matched in full.
    graph_before: str = ""
    graph_after: str = ""
    # The volatile value only feeds a training step: the fix must unwrap, not add a region.
    trains: bool = False
    repair: Optional[Repair] = None
    # Legacy names the fixed program may legitimately keep (a project's own wrapper that
    # still does something, e.g. a rebound `Variable` that moves tensors to the GPU).
    keeps: frozenset = frozenset()
    # Opt-in rules the fix runs with: VF104 drops a helper's parameter that only chose
    # `volatile=` (volfix keeps signatures by default), the last legacy name in those programs.
    extend_select: Tuple[str, ...] = ()


CASES = [
    Case("mnist_eval", frozenset({"VF101", "VF110"}),
         grads=("fc1_grad", "fc2_grad"),
         graph_before="T{5}", graph_after="T{3}F{2}"),
    Case("rl_select_action", frozenset({"VF101"}),
         graph_before="T+", graph_after="F+"),
    Case("gan_sample", frozenset({"VF101", "VF110"}),
         inference=("samples",), grads=("G_grad", "D_grad"),
         graph_before="T{5}", graph_after="T{4}F"),
    Case("seq2seq_greedy", frozenset({"VF101"}),
         graph_before="T{2,}", graph_after="F{2,}"),
    Case("inference_script", frozenset({"VF101"}),
         inference=("logits", "probs", "confidence"),
         graph_before="T", graph_after="F"),
    Case("word_language_model", frozenset({"VF103", "VF110", "VF112"}),
         grads=("encoder_grad", "decoder_grad"),
         graph_before="T{5}", graph_after="T{3}F{2}",
         # `type(h) == Variable` is always False today (SEMANTICS.md fact 12), so the
         # original repackage_hidden() recurses into the tensor until it iterates a 0-d one.
         repair=Repair("type(h) == Variable", "isinstance(h, Variable)",
                       TypeError, "iteration over a 0-d tensor")),
    # `x.volatile = False` made a volatile result plain data again in 0.3 (SEMANTICS.md
    # fact 9), so only the target network's pass is inference: policy T, target F per step.
    Case("dqn_volatile_target", frozenset({"VF101", "VF110", "VF202"}),
         grads=("fc1_grad", "head_grad", "head_weight"),
         graph_before="(TT){2}", graph_after="(TF){2}"),
    Case("masked_loss_training", frozenset({"VF101", "VF110"}),
         grads=("embed_grad", "out_grad", "out_weight"),
         graph_before="T{3}", graph_after="T{3}", trains=True),
    Case("manual_parameters", frozenset({"VF101", "VF110", "VF111"}),
         inference=("y_test",), grads=("grad_w", "grad_b", "w", "b")),
    Case("imagenet_validate", frozenset({"VF101", "VF110", "VF301"}),
         grads=("grad",),
         graph_before="T{5}", graph_after="T{3}F{2}",
         # `async` is a keyword since Python 3.7. The branch only runs with CUDA, so the
         # edit cannot change what this CPU run computes.
         repair=Repair("async=True", "non_blocking=True", SyntaxError, "", at_compile=True)),
    Case("feature_probe", frozenset({"VF101", "VF110"}),
         grads=("head_grad", "head_bias_grad"),
         graph_before="(TT){3}", graph_after="(FT){3}"),
    # ---- flow-aware patterns: the flag or the volatile value travels through a helper, a
    # wrapper, an attribute, a generator or a hook before it reaches the computation.
    # `to_var(x, volatile=False)` is called by select_action() with True and by the training
    # update with the default: the region goes only where True is passed (SPEC.md §2.6).
    # Once the call sites carry the region, the helper's `volatile` parameter is dead and
    # goes with the rest of the legacy API.
    Case("rl_to_var_agent", frozenset({"VF103", "VF110"}),
         grads=("fc_grad", "head_grad", "head_weight"),
         graph_before="T{6}", graph_after="F{3}TF{2}", extend_select=("VF104",)),
    # RL-Adventure's `Variable = lambda *args, **kwargs: ...` is a wrapper (SPEC.md §1, §2.6):
    # the call through it with volatile=True is a source; the wrapper itself still moves
    # tensors to the GPU, so its name (and the forwarded call inside it) may stay. That
    # forwarded call is the project's API, not a site: no VF110 that could never be fixed.
    Case("lambda_variable_wrapper", frozenset({"VF101"}),
         grads=("first_grad", "last_grad", "last_weight"),
         graph_before="T{7}", graph_after="F{4}TTF", keeps=frozenset({"Variable"})),
    # `volatile=not self.training` through a helper inside forward(): train mode records,
    # eval mode does not (SEMANTICS.md fact 3).
    Case("detector_training_flag", frozenset({"VF103"}),
         inference=("cls_prob", "bbox_pred"), grads=("fc_grad", "bbox_grad"),
         graph_before="TT", graph_after="TF", extend_select=("VF104",)),
    # The volatile priors live on `self`; the test phase decodes boxes from them, so in 0.3
    # the boxes were volatile (fact 4) while the scores, computed from a non-volatile input,
    # were not. The train phase only hands the priors to the loss, which uses `.data`.
    Case("priors_attribute", frozenset({"VF101", "VF110"}),
         inference=("boxes",), grads=("body_grad", "loc_grad"),
         graph_before="TT", graph_after="TF"),
    # Outputs yielded from volatile inputs, and everything the consumer computes from them.
    Case("generator_batches", frozenset({"VF101", "VF110"}),
         inference=("probs",), grads=("fc1_grad", "fc2_grad"),
         graph_before="T{4}", graph_after="TF{3}"),
    # `.volatile` checks in a forward hook and before register_hook. run() returns only what
    # 0.3 and today agree on; test_hook_checks_follow_grad_mode_as_in_0_3 checks the rest.
    Case("hook_volatile_checks", frozenset({"VF101", "VF110", "VF201"}),
         inference=("probs",), grads=("fc1_grad", "fc2_grad"),
         graph_before="T{3}", graph_after="TTF"),
    # `to_var(x, requires_grad=False)` called with True for an input gradient: each call made
    # a new leaf in 0.3 (and today), so two gradients of one image do not accumulate.
    Case("requires_grad_wrapper", frozenset({"VF101", "VF111"}),
         grads=("conv_grad", "fc_grad", "input_grad_0", "input_grad_1"),
         graph_before="T{4}", graph_after="T{3}F"),
    # Training right next to the volatile value (issue 13): the policy network's forward pass
    # trains while the target network's runs on volatile input. Only the target's pass (and
    # what is computed from it) loses its graph.
    Case("td_loss_target_net", frozenset({"VF101", "VF110"}),
         grads=("fc_grad", "head_grad", "head_weight"),
         graph_before="(TT){2}", graph_after="(TF){2}"),
    # A module-level script whose volatile test batch, made above the training loop, is
    # evaluated inside it every other step: the region is the evaluation block, not the loop.
    Case("script_periodic_eval", frozenset({"VF101", "VF110"}),
         inference=("last_test_output",), grads=("first_grad", "last_grad"),
         graph_before="T{6}", graph_after="TFTTFT"),
    # The same, converted with `.type(torch.FloatTensor)` and evaluated at three places: the
    # top of each epoch, every other step inside the training loop, and after it. Each
    # evaluation gets its own region; none covers a training step.
    Case("script_nested_eval_blocks", frozenset({"VF101", "VF110"}),
         inference=("last_test_output", "final_output"), grads=("linear_grad", "bn_grad"),
         graph_before="T{15}", graph_after="(FFTTFTT){2}F"),
    # DDPG's critic update: the volatile next state runs the target actor and critic, whose
    # result meets the critic's output in the loss with no re-wrap (0.3 raised at backward).
    # The target networks' pass loses its graph; the critic's gradients are unchanged.
    Case("ddpg_target_update", frozenset({"VF101", "VF110"}),
         inference=("target_values",), grads=("critic_grad", "critic_weight"),
         graph_before="(TTT){2}", graph_after="(FFT){2}"),
    # A categorical DQN: the volatile next state goes into a helper that runs the target
    # network; its result comes back re-wrapped (`Variable(proj_dist)`, data by 0.3's fact 7)
    # as the loss target. Only the helper's call loses its graph; the policy pass trains.
    Case("categorical_projection", frozenset({"VF101", "VF110"}),
         grads=("fc_grad", "head_grad", "head_weight"),
         graph_before="(TT){2}", graph_after="(FT){2}"),
    # One name wrapping a tensor per phase (issue 13's alias leftovers): `inputs` in the
    # training loop and again, volatile, in the validation loop; `inputv` rebound to a second
    # value; a closure reading a wrapped target; a batch still saved on the CPU after it moved.
    # Each alias goes where its reads see nothing else, and only there.
    Case("alias_live_ranges", frozenset({"VF101", "VF110"}),
         inference=("val_loss", "scores"), grads=("grad", "weight"),
         graph_before="T{12}", graph_after="T{3}F{2}TTFTTTF"),
    # `.data[0]` on losses and reductions (0-dim since 0.4) next to a row read `outputs.data[0]`.
    # The repair reads each scalar as 0.3 did, a Python number (`.tolist()` of a 0-dim tensor),
    # and leaves the row alone.
    Case("scalar_logging", frozenset({"VF101", "VF110", "VF401"}),
         grads=("fc1_grad", "fc2_grad"),
         graph_before="T{5}", graph_after="T{3}F{2}",
         repair=Repair("loss.data[0]", "loss.data.tolist()", IndexError, "invalid index of a 0-dim tensor",
                       more=((").data[0]", ").data.tolist()"), ("tolist()[0]", "tolist()")))),
    # ---- issue 21: regions cover only what computes with the value (SPEC §2.3, §2.10).
    # A flag helper called with train=False and then train=True in the next statement: only
    # the first call and what computes with its result lose their graph.
    Case("flag_helper_both_ways", frozenset({"VF103"}),
         inference=("a", "gap"), grads=("first_grad", "last_weight"),
         graph_before="TT", graph_after="FT"),
    # Flags that are integers (an `int` option, `search=0`): `set_grad_enabled` raises
    # TypeError for them today, so the fixed regions spell `bool(...)`. The evaluating call
    # of the hypernetwork slice (eval mode, no search) loses its graph.
    Case("integer_flags", frozenset({"VF103"}),
         inference=("frozen",), grads=("grad",),
         graph_before="TTT", graph_after="TFT"),
    # One epoch function validates (flag true) and trains (flag false); it returns Python
    # numbers, so only the validating call gets a region and training still updates.
    Case("validate_then_train", frozenset({"VF103", "VF401"}),
         grads=("weight", "grad"),
         graph_before="T{8}", graph_after="(FFTT){2}",
         repair=Repair("loss.data[0]", "loss.data.tolist()", IndexError, "invalid index of a 0-dim tensor")),
    # Training hidden two calls deep next to a validation loop: no decorator on the epoch.
    Case("training_in_callee", frozenset({"VF101", "VF110"}),
         inference=("score",), grads=("weight", "grad"),
         graph_before="T{4}", graph_after="FFTT"),
    # A library's own `no_grad` alias with an old-torch fallback is a grad-disabled region:
    # the batches are only unwrapped, and the user callbacks after the loop keep grad on.
    Case("no_grad_alias_trainer", frozenset({"VF101", "VF401"}),
         grads=("probe",),
         graph_before="FFFT", graph_after="FFFT",
         repair=Repair("loss.data[0]", "loss.data.tolist()", IndexError, "invalid index of a 0-dim tensor")),
    # fastai's own `no_grad_context()` (torch.no_grad() on 0.4, a do-nothing context before)
    # covers validation: its volatile batches are only unwrapped; predict() has no such
    # context and gets a region; the training step between keeps its graph.
    Case("no_grad_context_shim", frozenset({"VF101", "VF110", "VF401"}),
         inference=("prediction",), grads=("weight",),
         graph_before="FFTFFT", graph_after="FFTFFF",
         repair=Repair("mean().data[0]", "mean().data.tolist()", IndexError, "invalid index of a 0-dim tensor",
                       more=(("loss.data[0]", "loss.data.tolist()"),))),
    # A flag passed through a batch class's constructor: evaluation loses its graph, the
    # training batch keeps it.
    Case("batch_constructor_flag", frozenset({"VF103"}),
         inference=("scores",), grads=("grad", "weight"),
         graph_before="TT", graph_after="TF"),
    # The scalar reads VF401 once missed (issue 22): a project loss function's result, an
    # accumulator of a moved criterion's `.data` read with `[0]`, a list of means, a pixel
    # read by indexing every dimension; most of them inside the evaluation region. The
    # repair reads each as 0.3 did, a Python number.
    Case("vae_loss_logging", frozenset({"VF101", "VF110", "VF401"}),
         grads=("fc1_grad", "fc3_grad"),
         graph_before="T{5}", graph_after="T{3}F{2}",
         repair=Repair(".data[0]", ".data.tolist()", IndexError, "invalid index of a 0-dim tensor",
                       more=(("total_mse[0]", "total_mse.tolist()"),))),
    # More of issue 22's shapes, from real code: a criterion object's `crit(...).data[0]`,
    # `loss[0]` of a loss the script's own function returns (a Variable in 0.3: unsafe fix),
    # a full index by the entries of a `nonzero()` row. The repair reads each as 0.3 did.
    Case("criterion_object_logging", frozenset({"VF101", "VF110", "VF401"}),
         grads=("conv_grad", "fc_grad"),
         graph_before="T{6}", graph_after="T{3}F{3}",
         repair=Repair("loss[0]", "loss.data.tolist()", IndexError, "invalid index of a 0-dim tensor",
                       more=((").data[0]", ").data.tolist()"), ("]].data[0]", "]].data.tolist()")))),
    # awd-lstm-lm's finetune.py: `total_loss += ... criterion(...).data`, then `total_loss[0]`,
    # in a file without any `.data[0]` (the snapshot's, with no `Variable` left, was never parsed:
    # tests/test_prefilter.py).
    Case("accumulated_perplexity", frozenset({"VF101", "VF110", "VF401"}),
         grads=("encoder_grad", "decoder_grad"),
         graph_before="T{8}", graph_after="T{5}F{3}",
         repair=Repair("total_loss[0]", "total_loss.tolist()", IndexError, "invalid index of a 0-dim tensor")),
    # The scalar shapes behind rebindings VF401 reads since: `criterion = criterion.cuda()`,
    # `total = total[0] / n` after the loop, the builtin `sum` of per-parameter sums.
    Case("rebound_scalars", frozenset({"VF101", "VF110", "VF401"}),
         grads=("grad",),
         graph_before="T{7}", graph_after="T{3}F{4}",
         repair=Repair(".data[0]", ".data.tolist()", IndexError, "invalid index of a 0-dim tensor",
                       more=(("total[0]", "total.tolist()"),))),
    # DDPG's `to_tensor(ndarray, volatile=False, ...)` (issue 22's dead flags): once the calls
    # passing True carry regions, the parameter and every `volatile=` argument go (VF105, on by
    # default), as the human migrations did; the target networks' pass loses its graph.
    Case("dead_volatile_flag", frozenset({"VF103", "VF202"}),
         inference=("target",), grads=("critic_grad", "critic_weight"),
         graph_before="(TTTT){2}", graph_after="(FFFT){2}"),
    # A helper handing its flag only back to itself for a list (issue 22's dead flags): the
    # parameter goes with every argument, the recursive one too; prediction loses its graph.
    Case("recursive_flag_helper", frozenset({"VF103"}),
         inference=("last_output",), grads=("weight", "grad"),
         graph_before="T{8}", graph_after="T{4}F{4}"),
    # The ImageNet example's `accuracy()` (issue 22): each top-k precision is a count summed
    # over the one dimension of `correct[:k].view(-1)`, read by the loops with `prec1[0]`
    # (0-dim since 0.4). The repair reads each as 0.3 did, a Python number.
    Case("topk_accuracy", frozenset({"VF101", "VF110", "VF401"}),
         grads=("grad", "weight"),
         graph_before="T{5}", graph_after="T{3}F{2}",
         repair=Repair("loss.data[0]", "loss.data.tolist()", IndexError, "invalid index of a 0-dim tensor",
                       more=(("prec1[0]", "prec1.tolist()"), ("prec3[0]", "prec3.tolist()")))),
    # Issue 22's last scalar shapes, from real code: per-sample losses rebound to their means
    # (flownet2), a dict of named losses read over `.items()` (neural-motifs), BEGAN's number
    # kept on the trainer, ImageNet-style accuracy over `correct = correct.view(-1)`, a loss
    # unpacked from a method's tuple as a NumPy array (`loss.data.cpu().numpy()`, then
    # `loss[0]`: unsafe fix, a NumPy scalar became a Python number). The repair reads each as
    # 0.3 did.
    Case("hidden_scalars", frozenset({"VF101", "VF110", "VF401"}),
         grads=("weight",),
         graph_before="T{10}", graph_after="T{6}F{4}",
         repair=Repair(".data[0]", ".data.tolist()", IndexError, "too many indices for array",
                       more=(("loss[0]", "loss.tolist()"), ("numpy()[0]", "numpy().tolist()")))),
    # Reads that are 0-dim only by the ranks of what they index (issue 22): a pointer cache's
    # probability picked from a row of `softmax(output.view(-1, ntokens))` (awd-lstm-lm), a
    # beam's order walked row by row after `topk` (pytorch-seq2seq), times of shape (1,)
    # joined by `torch.cat` and their `torch.std(..., 0)` (pyro). The repair reads each as 0.3 did.
    Case("ranked_reads", frozenset({"VF101", "VF110", "VF111", "VF401"}),
         inference=("scores",),
         graph_before="T{4}", graph_after="F{4}",
         repair=Repair(".data[0]", ".data.tolist()", IndexError, "invalid index of a 0-dim tensor")),
    # Multi-scale SSIM (pytorch-msssim): per-scale SSIM values that are 0-dim only while
    # `size_average` keeps its default, joined by `torch.cat` (VF404 through the default), and
    # `.data[0]` of the similarity (the last scale's value, 0-dim). The repair stacks and reads
    # as 0.3 did; a denoiser trains on `1 - msssim(...)` and is evaluated with volatile inputs.
    Case("multiscale_ssim", frozenset({"VF101", "VF110", "VF401", "VF404"}),
         inference=("restored",), grads=("weight",),
         graph_before="T{3}", graph_after="T{2}F",
         repair=Repair("mssim = torch.cat(mssim)", "mssim = torch.stack(mssim)", RuntimeError,
                       "zero-dimensional tensor", more=(("mcs = torch.cat(mcs)", "mcs = torch.stack(mcs)"),
                                                        (".data[0]", ".data.tolist()")))),
    # WGAN's `one`/`mone` gradients (VF403): the critic's mean had shape (1,) in 0.3 and is
    # 0-dim today, where `backward` refuses a gradient of shape (1,). The repair squeezes the
    # gradient as the fix's `torch.tensor(1, dtype=torch.float)` does, and reads the numbers
    # as 0.3 did; the noise the critic step draws is inference (a region), the sampling too.
    Case("wgan_critic", frozenset({"VF101", "VF110", "VF401", "VF403"}),
         inference=("samples",), grads=("G_weight", "D_weight"),
         graph_before="T{12}", graph_after="(TFT){3}TTF",
         repair=Repair("one = torch.FloatTensor([1])", "one = torch.FloatTensor([1]).squeeze()",
                       RuntimeError, "Mismatch in shape",
                       more=((".data[0]", ".data.tolist()"),))),
    # A volatile batch through an encoder that rebuilds its features from `.data` (the
    # image-captioning tutorial): 0.3 trained the encoder's linear layer on them, so the call
    # gets no region and the layer still trains; the repair reads the loss as 0.3 did.
    Case("caption_encoder", frozenset({"VF101", "VF110", "VF401"}),
         grads=("linear_weight",),
         graph_before="T{4}", graph_after="T{4}",
         repair=Repair("loss.data[0]", "loss.data.tolist()", IndexError, "invalid index of a 0-dim tensor")),
    # `Variable` is never imported (issue 22): each call raised NameError. The calls are
    # unwrapped as torch's (unsafe fixes); the repair is the import the author forgot.
    Case("unbound_variable", frozenset({"VF101", "VF110"}),
         inference=("last_output",), grads=("fc1_grad", "fc2_grad"),
         graph_before="T{5}", graph_after="T{3}F{2}",
         repair=Repair("import torch.optim as optim\n",
                       "import torch.optim as optim\nfrom torch.autograd import Variable\n",
                       NameError, "name 'Variable' is not defined")),
    # Actor-critic with 0.3's two removed arguments: `probs.multinomial()` drew one sample
    # (VF303) and `policy_loss.backward(retain_variables=True)` kept the shared graph for the
    # value loss (VF302). Both raise TypeError today; the fixes pass what 0.3 meant, so the
    # same actions are drawn and the same gradients reach the shared body. The evaluation
    # rollout is volatile (a region). The repair spells the two calls and the loss reads as
    # today's torch takes them.
    Case("actor_critic_corridor", frozenset({"VF101", "VF110", "VF302", "VF303", "VF401"}),
         inference=("last_probs",), grads=("body_grad", "value_grad", "policy_weight"),
         graph_before="T+", graph_after="T+F+",
         repair=Repair("probs.multinomial()", "probs.multinomial(1)", TypeError, "num_samples",
                       more=(("retain_variables=True", "retain_graph=True"),
                             ("policy_loss.data[0], value_loss.data[0]",
                              "policy_loss.data.tolist(), value_loss.data.tolist()")))),
    # Legacy autograd Functions (`forward(self, ...)`, called as `BinActive()(x)`, and
    # `ScaleGrad(0.5)(x)` with its setting in `__init__`), which PyTorch 1.5 removed (VF501):
    # the fix makes their methods static ones of `ctx`, moves the setting to `apply`, so the
    # scaled straight-through gradient still reaches `fc1`. The repair is the same conversion
    # by hand, keeping the name `self` for the context.
    Case("binarized_net", frozenset({"VF101", "VF110", "VF401", "VF501"}),
         inference=("output",), grads=("fc1_grad", "fc2_grad"),
         graph_before="TT", graph_after="TF",
         repair=Repair("    def forward(self, input):", "    @staticmethod\n    def forward(self, input):",
                       RuntimeError, "Legacy autograd function",
                       more=(("    def backward(self, grad_output):",
                              "    @staticmethod\n    def backward(self, grad_output):"),
                             ("BinActive()(", "BinActive.apply("),
                             ("    def __init__(self, scale):\n        self.scale = scale\n\n", ""),
                             ("        return input.view_as(input)",
                              "        self.scale = scale\n        return input.view_as(input)"),
                             ("    def forward(self, input):\n        self.scale",
                              "    def forward(self, input, scale):\n        self.scale"),
                             ("return grad_output * self.scale", "return grad_output * self.scale, None"),
                             ("ScaleGrad(0.5)(self.fc1(x))", "ScaleGrad.apply(self.fc1(x), 0.5)"),
                             ("return loss.data[0]", "return loss.data.tolist()")))),
]
CASE_IDS = [case.name for case in CASES]
# Programs only the differential tests judge (their 0.3 run is the oracle): the volatile-free
# shapes whose unsafe fix changes what the program does on torch 2.x today, on purpose, as its
# note says, so "the same results as the original on 2.x" is not what the fix promises.
DIFFERENTIAL_ONLY = {
    # VF112: a wrapper's `type(x) != Variable` guard, always true today (tensors are wrapped
    # again); the fix restores 0.3's skip for tensors (test_differential: KNOWN_DIFFERENCES).
    "wrapper_type_guard": frozenset({"VF111", "VF112"}),
}


def test_every_example_has_a_case():
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == sorted(CASE_IDS + list(DIFFERENTIAL_ONLY))


# --------------------------------------------------------------------------- running


@dataclass
class Runs:
    original_source: str
    fixed_source: str
    before: Outcome
    after: Outcome


_runs: Dict[str, Runs] = {}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("semantic")


def runs_for(case: Case, workdir: Path) -> Runs:
    if case.name not in _runs:
        original = (EXAMPLES / f"{case.name}.py").read_text(encoding="utf-8")
        config = Config(extend_select=case.extend_select) if case.extend_select else None
        fixed_result = fix_source(original, path=f"{case.name}.py", unsafe_fixes=True, config=config)
        assert fixed_result.error is None, fixed_result.error
        fixed = fixed_result.fixed_source
        runnable = original
        if case.repair is not None:
            runnable = case.repair.apply(original)
        before = run_program(runnable, workdir, f"{case.name}_original")
        after = run_program(fixed, workdir, f"{case.name}_fixed")
        _runs[case.name] = Runs(original, fixed, before, after)
    return _runs[case.name]


def succeeded(outcome: Outcome, what: str, source: str) -> Dict[str, Any]:
    if outcome.error is not None:
        pytest.fail(f"the {what} program raised:\n{outcome.error}\n--- source ---\n{source}")
    return outcome.result


def both_results(case: Case, workdir: Path):
    runs = runs_for(case, workdir)
    return (succeeded(runs.before, "original", runs.original_source),
            succeeded(runs.after, "fixed", runs.fixed_source))


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_fix_removes_the_legacy_api(case, workdir):
    runs = runs_for(case, workdir)
    assert legacy_names_in(runs.original_source), "the example has no legacy code"
    assert runs.fixed_source != runs.original_source
    left = [name for name in legacy_names_in(runs.fixed_source) if name.split()[1] not in case.keeps]
    assert left == [], runs.fixed_source


@pytest.mark.parametrize("case", [c for c in CASES if c.repair], ids=lambda c: c.name)
def test_original_fails_on_a_modern_stack(case, tmp_path):
    """Why the repair exists: the untouched original breaks on Python 3.11 / torch 2.x,
    while the fixed program runs (checked by the other tests)."""
    source = (EXAMPLES / f"{case.name}.py").read_text(encoding="utf-8")
    if case.repair.at_compile:
        with pytest.raises(case.repair.error):
            compile(source, f"{case.name}.py", "exec")
        return
    outcome = run_program(source, tmp_path, case.name)
    assert outcome.error is not None, "the original ran without its repair"
    last_line = outcome.error.strip().splitlines()[-1]
    assert last_line.startswith(case.repair.error.__name__), last_line
    assert case.repair.match in last_line, last_line


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_volatile_warnings_are_gone(case, workdir):
    runs = runs_for(case, workdir)
    both_results(case, workdir)
    # The original passes volatile=True at run time: the recorder must see PyTorch say so.
    assert volatile_warnings(runs.before), runs.before.warnings
    assert volatile_warnings(runs.after) == []


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_same_results(case, workdir):
    before, after = both_results(case, workdir)
    assert_same(before, after, case.name)


@pytest.mark.parametrize("case", [c for c in CASES if c.inference], ids=lambda c: c.name)
def test_inference_results_carry_no_graph(case, workdir):
    before, after = both_results(case, workdir)
    for key in case.inference:
        # Today the legacy program records a graph here (SEMANTICS.md E2d): memory it
        # did not spend under 0.3, where volatile outputs had no grad_fn (fact 2).
        assert before[key].requires_grad and before[key].grad_fn is not None, key
        assert after[key].requires_grad is False, key
        assert after[key].grad_fn is None, key


@pytest.mark.parametrize("case", [c for c in CASES if c.grads], ids=lambda c: c.name)
def test_training_gradients_unchanged(case, workdir):
    before, after = both_results(case, workdir)
    for key in case.grads:
        assert isinstance(before[key], torch.Tensor), f"{key}: no gradient in the original"
        assert isinstance(after[key], torch.Tensor), f"{key}: no gradient after the fix"
        assert torch.count_nonzero(after[key]) > 0, f"{key}: all zero"
        assert_same(before[key], after[key], key)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_graphs_recorded_only_where_training(case, workdir):
    runs = runs_for(case, workdir)
    both_results(case, workdir)
    assert re.fullmatch(case.graph_before, runs.before.graph), runs.before.graph
    assert re.fullmatch(case.graph_after, runs.after.graph), runs.after.graph
    # The fix changes where graphs are recorded, never how many forward calls run.
    assert len(runs.after.graph) == len(runs.before.graph)


@pytest.mark.parametrize("case", [c for c in CASES if c.trains], ids=lambda c: c.name)
def test_training_step_is_not_wrapped(case, workdir):
    """The volatile value is a regression target inside a step that calls backward():
    wrapping that step in a no-grad region would stop it training (SPEC.md §2.4)."""
    fixed = runs_for(case, workdir).fixed_source
    assert "no_grad" not in fixed and "set_grad_enabled" not in fixed, fixed


def test_scalar_reads_become_item_and_the_row_read_stays(workdir):
    case = next(c for c in CASES if c.name == "scalar_logging")
    before, after = both_results(case, workdir)
    fixed = runs_for(case, workdir).fixed_source.split('"""', 2)[2]  # the code after the docstring
    assert fixed.count(".data[0]") == 1 and "first_scores = outputs.data[0]" in fixed, fixed
    assert fixed.count(".item()") == 4, fixed
    # 0.3 read Python numbers; so does the fixed program (the original cannot run today).
    assert isinstance(after["mean_loss"], float) and isinstance(after["correct"], int)
    assert after["first_scores"].shape == (4,)


def test_a_project_wrapper_leaves_nothing_after_unsafe_fixes():
    """RL-Adventure's `Variable` lambda: once the calls through it are fixed, nothing is left
    to report (the forwarded call inside it used to be a VF110 no fix could remove, so
    `fix --unsafe-fixes` ended with exit 1 for good)."""
    source = (EXAMPLES / "lambda_variable_wrapper.py").read_text(encoding="utf-8")
    fixed = fix_source(source, path="lambda_variable_wrapper.py", unsafe_fixes=True)
    assert fixed.diagnostics == (), [d.text for d in fixed.diagnostics]
    assert check_source(fixed.fixed_source, path="lambda_variable_wrapper.py").diagnostics == ()


def test_missed_scalar_reads_become_item(workdir):
    case = next(c for c in CASES if c.name == "vae_loss_logging")
    before, after = both_results(case, workdir)
    fixed = runs_for(case, workdir).fixed_source.split('"""', 2)[2]
    assert ".data[0]" not in fixed and "total_mse[0]" not in fixed, fixed
    assert fixed.count(".item()") == 5, fixed
    assert all(isinstance(after[key], float) for key in ("train_loss", "test_loss", "mse", "corner"))
    assert all(isinstance(v, float) for row in after["per_term"] for v in row)


# ------------------------------------------------- volfix check / fix on the examples


def example_sources() -> Dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.py"))}


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_check_reports_expected_codes(case):
    source = (EXAMPLES / f"{case.name}.py").read_text(encoding="utf-8")
    result = check_source(source, path=f"{case.name}.py")
    assert {d.code for d in result.diagnostics} == case.codes, \
        [f"{d.location.row}:{d.location.column} {d.code} {d.text}" for d in result.diagnostics]


@pytest.fixture
def examples_copy(tmp_path, monkeypatch) -> Path:
    """The examples in a throwaway repository, with the current directory at its root."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    for name in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    return Path(shutil.copytree(EXAMPLES, tmp_path / "legacy"))


FINDING = re.compile(r"^(?P<path>\S[^:]*):(?P<row>\d+):(?P<col>\d+): (?P<code>VF\d{3})\b")


def cli(*args: str):
    from click.testing import CliRunner

    from volfix.cli.commands import main

    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_check_reports_findings_in_every_example(examples_copy):
    result = cli("check", "--format", "concise", "--no-cache", "legacy")
    assert result.exit_code == 1, result.output
    found: Dict[str, set] = {}
    for line in result.stdout.splitlines():
        match = FINDING.match(line)
        if match:
            # `mnist_eval` for a program, `lm_package/data` for a module of the package.
            name = Path(match["path"]).relative_to("legacy").with_suffix("").as_posix()
            found.setdefault(name, set()).add(match["code"])
    expected = {case.name: set(case.codes) for case in CASES}
    expected.update((name, set(codes)) for name, codes in DIFFERENTIAL_ONLY.items())
    expected.update((f"{PACKAGE.name}/{module}", set(codes)) for module, codes in PACKAGE_CODES.items())
    assert found == expected, result.stdout


def test_fixing_every_example_compiles_and_converges():
    for name, source in example_sources().items():
        first = fix_source(source, path=name, unsafe_fixes=True)
        assert first.error is None, f"{name}: {first.error}"
        compile(first.fixed_source, name, "exec")
        leftovers = [f"{d.location.row}:{d.location.column} {d.code} {d.text}"
                     for d in first.diagnostics if d.is_applicable(unsafe_fixes=True)]
        assert leftovers == [], f"{name}: fixable findings remain: {leftovers}"
        second = fix_source(first.fixed_source, path=name, unsafe_fixes=True)
        assert second.fixed_source == first.fixed_source, f"{name}: a second fix changed it"
        assert second.fixed_count == 0, name


def test_cli_fix_matches_the_api_and_leaves_nothing_to_fix(examples_copy):
    results = {name: fix_source(source, path=name, unsafe_fixes=True)
               for name, source in example_sources().items()}
    expected = {name: r.fixed_source for name, r in results.items()}
    # The walk also fixes the package in legacy/lm_package/ (its own tests are below).
    package = check_paths([str(examples_copy / PACKAGE.name)], mode="diff", unsafe_fixes=True,
                          use_cache=False)
    remaining = any(r.diagnostics for r in list(results.values()) + package)
    result = cli("fix", "--unsafe-fixes", "--no-cache", "legacy")
    # 1 when findings without an applicable fix remain, else 0 (SPEC.md §4).
    assert result.exit_code == (1 if remaining else 0), result.output
    written = {p.name: p.read_text(encoding="utf-8") for p in sorted(examples_copy.glob("*.py"))}
    assert written == expected
    again = cli("fix", "--unsafe-fixes", "--no-cache", "legacy")
    assert again.exit_code == result.exit_code, again.output
    assert {p.name: p.read_text(encoding="utf-8") for p in sorted(examples_copy.glob("*.py"))} \
        == written


# ------------------------------------------- what 0.3 did that run() cannot compare


_kept = itertools.count()


def run_and_keep_module(source: str, directory: Path, label: str):
    """Like run_program, but returns the module too, for state that run() leaves out."""
    path = directory / f"{label}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"_volfix_semantic_kept_{next(_kept)}", path)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
        result = module.run()
    return module, result


def test_hook_checks_follow_grad_mode_as_in_0_3(workdir):
    """In 0.3 the forward hook saw `input[0].volatile == True` in the volatile evaluation
    pass and recorded nothing, and forward() registered no gradient hook there. Today
    `.volatile` always reads False (SEMANTICS.md fact 17), so the original also records
    statistics while evaluating: the one observable on which the original and the fixed
    program must differ, which is why run() leaves it out. The fix must do what 0.3 did."""
    case = next(c for c in CASES if c.name == "hook_volatile_checks")
    runs = runs_for(case, workdir)
    original, before = run_and_keep_module(runs.original_source, workdir, "hook_state_original")
    fixed, after = run_and_keep_module(runs.fixed_source, workdir, "hook_state_fixed")
    steps = len(before["losses"])
    # The broken behaviour the fix repairs: the hook fired for the evaluation batch too.
    assert len(original.activation_stats) == steps + 1
    # 0.3: statistics and saved gradients only from the passes that recorded history.
    assert len(fixed.activation_stats) == steps, runs.fixed_source
    assert fixed.activation_stats == after["train_stats"]
    assert len(fixed.saved_grads) == steps


# ----------------------------------------- a program split over modules (lm_package)

# The codes `volfix check` reports for each module of examples/legacy/lm_package. main.py
# calls data.get_batch(..., evaluation=True): a volatile source in another file.
PACKAGE_CODES = {"data": frozenset({"VF103", "VF110"}),
                 "main": frozenset({"VF101", "VF110"}),
                 "metrics": frozenset({"VF401"}),  # no `import torch`: its tensors come from main.py
                 "model": frozenset({"VF110"})}


# Hand edits that let the original package run on torch 2.x (see `Repair`): metrics.py's
# count read with `.data[0]`, a Python number in 0.3.
PACKAGE_REPAIRS = {"metrics.py": Repair(".data[0]", ".data.tolist()", IndexError, "invalid index of a 0-dim tensor")}


def package_sources(directory: Path) -> Dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(directory.glob("*.py"))}


@dataclass
class PackageRuns:
    original: Dict[str, str]
    fixed: Dict[str, str]
    fixed_dir: Path
    check: List[Any]
    before: Outcome
    after: Outcome


@pytest.fixture(scope="module")
def package_runs(tmp_path_factory) -> PackageRuns:
    base = tmp_path_factory.mktemp("package")
    original_dir = Path(shutil.copytree(PACKAGE, base / "original" / PACKAGE.name,
                                        ignore=shutil.ignore_patterns("__pycache__")))
    fixed_dir = Path(shutil.copytree(original_dir, base / "fixed" / PACKAGE.name))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(base)
        check = run_volfix(original_dir, "check")
        results = run_volfix(fixed_dir, "fix")
    errors = [f"{r.path}: {r.error}" for r in results if r.error]
    assert errors == []
    # Read the sources before running: importing writes __pycache__ beside them.
    original, fixed = package_sources(original_dir), package_sources(fixed_dir)
    for name, repair in PACKAGE_REPAIRS.items():  # after the check and the fix saw the original
        path = original_dir / name
        path.write_text(repair.apply(path.read_text(encoding="utf-8")), encoding="utf-8")
    return PackageRuns(original, fixed, fixed_dir, check,
                       run_package(original_dir), run_package(fixed_dir))


def test_package_original_fails_on_a_modern_stack(tmp_path):
    """Why PACKAGE_REPAIRS exist: the untouched package breaks on torch 2.x."""
    directory = Path(shutil.copytree(PACKAGE, tmp_path / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__")))
    outcome = run_package(directory)
    assert outcome.error is not None, "the original package ran without its repairs"
    last_line = outcome.error.strip().splitlines()[-1]
    for repair in PACKAGE_REPAIRS.values():
        assert last_line.startswith(repair.error.__name__) and repair.match in last_line, last_line


def run_volfix(directory: Path, mode: str):
    from volfix.run import runner
    from volfix.run.options import RunOptions

    return runner.run([str(directory)], config=Config(),
                      options=RunOptions(mode=mode, unsafe_fixes=True, use_cache=False))


def package_results(runs: PackageRuns):
    return (succeeded(runs.before, "original package", "\n".join(runs.original.values())),
            succeeded(runs.after, "fixed package", "\n".join(runs.fixed.values())))


def test_package_helpers_check_reports_expected_codes(package_runs):
    found = {Path(r.path).stem: {d.code for d in r.diagnostics} for r in package_runs.check}
    assert found == {name: set(codes) for name, codes in PACKAGE_CODES.items()}, \
        [f"{r.path}:{d.location.row}:{d.location.column} {d.code} {d.text}"
         for r in package_runs.check for d in r.diagnostics]


def test_package_helpers_fix_removes_the_legacy_api(package_runs):
    assert package_runs.fixed != package_runs.original
    left = {name: legacy_names_in(source) for name, source in package_runs.fixed.items()}
    assert all(names == [] for names in left.values()), (left, package_runs.fixed)


def test_package_helpers_volatile_warnings_are_gone(package_runs):
    package_results(package_runs)
    assert volatile_warnings(package_runs.before), package_runs.before.warnings
    assert volatile_warnings(package_runs.after) == []


def test_package_helpers_same_results(package_runs):
    before, after = package_results(package_runs)
    assert_same(before, after, PACKAGE.name)


def test_package_helpers_evaluation_carries_no_graph(package_runs):
    before, after = package_results(package_runs)
    # get_batch(..., evaluation=True) in main.py, defined in data.py: in 0.3 the batch
    # was volatile and so was the model output computed from it.
    assert before["val_output"].grad_fn is not None
    assert after["val_output"].requires_grad is False
    assert after["val_output"].grad_fn is None


def test_package_helpers_training_gradients_unchanged(package_runs):
    before, after = package_results(package_runs)
    for key in ("encoder_grad", "decoder_grad"):
        assert isinstance(after[key], torch.Tensor), f"{key}: no gradient after the fix"
        assert torch.count_nonzero(after[key]) > 0, f"{key}: all zero"
        assert_same(before[key], after[key], key)


def test_package_helpers_graphs_recorded_only_where_training(package_runs):
    package_results(package_runs)
    # Three training chunks record; the three evaluation chunks record only before the fix.
    assert package_runs.before.graph == "TTTTTT"
    assert package_runs.after.graph == "TTTFFF", package_runs.fixed


def test_package_helpers_second_fix_changes_nothing(package_runs, tmp_path, monkeypatch):
    again = Path(shutil.copytree(package_runs.fixed_dir, tmp_path / PACKAGE.name,
                                 ignore=shutil.ignore_patterns("__pycache__")))
    monkeypatch.chdir(tmp_path)
    results = run_volfix(again, "fix")
    assert [r.path for r in results if r.changed or r.fixed_count] == []
    assert package_sources(again) == package_runs.fixed
