"""Finding and reading `[tool.volfix]` / volfix.toml, and command-line precedence."""
from __future__ import annotations

import pytest

from volfix.settings.config import Config, VolfixConfigError
from volfix.settings.config_file import find_config, load_config, merge_cli


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------- finding


def test_nearest_pyproject_with_table_is_found_from_a_subdirectory(tmp_path):
    cfg = write(tmp_path / "pyproject.toml", "[tool.volfix]\nselect = ['VF1']\n")
    sub = tmp_path / "src" / "pkg"
    sub.mkdir(parents=True)
    assert find_config(str(sub)) == str(cfg)


def test_pyproject_without_table_is_skipped(tmp_path):
    outer = write(tmp_path / "pyproject.toml", "[tool.volfix]\n")
    write(tmp_path / "inner" / "pyproject.toml", "[tool.black]\nline-length = 100\n")
    assert find_config(str(tmp_path / "inner")) == str(outer)


def test_volfix_toml_wins_in_the_same_directory(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.volfix]\nselect = ['VF1']\n")
    toml = write(tmp_path / "volfix.toml", "select = ['VF2']\n")
    assert find_config(str(tmp_path)) == str(toml)
    assert load_config(None, str(tmp_path)).select == ("VF2",)


def test_nearer_pyproject_wins_over_farther_volfix_toml(tmp_path):
    write(tmp_path / "volfix.toml", "select = ['VF2']\n")
    near = write(tmp_path / "a" / "pyproject.toml", "[tool.volfix]\nselect = ['VF1']\n")
    assert find_config(str(tmp_path / "a")) == str(near)


def test_no_config_gives_defaults(tmp_path):
    # tmp_path's parents (/tmp, /) hold no volfix config on a test machine.
    assert find_config(str(tmp_path)) is None
    assert load_config(None, str(tmp_path)) == Config()


# ------------------------------------------------------------------------- reading


def test_every_key_is_read(tmp_path):
    cfg = write(tmp_path / "pyproject.toml", """
[tool.volfix]
select = ["VF1", "VF201"]
ignore = ["VF110"]
extend-select = ["VF301"]
exclude = ["legacy/**"]
extend-exclude = ["third_party"]
respect-gitignore = false
unsafe-fixes = true
no-grad-style = "with"
legacy-semantics = true

[tool.volfix.per-file-ignores]
"tests/*.py" = ["VF101", "VF2"]
"notebooks/**" = ["VF1"]
""")
    config = load_config(None, str(tmp_path))
    assert config == Config(
        select=("VF1", "VF201"), ignore=("VF110",), extend_select=("VF301",),
        exclude=("legacy/**",), extend_exclude=("third_party",),
        per_file_ignores=(("tests/*.py", ("VF101", "VF2")), ("notebooks/**", ("VF1",))),
        respect_gitignore=False, unsafe_fixes=True, no_grad_style="with", legacy_semantics=True,
        source=str(cfg),
    )
    assert config.enabled_codes() == {"VF101", "VF102", "VF103", "VF105", "VF111", "VF112", "VF201", "VF301"}


def test_explicit_config_path_is_used_instead_of_discovery(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.volfix]\nselect = ['VF1']\n")
    other = write(tmp_path / "ci" / "strict.toml", "select = ['VF201']\n")
    config = load_config(str(other), str(tmp_path))
    assert config.select == ("VF201",)
    assert config.source == str(other)


def test_volfix_toml_has_keys_at_top_level(tmp_path):
    cfg = write(tmp_path / "volfix.toml", "[tool.volfix]\nselect = ['VF1']\n")
    with pytest.raises(VolfixConfigError) as err:
        load_config(None, str(tmp_path))
    message = str(err.value)
    assert str(cfg) in message and "`tool`" in message and "top level" in message


@pytest.mark.parametrize("body, key", [
    ("selct = ['VF1']", "tool.volfix.selct"),
    ("extend_select = ['VF1']", "tool.volfix.extend_select"),
    ("line-length = 88", "tool.volfix.line-length"),
])
def test_unknown_key_names_key_and_file(tmp_path, body, key):
    cfg = write(tmp_path / "pyproject.toml", f"[tool.volfix]\n{body}\n")
    with pytest.raises(VolfixConfigError) as err:
        load_config(None, str(tmp_path))
    assert f"`{key}`" in str(err.value)
    assert str(cfg) in str(err.value)


def test_unknown_key_suggests_the_close_one(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.volfix]\nextend_select = ['VF1']\n")
    with pytest.raises(VolfixConfigError, match="did you mean `tool.volfix.extend-select`"):
        load_config(None, str(tmp_path))


@pytest.mark.parametrize("body, key", [
    ("select = ['VF999']", "tool.volfix.select"),
    ("ignore = ['E501']", "tool.volfix.ignore"),
    ("extend-select = ['VF1', 'XX']", "tool.volfix.extend-select"),
    ('per-file-ignores = { "tests/*" = ["VF7"] }', 'tool.volfix.per-file-ignores."tests/*"'),
])
def test_unknown_code_names_key_file_and_code(tmp_path, body, key):
    cfg = write(tmp_path / "pyproject.toml", f"[tool.volfix]\n{body}\n")
    with pytest.raises(VolfixConfigError) as err:
        load_config(None, str(tmp_path))
    message = str(err.value)
    assert f"`{key}`" in message and str(cfg) in message
    assert "unknown rule selector" in message


@pytest.mark.parametrize("body, key, expected", [
    ("select = 'VF1'", "select", "an array of strings"),
    ("exclude = [1, 2]", "exclude", "an array of strings"),
    ("unsafe-fixes = 'yes'", "unsafe-fixes", "true or false"),
    ("respect-gitignore = 1", "respect-gitignore", "true or false"),
    ("no-grad-style = 'context'", "no-grad-style", '"auto", "with", "decorator"'),
    ("per-file-ignores = ['x']", "per-file-ignores", "a table"),
])
def test_wrong_types_name_key_and_file(tmp_path, body, key, expected):
    cfg = write(tmp_path / "volfix.toml", body + "\n")
    with pytest.raises(VolfixConfigError) as err:
        load_config(None, str(tmp_path))
    message = str(err.value)
    assert f"`{key}`" in message and str(cfg) in message and expected in message


def test_invalid_toml_names_the_file(tmp_path):
    cfg = write(tmp_path / "pyproject.toml", "[tool.volfix\nselect = \n")
    with pytest.raises(VolfixConfigError, match="invalid TOML") as err:
        find_config(str(tmp_path))
    assert str(cfg) in str(err.value)


def test_missing_explicit_config_is_an_error(tmp_path):
    with pytest.raises(VolfixConfigError, match="does not exist"):
        load_config(str(tmp_path / "nope.toml"), str(tmp_path))


def test_explicit_pyproject_without_table_is_an_error(tmp_path):
    cfg = write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    with pytest.raises(VolfixConfigError, match=r"no `\[tool.volfix\]` table"):
        load_config(str(cfg), str(tmp_path))


# ------------------------------------------------------------------------- merge_cli


BASE = Config(select=("VF1", "VF2"), ignore=("VF110", "VF2"), extend_select=("VF301",),
              source="pyproject.toml")


def test_nothing_given_keeps_the_config():
    assert merge_cli(BASE) is BASE
    assert merge_cli(BASE, select=None, ignore=None, unsafe_fixes=None) is BASE


def test_cli_select_replaces_select_extend_select_and_ignore():
    config = merge_cli(BASE, select=["VF101"])
    assert config.enabled_codes() == {"VF101"}
    assert config.source == "pyproject.toml"


def test_cli_select_with_cli_ignore_and_extend():
    config = merge_cli(BASE, select=("VF1",), ignore=("VF102,VF103",), extend_select=("VF201",))
    assert config.enabled_codes() == {"VF101", "VF105", "VF110", "VF111", "VF112", "VF201"}


def test_cli_extend_select_adds_and_overrides_config_ignore():
    config = merge_cli(BASE, extend_select=["VF201", "VF110"])
    enabled = config.enabled_codes()
    assert {"VF201", "VF110", "VF301", "VF101"} <= enabled
    assert not {"VF202", "VF203"} & enabled  # the rest of the config's `ignore = VF2` stays


def test_cli_ignore_adds_to_config_ignore():
    config = merge_cli(BASE, ignore=["VF101"])
    assert config.enabled_codes() == {"VF102", "VF103", "VF105", "VF111", "VF112", "VF301"}


def test_cli_ignore_beats_cli_extend_select_of_same_layer():
    config = merge_cli(Config(), extend_select=["VF201"], ignore=["VF201"])
    assert "VF201" not in config.enabled_codes()


def test_comma_separated_values_are_split():
    config = merge_cli(Config(), select="VF101, VF102")
    assert config.select == ("VF101", "VF102")


@pytest.mark.parametrize("option, flag", [("select", "--select"), ("ignore", "--ignore"),
                                           ("extend_select", "--extend-select")])
def test_unknown_cli_code_names_the_option(option, flag):
    with pytest.raises(VolfixConfigError) as err:
        merge_cli(BASE, **{option: ["VF101", "VF9X"]})
    assert flag in str(err.value) and "VF9X" in str(err.value)


def test_unsafe_fixes_only_turns_on():
    on = Config(unsafe_fixes=True)
    assert merge_cli(Config(), unsafe_fixes=True).unsafe_fixes is True
    assert merge_cli(on, unsafe_fixes=False).unsafe_fixes is True  # a flag's default: not given
    assert merge_cli(on, no_unsafe_fixes=True).unsafe_fixes is False


def test_other_overrides():
    config = merge_cli(Config(exclude=("a",), extend_exclude=("b",)), exclude=["c"],
                       extend_exclude=["d"], no_grad_style="decorator", legacy_semantics=True,
                       respect_gitignore=False,
                       per_file_ignores={"tests/*": "VF101"},
                       extend_per_file_ignores=["docs/*:VF2"])
    assert config.exclude == ("c",)
    assert config.extend_exclude == ("b", "d")
    assert config.no_grad_style == "decorator"
    assert config.legacy_semantics is True and config.respect_gitignore is False
    assert config.per_file_ignores == (("tests/*", ("VF101",)), ("docs/*", ("VF2",)))


def test_bad_cli_values():
    with pytest.raises(VolfixConfigError, match="--no-grad-style"):
        merge_cli(Config(), no_grad_style="sometimes")
    with pytest.raises(VolfixConfigError, match="--per-file-ignores"):
        merge_cli(Config(), per_file_ignores={"x": "VF000"})
    with pytest.raises(TypeError):
        merge_cli(Config(), selct=["VF1"])


def test_config_then_cli_end_to_end(tmp_path, monkeypatch):
    write(tmp_path / "pyproject.toml", "[tool.volfix]\nselect = ['VF1']\nignore = ['VF110']\n"
                                        "unsafe-fixes = true\n")
    monkeypatch.chdir(tmp_path)
    config = merge_cli(load_config(None, "."), extend_select=["VF110"], ignore=["VF112"])
    assert config.enabled_codes() == {"VF101", "VF102", "VF103", "VF105", "VF110", "VF111"}
    assert config.unsafe_fixes is True
    assert config.source == str(tmp_path / "pyproject.toml")
