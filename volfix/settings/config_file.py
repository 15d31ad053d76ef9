"""Reading `[tool.volfix]` (pyproject.toml) or `volfix.toml`, and layering CLI options on top.

    find_config(start_dir)                 -> path of the nearest config file, or None
    load_config(config_path, start_dir)    -> Config (defaults when no file is found)
    merge_cli(config, select=..., ...)     -> Config with the command line applied, as ruff

In `pyproject.toml` the settings live in `[tool.volfix]`; in `volfix.toml` at the top level
(as in `ruff.toml`). A `volfix.toml` wins over a `pyproject.toml` in the same directory;
a directory whose `pyproject.toml` has no `[tool.volfix]` table is skipped. Globs in
`exclude`, `extend-exclude` and `per-file-ignores` are relative to the directory holding the
config file (`os.path.dirname(config.source)`), as in ruff.
"""
from __future__ import annotations

import difflib
import os
import sys
from dataclasses import replace
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

from .config import NO_GRAD_STYLES, Config, VolfixConfigError

PYPROJECT = "pyproject.toml"
VOLFIX_TOML = "volfix.toml"
CONFIG_NAMES = frozenset({PYPROJECT, VOLFIX_TOML})  # the files `config_in_directory` looks for


def find_config(start_dir: str) -> Optional[str]:
    """The nearest config file at or above `start_dir`: `volfix.toml`, or a
    `pyproject.toml` that has a `[tool.volfix]` table. None when there is none."""
    current = os.path.abspath(start_dir)
    while True:
        found = config_in_directory(current)
        if found is not None:
            return found
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def config_in_directory(directory: str) -> Optional[str]:
    """The config file of `directory` itself (`volfix.toml`, else a `pyproject.toml` with a
    `[tool.volfix]` table), or None."""
    candidate = os.path.join(directory, VOLFIX_TOML)
    if os.path.isfile(candidate):
        return candidate
    candidate = os.path.join(directory, PYPROJECT)
    if os.path.isfile(candidate) and "volfix" in _read_toml(candidate).get("tool", {}):
        return candidate
    return None


def load_config(config_path: Optional[str], start_dir: str) -> Config:
    """Read `config_path` (`--config`), or else the nearest config file above `start_dir`.

    Raises VolfixConfigError, naming the file and the key, for a missing or malformed file,
    an unknown key, a value of the wrong type or an unknown rule code.
    """
    path = config_path if config_path is not None else find_config(start_dir)
    if path is None:
        return Config()
    if not os.path.isfile(path):
        raise VolfixConfigError(f"config file `{path}` does not exist")
    data = _read_toml(path)
    if os.path.basename(path) == PYPROJECT:
        table = data.get("tool", {}).get("volfix")
        if table is None:
            raise VolfixConfigError(f"{path}: no `[tool.volfix]` table")
        prefix = "tool.volfix."
    else:
        table, prefix = data, ""
    if not isinstance(table, dict):
        raise VolfixConfigError(f"{path}: `{prefix.rstrip('.') or 'tool.volfix'}` must be a table")
    return _config_from_table(table, path, prefix)


def merge_cli(config: Config, **cli_overrides: Any) -> Config:
    """Apply command-line options to `config`, with ruff's precedence.

    Options (None or absent = not given; lists may hold comma-separated items):
      select          replaces the config's select, extend-select and ignore
      extend_select   adds to the selection; also overrides the config file's `ignore`
                      for the codes it names (the command line is the later layer)
      ignore          adds to ignore
      exclude         replaces exclude; extend_exclude adds to it
      per_file_ignores  a mapping glob -> codes, or (glob, codes) pairs; replaces the config's
      extend_per_file_ignores  same shape; added to the config's
      unsafe_fixes    True turns unsafe fixes on (False/None leave the config's value);
      no_unsafe_fixes True turns them off
      legacy_semantics  True turns it on; no_legacy_semantics True turns it off
      respect_gitignore True/False sets it
      no_grad_style   "auto", "with" or "decorator"
    Unknown rule codes raise VolfixConfigError naming the option.
    """
    unknown = set(cli_overrides) - _CLI_OPTIONS
    if unknown:
        raise TypeError(f"merge_cli() got unknown options: {', '.join(sorted(unknown))}")
    given = {key: value for key, value in cli_overrides.items() if value is not None}
    changes: Dict[str, Any] = {}
    changes.update(_merged_selection(config, given))
    changes.update(_merged_files(config, given))
    changes.update(_merged_flags(given))
    return replace(config, **changes) if changes else config


_CLI_OPTIONS = frozenset({
    "select", "extend_select", "ignore", "exclude", "extend_exclude", "per_file_ignores",
    "extend_per_file_ignores", "unsafe_fixes", "no_unsafe_fixes", "legacy_semantics",
    "no_legacy_semantics",
    "respect_gitignore", "no_grad_style",
})


def _cli_codes(given: Dict[str, Any], key: str) -> Tuple[str, ...]:
    if key not in given:
        return ()
    return _validated_selectors(_split(given[key]), f"--{key.replace('_', '-')}")


def _merged_selection(config: Config, given: Dict[str, Any]) -> Dict[str, Any]:
    # The command line is a later layer, as in ruff: --select starts the selection afresh;
    # otherwise --extend-select re-enables what the file ignored, and --ignore adds.
    extend, ignore = _cli_codes(given, "extend_select"), _cli_codes(given, "ignore")
    if "select" in given:
        return {"select": _cli_codes(given, "select"), "extend_select": extend, "ignore": ignore}
    if not (extend or ignore):
        return {}
    kept_ignore = _ignore_without(tuple(config.ignore), extend) if extend else tuple(config.ignore)
    return {"extend_select": tuple(config.extend_select) + extend, "ignore": kept_ignore + ignore}


def _merged_files(config: Config, given: Dict[str, Any]) -> Dict[str, Any]:
    changes: Dict[str, Any] = {}
    if "exclude" in given:
        changes["exclude"] = _split(given["exclude"])
    if "extend_exclude" in given:
        changes["extend_exclude"] = tuple(config.extend_exclude) + _split(given["extend_exclude"])
    per_file = tuple(config.per_file_ignores)
    if "per_file_ignores" in given:
        per_file = _cli_per_file_ignores(given["per_file_ignores"], "--per-file-ignores")
    if "extend_per_file_ignores" in given:
        per_file += _cli_per_file_ignores(given["extend_per_file_ignores"], "--extend-per-file-ignores")
    if per_file != tuple(config.per_file_ignores):
        changes["per_file_ignores"] = per_file
    return changes


def _merged_flags(given: Dict[str, Any]) -> Dict[str, Any]:
    changes: Dict[str, Any] = {}
    # Turn-on flags: False is what a click flag passes when absent, so it changes nothing.
    if given.get("unsafe_fixes") is True:
        changes["unsafe_fixes"] = True
    if given.get("no_unsafe_fixes") is True:
        changes["unsafe_fixes"] = False
    if given.get("legacy_semantics") is True:
        changes["legacy_semantics"] = True
    if given.get("no_legacy_semantics") is True:
        changes["legacy_semantics"] = False
    if "respect_gitignore" in given:
        changes["respect_gitignore"] = bool(given["respect_gitignore"])
    if "no_grad_style" in given:
        style = given["no_grad_style"]
        if style not in NO_GRAD_STYLES:
            raise VolfixConfigError(f"--no-grad-style: expected one of {', '.join(NO_GRAD_STYLES)}, "
                                    f"got `{style}`")
        changes["no_grad_style"] = style
    return changes


# --- reading ----------------------------------------------------------------------------

def _read_toml(path: str) -> Dict[str, Any]:
    # Imported here: most runs (a tree without a configuration file) never parse TOML.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise VolfixConfigError(f"cannot read config file `{path}`: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise VolfixConfigError(f"{path}: invalid TOML: {exc}") from exc


def _config_from_table(table: Dict[str, Any], path: str, prefix: str) -> Config:
    values: Dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        reader = _READERS.get(key)
        if reader is None:
            raise VolfixConfigError(_unknown_key_message(key, name, path, prefix))
        field_name, read = reader
        values[field_name] = read(value, name, path)
    return Config(**values, source=path)


def _unknown_key_message(key: str, name: str, path: str, prefix: str) -> str:
    message = f"{path}: unknown key `{name}`"
    close = difflib.get_close_matches(key.replace("_", "-"), list(_READERS), n=1)
    if close:
        message += f" (did you mean `{prefix}{close[0]}`?)"
    elif not prefix and key == "tool":
        message += f" ({VOLFIX_TOML} takes its settings at the top level, without `[tool.volfix]`)"
    return message


def _type_error(name: str, path: str, expected: str, value: Any) -> VolfixConfigError:
    return VolfixConfigError(f"{path}: `{name}` must be {expected}, got {_describe(value)}")


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _read_bool(value: Any, name: str, path: str) -> bool:
    if not isinstance(value, bool):
        raise _type_error(name, path, "true or false", value)
    return value


def _read_strings(value: Any, name: str, path: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _type_error(name, path, "an array of strings", value)
    return tuple(value)


def _read_codes(value: Any, name: str, path: str) -> Tuple[str, ...]:
    return _validated_selectors(_read_strings(value, name, path), f"`{name}`", path)


def _read_per_file_ignores(value: Any, name: str, path: str) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise _type_error(name, path, 'a table of glob = ["CODE", ...]', value)
    return tuple((glob, _read_codes(codes, f'{name}."{glob}"', path)) for glob, codes in value.items())


def _read_style(value: Any, name: str, path: str) -> str:
    if value not in NO_GRAD_STYLES:
        expected = "one of " + ", ".join(f'"{s}"' for s in NO_GRAD_STYLES)
        raise _type_error(name, path, expected, value)
    return value


_READERS: Dict[str, Tuple[str, Callable[[Any, str, str], Any]]] = {
    "select": ("select", _read_codes),
    "ignore": ("ignore", _read_codes),
    "extend-select": ("extend_select", _read_codes),
    "exclude": ("exclude", _read_strings),
    "extend-exclude": ("extend_exclude", _read_strings),
    "per-file-ignores": ("per_file_ignores", _read_per_file_ignores),
    "respect-gitignore": ("respect_gitignore", _read_bool),
    "unsafe-fixes": ("unsafe_fixes", _read_bool),
    "no-grad-style": ("no_grad_style", _read_style),
    "legacy-semantics": ("legacy_semantics", _read_bool),
}


# --- selectors --------------------------------------------------------------------------

def _all_codes() -> frozenset:
    from ..rules.registry import all_codes

    return all_codes()


def _validated_selectors(selectors: Iterable[str], where: str, path: Optional[str] = None) -> Tuple[str, ...]:
    from ..rules.registry import expand_selectors

    out = []
    for selector in selectors:
        try:
            expand_selectors([selector], _all_codes())
        except VolfixConfigError as exc:
            location = f"{path}: {where}" if path else where
            raise VolfixConfigError(f"{location}: {exc}") from None
        if selector.strip():
            out.append(selector.strip().upper())
    return tuple(out)


def _split(value: Any) -> Tuple[str, ...]:
    """`("VF101,VF102", "VF2")` or `"VF101, VF102"` -> `("VF101", "VF102", "VF2")`."""
    items = [value] if isinstance(value, str) else list(value)
    return tuple(part.strip() for item in items for part in str(item).split(",") if part.strip())


def _ignore_without(ignore: Tuple[str, ...], selected: Tuple[str, ...]) -> Tuple[str, ...]:
    """The config's ignore list minus the codes a later --extend-select names again."""
    from ..rules.registry import expand_selectors

    codes = _all_codes()
    reselected = expand_selectors(selected, codes)
    out = []
    for selector in ignore:
        ignored = expand_selectors([selector], codes)
        if not ignored & reselected:
            out.append(selector)
        else:
            out.extend(sorted(ignored - reselected))
    return tuple(out)


def _cli_per_file_ignores(value: Any, option: str) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    pairs = value.items() if isinstance(value, dict) else value
    out = []
    for entry in pairs:
        if isinstance(entry, str):  # "glob:VF101,VF102", as ruff's --per-file-ignores
            glob, sep, codes = entry.rpartition(":")
            if not sep or not glob:
                raise VolfixConfigError(f"{option}: expected `GLOB:CODES`, got `{entry}`")
            entry = (glob, codes)
        glob, codes = entry
        out.append((glob, _validated_selectors(_split(codes), f"{option} `{glob}`")))
    return tuple(out)
