"""Run a composite GitHub Action's `run:` steps locally, the way the runner would.

`act` is not available here, so this plays the runner's part for `action.yml`, written from
GitHub's documentation of composite actions and expressions:
- `${{ expr }}` in `run`, `env` and `with` is replaced by the expression's value (inputs with
  their defaults, `github.action_path`, `steps.<id>.outcome` / `.outputs.<name>`);
- a step runs when its `if:` holds; an `if:` without a status function (`always()`,
  `success()`, `failure()`, `cancelled()`) means `success() && (...)`, and a step without
  `if:` means `success()`: it is skipped after a failed step;
- `run:` steps execute with `bash --noprofile --norc -eo pipefail <script>` (what
  `shell: bash` means) in the workspace, with `GITHUB_OUTPUT`, `GITHUB_ACTION_PATH` and
  `RUNNER_TEMP` set; what the step appends to `$GITHUB_OUTPUT` becomes its outputs;
- `uses:` steps need GitHub (setup-python, upload-sarif): they are not run, but whether they
  would run and with which `with:` values is recorded.
The action fails when a step that ran failed.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import yaml

_TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_TOKEN = re.compile(r"\s*(?:(?P<op>&&|\|\||==|!=|!|\(|\)|,)|'(?P<str>(?:[^']|'')*)'"
                    r"|(?P<num>\d+(?:\.\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_.-]*))")
STATUS_FUNCTIONS = ("always", "success", "failure", "cancelled")


@dataclass
class StepResult:
    id: Optional[str]
    name: str
    ran: bool
    outcome: str  # "success", "failure" or "skipped"
    outputs: Dict[str, str] = field(default_factory=dict)
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    uses: Optional[str] = None
    would_run: bool = False  # a `uses:` step whose condition holds (it is not played)
    with_: Dict[str, str] = field(default_factory=dict)  # ... and its evaluated inputs


@dataclass
class ActionRun:
    steps: List[StepResult]

    @property
    def failed(self) -> bool:
        return any(s.ran and s.outcome == "failure" for s in self.steps)

    def step(self, key: str) -> StepResult:
        """A step by id, or by name."""
        for s in self.steps:
            if key in (s.id, s.name):
                return s
        raise KeyError(key)


def load_action(path: Path) -> Dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def input_values(action: Dict[str, Any], given: Dict[str, str]) -> Dict[str, str]:
    unknown = set(given) - set(action.get("inputs", {}))
    if unknown:
        raise ValueError(f"inputs not declared by the action: {sorted(unknown)}")
    values = {name: str(spec.get("default", "")) for name, spec in action.get("inputs", {}).items()}
    values.update(given)
    return values


def run_action(action_path: Path, workspace: Path, inputs: Dict[str, str], *, runner_temp: Path,
               env: Optional[Dict[str, str]] = None, preset: Optional[Dict[str, StepResult]] = None
               ) -> ActionRun:
    """Play the action's steps. `preset` gives steps (by id) that already ran: they are not run
    again, their outcome and outputs are used as they are."""
    action = load_action(action_path / "action.yml")
    context = {"inputs": input_values(action, inputs),
               "github": {"action_path": str(action_path), "workspace": str(workspace)},
               "steps": {}}
    done: List[StepResult] = []
    for index, step in enumerate(action["runs"]["steps"]):
        step_id = step.get("id")
        name = step.get("name", step_id or f"step {index + 1}")
        if preset and step_id in preset:
            result = preset[step_id]
        elif not _should_run(step.get("if"), context, done):
            result = StepResult(step_id, name, ran=False, outcome="skipped", uses=step.get("uses"))
        elif "uses" in step:
            with_ = {k: substitute(as_string(v), context, done) for k, v in (step.get("with") or {}).items()}
            result = StepResult(step_id, name, ran=False, outcome="skipped", uses=step["uses"],
                                would_run=True, with_=with_)
        else:
            result = _run_step(step, step_id, name, context, done, action_path, workspace,
                               runner_temp, env or {}, index)
        if step_id:
            context["steps"][step_id] = {"outcome": result.outcome, "conclusion": result.outcome,
                                         "outputs": result.outputs}
        done.append(result)
    return ActionRun(done)


def would_run(step_if: Optional[str], context: Dict[str, Any], done: List[StepResult]) -> bool:
    return _should_run(step_if, context, done)


def _should_run(step_if: Optional[str], context: Dict[str, Any], done: List[StepResult]) -> bool:
    if step_if is None:
        step_if = "success()"
    text = str(step_if).strip()
    match = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.S)
    if match:
        text = match.group(1)
    if not any(re.search(rf"\b{f}\s*\(", text) for f in STATUS_FUNCTIONS):
        text = f"success() && ({text})"
    return truthy(evaluate(text, context, done))


def _run_step(step, step_id, name, context, done, action_path: Path, workspace: Path,
              runner_temp: Path, extra_env: Dict[str, str], index: int) -> StepResult:
    if step.get("shell") != "bash":
        raise ValueError(f"step {name!r}: only `shell: bash` is played here")
    script = substitute(step["run"], context, done)
    step_env = {k: substitute(as_string(v), context, done) for k, v in (step.get("env") or {}).items()}
    output_file = runner_temp / f"github_output_{index}"
    output_file.write_text("")
    script_file = runner_temp / f"step_{index}.sh"
    script_file.write_text(script)
    # The runner's own variables come from here only (not from a CI job running these tests).
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env = {**inherited, **extra_env, **step_env, "GITHUB_OUTPUT": str(output_file),
           "GITHUB_ACTION_PATH": str(action_path), "GITHUB_WORKSPACE": str(workspace),
           "RUNNER_TEMP": str(runner_temp)}
    done_proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
                               cwd=workspace, env=env, capture_output=True, text=True, timeout=900)
    outcome = "success" if done_proc.returncode == 0 else "failure"
    if outcome == "failure" and step.get("continue-on-error") is True:
        outcome = "success"
    return StepResult(step_id, name, ran=True, outcome=outcome, outputs=parse_outputs(output_file.read_text()),
                      returncode=done_proc.returncode, stdout=done_proc.stdout, stderr=done_proc.stderr)


def parse_outputs(text: str) -> Dict[str, str]:
    """`name=value` lines and `name<<DELIMITER ... DELIMITER` blocks, as $GITHUB_OUTPUT takes them."""
    out: Dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            body = []
            i += 1
            while lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            out[key] = "\n".join(body)
        elif "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
        i += 1
    return out


# ---------------------------------------------------------------------------- expressions


def substitute(text: str, context: Dict[str, Any], done: List[StepResult]) -> str:
    return _TEMPLATE.sub(lambda m: as_string(evaluate(m.group(1), context, done)), text)


def as_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def truthy(value: Any) -> bool:
    return value not in (None, False, "", 0)


def evaluate(text: str, context: Dict[str, Any], done: List[StepResult]) -> Any:
    parser = _Parser(tokenize(text), context, done)
    value = parser.expression()
    if parser.tokens:
        raise ValueError(f"unexpected {parser.tokens[0]!r} in {text!r}")
    return value


def tokenize(text: str) -> List[tuple]:
    tokens, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ValueError(f"cannot read the expression {text!r} at {text[pos:]!r}")
        pos = match.end()
        kind = match.lastgroup
        value = match.group(kind)
        tokens.append((kind, value.replace("''", "'") if kind == "str" else value))
    return tokens


class _Parser:
    """or := and ('||' and)*; and := not ('&&' not)*; not := '!' not | cmp;
    cmp := primary (('=='|'!=') primary)?; primary := '(' or ')' | literal | call | reference."""

    def __init__(self, tokens, context, done):
        self.tokens, self.context, self.done = list(tokens), context, done

    def take(self, value=None):
        if not self.tokens or (value is not None and self.tokens[0][1] != value):
            raise ValueError(f"expected {value!r}, got {self.tokens[:1]}")
        return self.tokens.pop(0)

    def peek(self, value) -> bool:
        return bool(self.tokens) and self.tokens[0] == ("op", value)

    def expression(self):
        value = self.conjunction()
        while self.peek("||"):
            self.take("||")
            right = self.conjunction()
            value = value if truthy(value) else right
        return value

    def conjunction(self):
        value = self.negation()
        while self.peek("&&"):
            self.take("&&")
            right = self.negation()
            value = right if truthy(value) else value
        return value

    def negation(self):
        if self.peek("!"):
            self.take("!")
            return not truthy(self.negation())
        return self.comparison()

    def comparison(self):
        left = self.primary()
        for op in ("==", "!="):
            if self.peek(op):
                self.take(op)
                right = self.primary()
                same = _loose(left) == _loose(right)  # GitHub compares strings ignoring case
                return same if op == "==" else not same
        return left

    def primary(self):
        kind, value = self.take()
        if (kind, value) == ("op", "("):
            inner = self.expression()
            self.take(")")
            return inner
        if kind == "str":
            return value
        if kind == "num":
            return float(value)
        if value in ("true", "false"):
            return value == "true"
        if value == "null":
            return None
        if self.peek("("):
            self.take("(")
            self.take(")")
            return self.status(value)
        return self.reference(value)

    def status(self, function: str) -> bool:
        failed = any(s.ran and s.outcome == "failure" for s in self.done)
        table = {"always": True, "cancelled": False, "success": not failed, "failure": failed}
        if function not in table:
            raise ValueError(f"function {function}() is not played here")
        return table[function]

    def reference(self, dotted: str):
        value: Any = self.context
        for part in dotted.split("."):
            if not isinstance(value, dict):
                return None
            if part not in value and value is self.context:
                raise ValueError(f"unknown context `{part}` in `{dotted}`")
            value = value.get(part)
        return value


def _loose(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def expressions_in(node: Any) -> List[str]:
    """Every `${{ ... }}` expression and `if:` condition in a parsed action, as text."""
    found: List[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "if" and isinstance(value, str):
                match = re.fullmatch(r"\s*\$\{\{(.*)\}\}\s*", value, re.S)
                found.append(match.group(1) if match else value)
            else:
                found += expressions_in(value)
    elif isinstance(node, list):
        for item in node:
            found += expressions_in(item)
    elif isinstance(node, str):
        found += [m.group(1) for m in _TEMPLATE.finditer(node)]
    return found
