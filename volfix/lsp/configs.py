"""Which configuration applies to an open document: the nearest `volfix.toml` or
`pyproject.toml` with `[tool.volfix]` above its file, as `volfix check FILE` would read it.

Configs are cached per directory. An entry is reloaded when its config file's modification
time or size changes; `clear()` (on `workspace/didChangeWatchedFiles`, or when a config file
open in the editor is saved) also catches a config file created nearer to the document.
Errors are not cached: a broken file is read again until it is fixed.
"""
from __future__ import annotations

import os
import threading
from typing import Dict, Optional, Tuple
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from ..settings.config import Config
from ..settings.config_file import PYPROJECT, VOLFIX_TOML, load_config

CONFIG_FILE_NAMES = (PYPROJECT, VOLFIX_TOML)

_Stamp = Optional[Tuple[int, int]]


def uri_to_path(uri: str) -> Optional[str]:
    """The file system path of a `file:` URI (percent-escapes decoded), else None."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    if parsed.netloc and parsed.netloc != "localhost":  # a UNC path: file://server/share/x
        return "//" + parsed.netloc + unquote(parsed.path)
    return url2pathname(parsed.path)


def is_config_file(path: Optional[str]) -> bool:
    return path is not None and os.path.basename(path) in CONFIG_FILE_NAMES


class ConfigCache:
    def __init__(self):
        self._lock = threading.Lock()
        self._entries: Dict[str, Tuple[Config, _Stamp]] = {}

    def get(self, directory: str) -> Config:
        """The config for files in `directory`; raises VolfixConfigError for a broken one."""
        directory = os.path.abspath(directory)
        with self._lock:
            entry = self._entries.get(directory)
        if entry is not None and entry[1] == _stamp(entry[0].source):
            return entry[0]
        config = load_config(None, directory)
        config.enabled_codes()  # an unknown selector raises here, not in the middle of a check
        with self._lock:
            self._entries[directory] = (config, _stamp(config.source))
        return config

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _stamp(path: Optional[str]) -> _Stamp:
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return info.st_mtime_ns, info.st_size
