"""The result cache: round trip, keys, corrupt entries, atomic layout."""
from __future__ import annotations

import json
import os

import pytest

from volfix.run.cache import CACHE_DIR_NAME, ResultCache, engine_fingerprint, result_from_json, result_to_json
from volfix.model import Applicability, Diagnostic, Edit, FileResult, Fix, Location

RICH = FileResult(
    path="pkg/mod.py",
    diagnostics=(
        Diagnostic(code="VF101", message="`volatile=True` is ignored",
                   location=Location(3, 5), end_location=Location(3, 30),
                   fix=Fix(Applicability.SAFE, "Wrap in `torch.no_grad()`",
                           (Edit("with torch.no_grad():\n    ", Location(3, 1), Location(3, 1)),
                            Edit("", Location(3, 10), Location(3, 25)))),
                   note="not wrapped: the region trains", cell=2, snippet="Variable(x, volatile=True)"),
        Diagnostic(code="VF201", message="`.volatile` is always False",
                   location=Location(7, 1), end_location=Location(7, 11)),
    ),
    source="caf\u00e9 = 1\r\n\udc80 surrogate\n",
    fixed_source=None, fixed_count=0, changed=False, error=None, applied_codes=("VF101",),
)


def test_json_round_trip_keeps_every_field():
    assert result_from_json(json.loads(json.dumps(result_to_json(RICH)))) == RICH


def test_put_get_round_trip_with_display_path(tmp_path):
    cache = ResultCache(str(tmp_path), "cfg")
    key = cache.key(str(tmp_path / "pkg" / "mod.py"), b"data", "check")
    assert cache.get(key, "x") is None
    assert cache.put(key, RICH)
    got = cache.get(key, "elsewhere/mod.py")
    assert got is not None
    assert got.path == "elsewhere/mod.py"
    assert got.diagnostics == RICH.diagnostics and got.source == RICH.source


def test_cache_dir_is_git_ignored_and_tagged(tmp_path):
    cache = ResultCache(str(tmp_path), "cfg")
    cache.put(cache.key("a.py", b"", "check"), FileResult(path="a.py", source=""))
    top = tmp_path / CACHE_DIR_NAME
    assert (top / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (top / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    leftovers = [n for _, _, names in os.walk(top) for n in names if n.startswith(".tmp-")]
    assert leftovers == []


@pytest.mark.parametrize("change", ["content", "config", "version", "engine", "mode", "path"])
def test_key_changes_with_everything_a_result_depends_on(tmp_path, change):
    base = {"path": "pkg/a.py", "data": b"x = Variable(t)\n", "mode": "check", "config": "cfg",
            "version": "1.0", "engine": "e1"}
    changed = dict(base)
    changed[change] = {"content": None, "config": "cfg2", "version": "1.1", "engine": "e2", "mode": "fix",
                       "path": "pkg/b.py"}[change]
    if change == "content":
        changed["data"] = b"x = Variable(t) \n"

    def key(d):
        cache = ResultCache(str(tmp_path), d["config"], version=d["version"], engine=d["engine"])
        return cache.key(str(tmp_path / d["path"]), d["data"], d["mode"])

    assert key(base) == key(dict(base))
    assert key(base) != key(changed)


def test_the_engine_fingerprint_changes_when_a_module_does(tmp_path):
    """A development checkout (or two `pip install git+...` of one version): the same version,
    other code. Editing a module changes the fingerprint; `__pycache__` does not count."""
    package = tmp_path / "volfix"
    (package / "rules").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "rules" / "vf101.py").write_text("CODE = 'VF101'\n")
    first = engine_fingerprint.__wrapped__(str(package))
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert engine_fingerprint.__wrapped__(str(package)) == first
    (package / "rules" / "vf101.py").write_text("CODE = 'VF102'\n")
    os.utime(package / "rules" / "vf101.py", ns=(1, 1))
    assert engine_fingerprint.__wrapped__(str(package)) != first
    assert len(engine_fingerprint()) == 16  # volfix's own, computed once a process


def test_volfix_own_fingerprint_covers_every_package(tmp_path):
    """The default is the whole `volfix` package: a change in `flow/` or `rules/` (not only
    `run/`, where the cache lives) must not reuse results an older engine computed."""
    import shutil
    import subprocess
    import sys

    import volfix

    copy = tmp_path / "volfix"
    shutil.copytree(os.path.dirname(volfix.__file__), copy, ignore=shutil.ignore_patterns("__pycache__"))
    probe = [sys.executable, "-c", "from volfix.run.cache import engine_fingerprint; print(engine_fingerprint())"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def fingerprint():
        return subprocess.run(probe, env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout

    first = fingerprint()
    for module in ("flow/scalars.py", "rules/vf401_data_index.py", "engine/analyse.py"):
        with open(copy / module, "a") as handle:
            handle.write("# edited\n")
        assert fingerprint() != first, module
        first = fingerprint()


def test_other_version_uses_another_directory_and_can_be_pruned(tmp_path):
    old = ResultCache(str(tmp_path), "cfg", version="0.0.1")
    new = ResultCache(str(tmp_path), "cfg", version="0.0.2")
    k_old = old.key("a.py", b"x", "check")
    old.put(k_old, FileResult(path="a.py", source="x"))
    assert new.get(new.key("a.py", b"x", "check"), "a.py") is None
    new.put(new.key("a.py", b"x", "check"), FileResult(path="a.py", source="x"))
    new.prune_versions()
    assert old.get(k_old, "a.py") is None
    assert new.get(new.key("a.py", b"x", "check"), "a.py") is not None


@pytest.mark.parametrize("garbage", [
    b"", b"{", b"\x00\xff\xfe", b"[]", b"{}", b'{"path": 3}', b"null",
    json.dumps({**result_to_json(RICH), "changed": "yes"}).encode(),
    json.dumps({**result_to_json(RICH), "diagnostics": [{"code": "VF101"}]}).encode(),
    json.dumps({**result_to_json(RICH), "fixed_count": 1.5}).encode(),
])
def test_corrupt_entry_is_a_miss_and_is_overwritten(tmp_path, garbage):
    cache = ResultCache(str(tmp_path), "cfg")
    key = cache.key("a.py", b"x", "check")
    cache.put(key, RICH)
    with open(os.path.join(cache.directory, key + ".json"), "wb") as fh:
        fh.write(garbage)
    assert cache.get(key, "a.py") is None
    assert cache.put(key, RICH)
    assert cache.get(key, RICH.path) == RICH


def test_error_results_are_not_stored(tmp_path):
    cache = ResultCache(str(tmp_path), "cfg")
    key = cache.key("a.py", b"x", "check")
    assert not cache.put(key, FileResult(path="a.py", error="boom (this is a volfix bug)"))
    assert cache.get(key, "a.py") is None


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a non-root POSIX user")
def test_unwritable_cache_never_raises(tmp_path):
    tmp_path.chmod(0o500)
    try:
        cache = ResultCache(str(tmp_path), "cfg")
        assert not cache.put(cache.key("a.py", b"x", "check"), RICH)
    finally:
        tmp_path.chmod(0o700)


def test_cache_in_a_file_position_never_raises(tmp_path):
    # `.volfix_cache` is a file, not a directory: writing fails quietly, reading misses.
    (tmp_path / CACHE_DIR_NAME).write_text("not a directory")
    cache = ResultCache(str(tmp_path), "cfg")
    key = cache.key("a.py", b"x", "check")
    assert not cache.put(key, RICH)
    assert cache.get(key, "a.py") is None


def test_source_equal_to_the_utf8_bytes_is_not_stored_but_restored(tmp_path):
    cache = ResultCache(str(tmp_path), "cfg")
    data = "x = Variable(t)  # caf\u00e9\n".encode()
    result = FileResult(path="a.py", source=data.decode(), diagnostics=RICH.diagnostics)
    key = cache.key("a.py", data, "check")
    cache.put(key, result, data)
    with open(os.path.join(cache.directory, key + ".json"), encoding="ascii") as fh:
        assert json.loads(fh.read().split("\n", 1)[1])["source"] is None  # after the checksum line
    assert cache.get(key, "a.py", data) == result
    assert cache.get(key, "a.py") is None  # cannot restore without the bytes: a miss


@pytest.mark.parametrize("data, source", [
    (b"x = 1\r\n", "x = 1\n"),  # the engine normalised newlines
    (b"# -*- coding: latin-1 -*-\nx = '\xe9'\n", "# -*- coding: latin-1 -*-\nx = '\u00e9'\n"),
])
def test_source_that_differs_from_the_bytes_is_stored(tmp_path, data, source):
    cache = ResultCache(str(tmp_path), "cfg")
    key = cache.key("a.py", data, "check")
    cache.put(key, FileResult(path="a.py", source=source), data)
    assert cache.get(key, "a.py", data).source == source


def _entry_path(cache, key):
    return os.path.join(cache.directory, key + ".json")


def test_a_garbled_entry_that_still_parses_is_a_miss(tmp_path):
    # A changed digit keeps the JSON valid and the types right: it used to be served.
    cache = ResultCache(str(tmp_path), "cfg")
    key = cache.key("a.py", b"x", "check")
    cache.put(key, RICH)
    with open(_entry_path(cache, key), "rb") as fh:
        raw = fh.read()
    garbled = raw.replace(b'"VF101","`volatile=True` is ignored",3,5', b'"VF101","`volatile=True` is ignored",9,5')
    assert garbled != raw
    with open(_entry_path(cache, key), "wb") as fh:
        fh.write(garbled)
    assert cache.get(key, "a.py") is None
    assert cache.put(key, RICH) and cache.get(key, RICH.path) == RICH


def test_an_entry_under_another_key_is_a_miss(tmp_path):
    cache = ResultCache(str(tmp_path), "cfg")
    key, other = cache.key("a.py", b"x", "check"), cache.key("b.py", b"y", "check")
    cache.put(key, RICH)
    os.replace(_entry_path(cache, key), _entry_path(cache, other))
    assert cache.get(other, "b.py") is None


@pytest.mark.parametrize("nesting", ["[" * 100_000, '{"a":' * 100_000])
def test_a_deeply_nested_entry_is_a_miss_not_an_error(tmp_path, nesting):
    cache = ResultCache(str(tmp_path), "cfg")
    key = cache.key("a.py", b"x", "check")
    cache.put(key, RICH)
    for garbage in (nesting.encode(), _checksum_line(key, nesting.encode())):
        with open(_entry_path(cache, key), "wb") as fh:
            fh.write(garbage)
        assert cache.get(key, "a.py") is None
        assert cache.get_json(key) is None


def _checksum_line(key, payload):
    """An entry as `put` would frame it (the checksum right), around any payload."""
    from volfix.run.cache import _checksum

    return _checksum(key, payload) + b"\n" + payload


def test_a_run_with_a_deeply_nested_entry_in_its_cache_succeeds(project):
    from conftest import LEGACY, invoke

    (project / "legacy.py").write_text(LEGACY)
    first = invoke("check", "legacy.py")
    assert first.exit_code == 1
    entries = [os.path.join(d, n) for d, _, names in os.walk(project / CACHE_DIR_NAME) for n in names
               if n.endswith(".json") and not n.startswith(".")]
    assert entries
    for entry in entries:
        with open(entry, "wb") as fh:
            fh.write(b"[" * 100_000)
    again = invoke("check", "legacy.py")
    assert again.exit_code == 1, again.stderr
    assert again.stdout == first.stdout
