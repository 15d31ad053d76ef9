"""The traced run: `python -m volfix.verify._trace [options] -- (script.py | -m module | -c code) args...`

Runs the program in this process, as `python script.py args...` would, and writes a trace as
JSON lines to `--out`:

    {"e": "start", "legacy": true, "torch": "2.13.0"}
    {"e": "forward", "module": "Net", "file": "eval.py", "line": 40, "func": "evaluate",
     "training": false, "grad": true, "graph": false, "saved": 0, "raised": null}
    {"e": "backward", "kind": "backward", "file": ..., "line": ..., "func": ..., "error": null}
    {"e": "step", "optimizer": "SGD", "file": ..., "line": ..., "func": ..., "error": null}
    {"e": "scalar_read", "file": "eval.py", "line": 52, "end_line": 52, "col": 16, "end_col": 28,
     "text": "loss.data[0]", "variable": false, "bool": false, "mixed": false}
    {"e": "scalar_gradient", "file": "wgan.py", "line": 30, "func": "critic_step", "end_line": 30,
     "col": 4, "end_col": 25, "text": "D_real.backward(mone)"}
    {"e": "exit", "status": 0, "exception": null}

`forward` is a top-level `nn.Module` call (one not made inside another module's forward);
its site is the innermost frame of the user's code (a file under `--root`) that led to it.
`saved` is the bytes autograd saved for backward during the call (parameters and views of
them, which are held anyway, are not counted; a tensor counts once a call). `scalar_read`
(legacy runs only) is a `[0]` the program made on a one-element value, once per expression:
0.3 gave it a number, today it raises; its position is the expression's (Python >= 3.11,
else the line only). `mixed` says the expression also indexed a value with dimensions (then
a second record says so, if that came later). `scalar_gradient` (legacy runs only, the fields
of `scalar_read` but the last three) is a `backward` that gave a one-element root a gradient of
shape (1,), once per call site: it matched 0.3's root, today it raises. A `scalar_read` with
`"list": true` is a `.tolist()` of a one-element value (its position is the call's): 0.3's list
of one number, today the number. With `--legacy` the program
runs under `volfix.legacy.legacy_semantics()`: PyTorch 0.3's meaning of `volatile`.

torch is imported here only: volfix itself never needs it. Without torch the trace is a
single `{"e": "error", "torch_missing": true}` line and the exit status is 3.
"""
from __future__ import annotations

import builtins
import contextlib
import itertools
import json
import os
import random
import sys
import threading
import traceback
import types
from typing import Any, Dict, List, Optional

from volfix.verify._status import TORCH_MISSING_STATUS

_SEED = 0
_THIS_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../volfix


class _Options:
    def __init__(self, argv: List[str]) -> None:
        self.out = ""
        self.root = os.getcwd()
        self.legacy = False
        self.strict = False
        while argv and argv[0] != "--":
            flag = argv.pop(0)
            if flag == "--out":
                self.out = argv.pop(0)
            elif flag == "--root":
                self.root = argv.pop(0)
            elif flag == "--legacy":
                self.legacy = True
            elif flag == "--strict":
                self.strict = True
            else:
                raise SystemExit(f"volfix.verify._trace: unknown option {flag}")
        if not argv or not self.out:
            raise SystemExit("usage: python -m volfix.verify._trace --out FILE [--root DIR] "
                             "[--legacy] -- (script.py | -m module | -c code) [args...]")
        self.program = argv[1:]


class _Sites:
    """Which frames are the user's code, and how a site is written (path relative to root)."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root) + os.sep
        self._known: Dict[str, Optional[str]] = {}

    def relative(self, filename: str) -> Optional[str]:
        known = self._known.get(filename, False)
        if known is not False:
            return known
        rel: Optional[str] = None
        if filename.startswith("<") and filename in ("<string>", "<stdin>"):
            rel = filename
        elif not filename.startswith("<"):
            path = os.path.realpath(filename)
            if (path.startswith(self.root) and not path.startswith(_THIS_PACKAGE + os.sep)
                    and "site-packages" not in path and "dist-packages" not in path):
                rel = path[len(self.root):].replace(os.sep, "/")
        self._known[filename] = rel
        return rel

    def user_frame(self, frame):
        """The innermost frame of the user's code at or above `frame` (None: there is none)."""
        while frame is not None and self.relative(frame.f_code.co_filename) is None:
            frame = frame.f_back
        return frame

    def site(self, frame) -> Dict[str, Any]:
        while frame is not None:
            rel = self.relative(frame.f_code.co_filename)
            if rel is not None:
                code = frame.f_code
                return {"file": rel, "line": frame.f_lineno,
                        "func": getattr(code, "co_qualname", code.co_name)}
            frame = frame.f_back
        return {"file": None, "line": None, "func": None}


class _Tracer:
    def __init__(self, torch, out, sites: _Sites) -> None:
        self.torch = torch
        self.out = out
        self.sites = sites
        self.local = threading.local()
        self.lock = threading.Lock()

    def write(self, record: Dict[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with self.lock:
            self.out.write(line)

    # --- forward ------------------------------------------------------------------------

    def install(self) -> None:
        torch = self.torch
        tracer = self
        original_call = torch.nn.Module.__call__

        def traced_call(module, *args, **kwargs):
            local = tracer.local
            if getattr(local, "depth", 0):
                local.depth += 1
                try:
                    return original_call(module, *args, **kwargs)
                finally:
                    local.depth -= 1
            return tracer.top_level_forward(original_call, module, args, kwargs)

        torch.nn.Module.__call__ = traced_call
        self._wrap_backward()
        from torch.optim.optimizer import (
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )
        register_optimizer_step_pre_hook(self._step_pre)
        register_optimizer_step_post_hook(self._step_post)

    def top_level_forward(self, call, module, args, kwargs):
        torch = self.torch
        record = {"e": "forward", "module": type(module).__qualname__,
                  **self.sites.site(sys._getframe(2)),
                  "training": bool(module.training),
                  "grad": torch.is_grad_enabled() and not torch.is_inference_mode_enabled(),
                  "graph": False, "saved": 0, "raised": None}
        counter = _SavedBytes(torch)
        self.local.depth = 1
        try:
            with counter.hooks():
                output = call(module, *args, **kwargs)
        except BaseException as error:
            record["raised"] = type(error).__name__
            raise
        else:
            record["graph"] = _has_graph(torch, output)
            return output
        finally:
            self.local.depth = 0
            record["saved"] = counter.total
            self.write(record)

    # --- backward, autograd.grad, optimizer steps -----------------------------------------

    def _wrap_backward(self) -> None:
        torch = self.torch
        for owner, name, kind in ((torch.Tensor, "backward", "backward"),
                                  (torch.autograd, "backward", "autograd.backward"),
                                  (torch.autograd, "grad", "autograd.grad")):
            setattr(owner, name, self._traced(getattr(owner, name), kind))

    def _traced(self, function, kind: str):
        tracer = self

        def traced(*args, **kwargs):
            local = tracer.local
            if getattr(local, "in_backward", False):  # Tensor.backward calls autograd.backward
                return function(*args, **kwargs)
            record = {"e": "backward", "kind": kind, **tracer.sites.site(sys._getframe(1)),
                      "error": None}
            local.in_backward = True
            try:
                return function(*args, **kwargs)
            except BaseException as error:
                record["error"] = _describe(error)
                raise
            finally:
                local.in_backward = False
                tracer.write(record)

        traced.__name__ = getattr(function, "__name__", kind)
        traced.__doc__ = getattr(function, "__doc__", None)
        traced.__wrapped__ = function
        return traced

    def _step_pre(self, optimizer, args, kwargs) -> None:
        steps = getattr(self.local, "steps", None)
        if steps is None:
            steps = self.local.steps = []
        steps.append({"e": "step", "optimizer": type(optimizer).__qualname__,
                      **self.sites.site(sys._getframe(1)), "error": "raised"})

    def _step_post(self, optimizer, args, kwargs) -> None:
        record = self.local.steps.pop()
        record["error"] = None
        self.write(record)

    # --- one-element reads (legacy runs) ---------------------------------------------------

    def watch_scalar_reads(self) -> None:
        """Record, once per expression, each `[0]` (or `[-1]`) that indexes a 0-dim tensor:
        a value 0.3 gave shape (1,), which volfix.legacy answers as 0.3 did and torch >= 0.4
        refuses (IndexError). volfix.legacy calls the hook from its own `__getitem__`. So,
        with `"list": true`, each `.tolist()` of a 0-dim tensor: 0.3's list of one number,
        today the number, so the `[0]` after it raises TypeError."""
        from volfix.legacy import _runtime

        _runtime.scalar_read_hook = self._read_hook(listed=False)
        _runtime.scalar_list_hook = self._read_hook(listed=True)

    def _read_hook(self, listed: bool):
        from volfix.legacy import _runtime

        zero: set = set()  # expressions that indexed (listed) a one-element value (recorded)
        dims: set = set()  # expressions that indexed (listed) a value with dimensions
        mixed: set = set()

        def hook(tensor, frame, zero_dim: bool) -> None:
            key = (frame.f_code, frame.f_lasti)
            if zero_dim:
                if key not in zero:
                    zero.add(key)
                    self.scalar_read(frame, tensor, isinstance(tensor, _runtime.Variable), key in dims, listed)
            elif key not in dims:
                dims.add(key)
                if key in zero and key not in mixed:  # `.item()` would raise on the rows
                    mixed.add(key)
                    self.scalar_read(frame, tensor, False, True, listed)

        return hook

    def scalar_read(self, frame, tensor, variable: bool, mixed: bool, listed: bool = False) -> None:
        """A record of the read at `frame`; `mixed`: the expression also indexed a value with
        dimensions (a helper given a loss and a batch), so its `[0]` is no `.item()`."""
        rel = self.sites.relative(frame.f_code.co_filename)
        if rel is None or rel.startswith("<"):  # not the project's code: nothing to rewrite there
            return
        record = {"e": "scalar_read", "file": rel, "line": frame.f_lineno, "end_line": None,
                  "col": None, "end_col": None, "text": None, "variable": variable,
                  "bool": tensor.dtype is self.torch.bool, "mixed": mixed}
        if listed:
            record["list"] = True
        record.update(_position(frame))
        self.write(record)

    def watch_scalar_gradients(self) -> None:
        """Record, once per call site, each `backward` (or `autograd.grad`) that gives a 0-dim
        root a gradient of shape (1,): 0.3's one-element roots had that shape, so it matched;
        torch >= 0.4 refuses it (`Mismatch in shape`, VF403). volfix.legacy calls the hook
        from its own `autograd.backward`."""
        from volfix.legacy import _runtime

        seen: set = set()

        def hook(root, frame) -> None:
            frame = self.sites.user_frame(frame)
            if frame is None or (frame.f_code, frame.f_lasti) in seen:
                return
            seen.add((frame.f_code, frame.f_lasti))
            record = {"e": "scalar_gradient", **self.sites.site(frame), "end_line": None, "col": None,
                      "end_col": None, "text": None}
            record.update(_position(frame))
            self.write(record)

        _runtime.scalar_gradient_hook = hook

    def unfinished_steps(self) -> None:
        """Steps whose pre hook ran and whose post hook never did: they raised."""
        for record in getattr(self.local, "steps", None) or []:
            self.write(record)


def _position(frame) -> Dict[str, Any]:
    """The position and text of the expression `frame` runs (Python >= 3.11; else nothing)."""
    positions = getattr(frame.f_code, "co_positions", None)
    position = next(itertools.islice(positions(), frame.f_lasti // 2, None), None) \
        if positions is not None else None
    if position is None or None in position:
        return {}
    line, end_line, col, end_col = position
    return {"line": line, "end_line": end_line, "col": col, "end_col": end_col,
            "text": _segment(frame.f_code.co_filename, *position)}


class _SavedBytes:
    """Pack/unpack hooks that count what autograd saves and hand the tensor back as it is.

    Hooks turn off autograd's check that a saved tensor was not modified in place before
    backward, so the version is kept with the tensor and checked here: a program that raised
    that error without the tracer raises it with the tracer too."""

    def __init__(self, torch) -> None:
        self.total = 0
        self._seen = set()
        self._torch = torch
        self._disable = torch._C.DisableTorchFunctionSubclass

    def hooks(self):
        """The hooks as a context; none where saved-tensor hooks are disabled (some torch
        features refuse them), so the program runs as it would, without a byte count."""
        torch = self._torch
        if not torch._C._autograd._saved_tensors_hooks_is_enabled():
            return contextlib.nullcontext()
        return torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)

    def pack(self, tensor):
        with self._disable():
            version = tensor._version
            base = tensor._base if tensor._base is not None else tensor
            if not (base.is_leaf and base.requires_grad):  # parameters (and views of them) are held anyway
                try:
                    key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tensor.numel())
                except (RuntimeError, NotImplementedError):  # sparse and other storage-less layouts
                    key = id(tensor)
                if key not in self._seen:
                    self._seen.add(key)
                    self.total += tensor.numel() * tensor.element_size()
        return tensor, version

    @staticmethod
    def unpack(packed):
        tensor, version = packed
        if tensor._version != version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{tensor.type()} {list(tensor.shape)}] is at version "
                f"{tensor._version}; expected version {version} instead.")
        return tensor


def _has_graph(torch, value) -> bool:
    if isinstance(value, torch.Tensor):
        return value.requires_grad
    if isinstance(value, (list, tuple)):
        return any(_has_graph(torch, item) for item in value)
    if isinstance(value, dict):
        return any(_has_graph(torch, item) for item in value.values())
    return False


def _segment(filename: str, line: int, end_line: int, col: int, end_col: int) -> Optional[str]:
    """The source text between two positions (columns are UTF-8 byte offsets)."""
    import linecache

    lines = [linecache.getline(filename, n).encode("utf-8") for n in range(line, end_line + 1)]
    if not lines or not lines[0]:
        return None
    if len(lines) == 1:
        return lines[0][col:end_col].decode("utf-8", "replace")
    return b"".join([lines[0][col:], *lines[1:-1], lines[-1][:end_col]]).decode("utf-8", "replace")


def _describe(error: BaseException) -> str:
    message = str(error).strip().splitlines()
    return type(error).__name__ + (f": {message[0][:200]}" if message else "")


def _exception_record(error: BaseException, sites: _Sites) -> Dict[str, Any]:
    site = {"file": None, "line": None, "func": None}
    for frame, line in traceback.walk_tb(error.__traceback__):
        rel = sites.relative(frame.f_code.co_filename)
        if rel is not None:
            site = {"file": rel, "line": line,
                    "func": getattr(frame.f_code, "co_qualname", frame.f_code.co_name)}
    return {"type": type(error).__name__, "message": _describe(error), **site}


def _seed(torch) -> None:
    random.seed(_SEED)
    torch.manual_seed(_SEED)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(_SEED)


def _source(path: str, legacy: bool) -> str:
    if legacy:  # 0.3 scripts may say `x.cuda(async=True)`, a SyntaxError today
        from volfix.legacy import read_script

        return read_script(path)
    import tokenize

    with tokenize.open(path) as handle:
        return handle.read()


def _run_program(program: List[str], legacy: bool) -> None:
    """As `python ...program` would run it: argv, sys.path[0] and `__main__` set up likewise."""
    import runpy

    if program[0] == "-m":
        sys.argv = [program[1], *program[2:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(program[1], run_name="__main__", alter_sys=True)
        return
    if program[0] == "-c":
        sys.argv = ["-c", *program[2:]]
        sys.path[0] = ""
        code = compile(program[1], "<string>", "exec", dont_inherit=True)
        path = None
    else:
        path = program[0]
        sys.argv = list(program)
        sys.path[0] = os.path.dirname(os.path.abspath(path))
        code = compile(_source(path, legacy), path, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __file__=path, __package__=None, __spec__=None,
                         __loader__=None, __cached__=None)
    if path is None:
        del main.__file__
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def _rewrite_async_in_imports(sites: _Sites) -> None:
    """Modules of the project imported by a 0.3 program may say `x.cuda(async=True)` too: when
    one does not compile, its PyTorch `async=` keywords are renamed as for the script
    (`volfix.legacy.read_script`); any other SyntaxError is raised as it was."""
    from importlib.machinery import SourceFileLoader
    from importlib.util import decode_source

    from volfix.syntax.async_keywords import find_async_keywords, replace_keywords

    compile_source = SourceFileLoader.source_to_code

    def source_to_code(self, data, path, *, _optimize=-1):
        try:
            return compile_source(self, data, path, _optimize=_optimize)
        except SyntaxError:
            if sites.relative(path) is None:
                raise
            text = decode_source(data)
            found = [site for site in find_async_keywords(text) if site.safe]
            if not found:
                raise
            return compile_source(self, replace_keywords(text, found, "non_blocking"), path,
                                  _optimize=_optimize)

    SourceFileLoader.source_to_code = source_to_code


def _exit_status(error: SystemExit) -> int:
    code = error.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def main(argv: Optional[List[str]] = None) -> int:
    options = _Options(list(sys.argv[1:] if argv is None else argv))
    out = open(options.out, "w", encoding="utf-8")
    try:
        import torch
    except ImportError as error:
        out.write(json.dumps({"e": "error", "torch_missing": True, "message": str(error),
                              "python": sys.executable}) + "\n")
        out.close()
        return TORCH_MISSING_STATUS
    sites = _Sites(options.root)
    tracer = _Tracer(torch, out, sites)
    tracer.write({"e": "start", "legacy": options.legacy, "torch": torch.__version__})
    _seed(torch)
    status, exception = 0, None
    semantics = contextlib.nullcontext()
    if options.legacy:
        from volfix.legacy import legacy_semantics

        semantics = legacy_semantics(strict=options.strict)
        _rewrite_async_in_imports(sites)
    with semantics:
        tracer.install()
        if options.legacy:
            tracer.watch_scalar_reads()
            tracer.watch_scalar_gradients()
        try:
            _run_program(options.program, options.legacy)
        except SystemExit as stop:
            status = _exit_status(stop)
        except KeyboardInterrupt as error:  # also how a time-out stops the run
            status, exception = 130, _exception_record(error, sites)
        except BaseException as error:  # reported as Python would, and recorded
            traceback.print_exception(type(error), error, error.__traceback__)
            status, exception = 1, _exception_record(error, sites)
        tracer.unfinished_steps()
        tracer.write({"e": "exit", "status": status, "exception": exception})
        out.flush()
    return status


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)
