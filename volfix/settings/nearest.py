"""Which settings apply to which file: the nearest configuration file, as ruff resolves it.

Every file gets the settings of the nearest `volfix.toml`, or `pyproject.toml` with a
`[tool.volfix]` table, at or above its own directory, with the command-line flags laid over
them (`overlay`). A nested configuration replaces its parents' settings; it does not inherit
from them (as in ruff without `extend`). `--config FILE` gives one configuration to every
file (`ConfigResolver.fixed`). Globs (`exclude`, `extend-exclude`, `per-file-ignores`) are
relative to the directory holding the configuration file that defines them.

Cheap by construction: a directory is looked up once (the answer is cached and shared with
its subdirectories as they are asked), a configuration file is read and validated once,
and a file's effective `Config` (per-file ignores resolved) is built once per distinct
(configuration, ignore list) pair.

Settings of the run as a whole (`unsafe-fixes`, `respect-gitignore`, the cache location)
come from the run's configuration: `--config`, else the one nearest the paths named.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import os
from typing import Callable, Dict, FrozenSet, Optional, Tuple

from .config import Config

Overlay = Callable[[Config], Config]


def _identity(config: Config) -> Config:
    return config


class ConfigResolver:
    """The effective Config of each directory and file of a run."""

    def __init__(self, base: Config, *, overlay: Overlay = _identity, fixed: bool = False) -> None:
        """`base`: the run's configuration (already overlaid), used where no configuration
        file lies above a directory, and everywhere when `fixed` (`--config`)."""
        self.base = base
        self.fixed = fixed
        self._overlay = overlay
        self._dir_source: Dict[str, Optional[str]] = {}  # directory -> nearest config file
        self._loaded: Dict[str, Config] = {}  # config file -> overlaid Config
        self._per_file: Dict[Tuple[int, Tuple[str, ...]], Config] = {}
        self._excluders: Dict[int, object] = {}
        if base.source is not None:
            self._loaded[os.path.abspath(base.source)] = base

    @classmethod
    def single(cls, config: Config) -> "ConfigResolver":
        """One configuration for every file (the library's default)."""
        return cls(config, fixed=True)

    # ------------------------------------------------------------------- lookups

    def for_directory(self, directory: str, names: Optional[FrozenSet[str]] = None) -> Config:
        """The configuration in force for the files directly inside `directory`."""
        if self.fixed:
            return self.base
        source = self._nearest(os.path.abspath(directory), names)
        if source is None:
            return self.base
        config = self._loaded.get(source)
        if config is None:
            from .config_file import load_config

            config = self._overlay(load_config(source, os.path.dirname(source)))
            config.enabled_codes()  # an unknown selector fails here, before any work
            self._loaded[source] = config
        return config

    def for_file(self, path: str, display: Optional[str] = None) -> Config:
        """`path`'s configuration with its per-file ignores folded into `ignore` (so the
        result is final: its `cache_key()` covers everything that decides the file's
        findings). `display`, the path as shown, is matched too (as the engine does)."""
        absolute = os.path.abspath(path)
        config = self.for_directory(os.path.dirname(absolute))
        if not config.per_file_ignores:
            return config
        codes = matching_ignores(config, absolute, display)
        key = (id(config), codes)
        found = self._per_file.get(key)
        if found is None:
            found = dataclasses.replace(config, ignore=tuple(config.ignore) + codes,
                                        per_file_ignores=())
            self._per_file[key] = found
        return found

    def excluder_for(self, directory: str, names: Optional[FrozenSet[str]] = None):
        """The `discovery.ExcludeMatcher` of the configuration in force in `directory`
        (`names`: its entries, when the caller has listed them)."""
        config = self.for_directory(directory, names)
        matcher = self._excluders.get(id(config))
        if matcher is None:
            from ..files.discovery import ExcludeMatcher

            matcher = ExcludeMatcher(config.exclude + config.extend_exclude, config_root(config))
            self._excluders[id(config)] = matcher
        return matcher

    def configs(self):
        """Every configuration loaded so far (the run's own first)."""
        seen = {id(self.base): self.base}
        for config in self._loaded.values():
            seen.setdefault(id(config), config)
        return list(seen.values())

    def _nearest(self, directory: str, names: Optional[FrozenSet[str]] = None) -> Optional[str]:
        """The nearest configuration file at or above `directory` (cached per directory).
        `names`, the directory's entries, spare it two `stat`s when they hold no
        configuration file: a walk asks for every directory of the tree."""
        from .config_file import CONFIG_NAMES, config_in_directory

        walked = []
        current = directory
        found: Optional[str] = None
        while True:
            if current in self._dir_source:
                found = self._dir_source[current]
                break
            walked.append(current)
            listed = names is not None and current == directory
            here = None if listed and names.isdisjoint(CONFIG_NAMES) else config_in_directory(current)
            if here is not None:
                found = os.path.abspath(here)
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for seen in walked:
            self._dir_source[seen] = found
        return found


def config_root(config: Config) -> str:
    """The directory that the configuration's globs are relative to."""
    if config.source:
        return os.path.dirname(os.path.abspath(config.source))
    return os.getcwd()


def matching_ignores(config: Config, path: str, display: Optional[str] = None) -> Tuple[str, ...]:
    """The codes `config.per_file_ignores` ignores for `path`: a glob matches the path
    relative to the configuration's directory, the path as displayed, or the file name."""
    root = config_root(config)
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    names = {rel}
    if display:
        names.add(display.replace(os.sep, "/"))
    base = os.path.basename(path)
    codes = []
    for pattern, ignored in config.per_file_ignores:
        if fnmatch.fnmatch(base, pattern) or any(
                fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(name, f"*/{pattern}")
                for name in names):
            codes.extend(ignored)
    return tuple(codes)
