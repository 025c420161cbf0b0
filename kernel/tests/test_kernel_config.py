"""Configuration: `.agentenv/config.toml` found by walking up or named by AGENTENV_CONFIG; references
(`env:NAME`, `env:NAME?default`, `secret:KEY`) resolved on read and masked by `agentenv config show`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv.config import (
    DEFAULTS,
    ConfigError,
    display_value,
    find_config_file,
    load_config,
)
from agentenv_testing.installs import CliResult, run_cli

CONFIG = """
[store]
document = "dynamodb"

[model]
base_url = "env:FIXTURE_MODEL_URL?http://localhost:8000/v1"
api_key = "env:FIXTURE_MODEL_KEY"
org = "env:FIXTURE_ORG"

[sandbox]
default = "docker"

[plugins.agentenv-aws]
region = "eu-west-1"
bucket = "runs"
token = "secret:aws/token"

[plugins.agentenv-aws.retry]
attempts = 3
"""


def write_config(folder: Path, text: str = CONFIG) -> Path:
    path = folder / ".agentenv" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_means_local_defaults(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path, environ={})
    assert config.file is None
    assert config.warnings == []
    assert config.raw("store.document") == DEFAULTS["store"]["document"] == "sqlite"
    assert config.get("sandbox.default") == "inline"
    assert config.get("missing.key", "fallback") == "fallback"
    assert all(source == "default" for _, _, source in config.flat())


def test_found_by_walking_up(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_config_file(deep, environ={}) == path
    config = load_config(cwd=deep, environ={})
    assert config.file == path
    assert config.raw("store.document") == "dynamodb"
    assert config.raw("store.object") == "filesystem", "defaults fill what the file leaves out"
    sources = {key: source for key, _, source in config.flat()}
    assert sources["store.document"] == str(path)
    assert sources["store.object"] == "default"


def test_nearest_file_wins(tmp_path: Path) -> None:
    write_config(tmp_path)
    inner = write_config(tmp_path / "project", '[store]\ndocument = "firestore"\n')
    assert load_config(cwd=tmp_path / "project", environ={}).raw("store.document") == "firestore"
    assert find_config_file(tmp_path / "project", environ={}) == inner


def test_agentenv_config_names_the_file(tmp_path: Path) -> None:
    write_config(tmp_path)  # would be found by walking up, but the variable wins
    named = tmp_path / "elsewhere.toml"
    named.write_text('[sandbox]\ndefault = "modal"\n', encoding="utf-8")
    config = load_config(cwd=tmp_path, environ={"AGENTENV_CONFIG": str(named)})
    assert (config.file, config.raw("sandbox.default")) == (named, "modal")


def test_agentenv_config_missing_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match=r"AGENTENV_CONFIG=.*nope\.toml: no such file"):
        load_config(cwd=tmp_path, environ={"AGENTENV_CONFIG": str(missing)})


def test_env_references(tmp_path: Path) -> None:
    config = load_config(cwd=write_config(tmp_path).parent.parent, environ={})
    env = {"FIXTURE_MODEL_KEY": "sk-123", "FIXTURE_ORG": "acme"}
    assert config.raw("model.api_key") == "env:FIXTURE_MODEL_KEY", "raw values stay references"
    assert config.get("model.api_key", environ=env) == "sk-123"
    assert config.get("model.base_url", environ=env) == "http://localhost:8000/v1"
    assert config.get("model.base_url", environ={**env, "FIXTURE_MODEL_URL": "https://x/v1"}) == "https://x/v1"
    with pytest.raises(ConfigError) as info:
        config.get("model.org", environ={})
    message = str(info.value)
    assert str(config.file) in message and "model.org" in message
    assert "FIXTURE_ORG is not set" in message and "env:FIXTURE_ORG?default" in message


def test_empty_default_is_a_default() -> None:
    config = load_config(cwd=Path("/"), environ={"AGENTENV_CONFIG": ""})
    from agentenv.config import resolve

    assert resolve("env:FIXTURE_UNSET?", field="x", file=config.file, environ={}) == ""


def test_secret_references(tmp_path: Path) -> None:
    config = load_config(cwd=write_config(tmp_path).parent.parent, environ={})
    store = {"aws/token": "t0k"}
    assert config.get("plugins.agentenv-aws.token", secrets=store.get) == "t0k"
    with pytest.raises(ConfigError, match=r"plugins\.agentenv-aws\.token: secret 'aws/token' was not found"):
        config.get("plugins.agentenv-aws.token", secrets={}.get)


def test_plugin_settings(tmp_path: Path) -> None:
    config = load_config(cwd=write_config(tmp_path).parent.parent, environ={})
    assert config.plugin_settings("agentenv-aws") == {
        "region": "eu-west-1",
        "bucket": "runs",
        "token": "secret:aws/token",
        "retry": {"attempts": 3},
    }
    assert config.plugin_settings("agentenv-gcp") == {}


def test_unknown_table_warns_and_is_ignored(tmp_path: Path) -> None:
    path = write_config(tmp_path, '[sandbox]\ndefault = "docker"\n\n[sandboxes]\ndefault = "modal"\n')
    config = load_config(cwd=tmp_path, environ={})
    assert config.raw("sandbox.default") == "docker"
    assert config.raw("sandboxes") is None
    (warning,) = config.warnings
    assert str(path) in warning and "unknown table [sandboxes]" in warning and "sandbox" in warning


def test_a_config_that_is_not_utf8_names_the_file_and_byte(tmp_path: Path) -> None:
    path = write_config(tmp_path, "")
    path.write_bytes(b'[store]\ndocument = "\xff"\n')  # a UnicodeDecodeError traceback before
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={})
    assert str(info.value) == (
        f"{path}: not UTF-8 text (byte 0xff at offset 20); TOML must be UTF-8: save the file as UTF-8"
    )


def test_invalid_toml_names_the_file_and_line(tmp_path: Path) -> None:
    path = write_config(tmp_path, '[store]\ndocument = "sqlite"\nobject = \n')
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={})
    assert str(path) in str(info.value) and "invalid TOML" in str(info.value) and "line 3" in str(info.value)


def test_top_level_value_must_be_a_table(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'store = "sqlite"\n')
    with pytest.raises(ConfigError, match="`store` must be a table"):
        load_config(cwd=tmp_path, environ={})
    assert path.exists()


@pytest.mark.parametrize(
    ("key", "raw", "environ", "shown"),
    [
        ("plugins.x.token", "secret:aws/token", {}, "secret:aws/token → ****"),
        ("model.api_key", "env:K", {"K": "sk-123"}, "env:K → ****"),
        ("model.base_url", "env:U", {"U": "https://x"}, "env:U → https://x"),
        ("model.base_url", "env:U?http://d", {}, "env:U?http://d → (unset, default used)"),
        ("model.org", "env:O", {}, "env:O → (unset)"),
        ("model.api_key", "sk-literal", {}, "**** (a literal secret: move it to env: or secret:)"),
        ("run.seed", 7, {}, "7"),
        ("sandbox.default", "docker", {}, "docker"),
        ("store.secret", "env", {}, "env"),  # selects the secret backend; not a credential
    ],
)
def test_display_value_masks_secrets(key: str, raw: object, environ: dict[str, str], shown: str) -> None:
    assert display_value(key, raw, environ) == shown


# ---- `agentenv config show` --------------------------------------------------------------------------------


def test_config_show_masks_and_names_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentenv: Callable[..., CliResult]
) -> None:
    path = write_config(tmp_path)
    monkeypatch.chdir(tmp_path / ".agentenv")
    monkeypatch.setenv("FIXTURE_MODEL_KEY", "sk-very-secret")
    result = agentenv("config", "show", "--json")
    assert result.returncode == 0, result
    report = result.json()
    assert report["file"] == str(path)
    values = {row["key"]: (row["value"], row["source"]) for row in report["values"]}
    assert values["model.api_key"] == ("env:FIXTURE_MODEL_KEY → ****", str(path))
    assert values["plugins.agentenv-aws.token"] == ("secret:aws/token → ****", str(path))
    assert values["plugins.agentenv-aws.retry.attempts"] == ("3", str(path))
    assert values["store.object"] == ("filesystem", "default")
    assert "sk-very-secret" not in result.stdout + result.stderr
    table = agentenv("config", "show")
    assert f"config file: {path}" in table.stdout
    assert "sk-very-secret" not in table.stdout


def test_config_show_defaults_hide_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agentenv: Callable[..., CliResult]
) -> None:
    monkeypatch.chdir(tmp_path)
    result = agentenv("config", "show", "--json")
    assert result.returncode == 0, result
    report = result.json()
    assert report["file"] is None
    shown = {row["key"]: row["value"] for row in report["values"]}
    expected = {f"{table}.{key}": str(value) for table, entries in DEFAULTS.items() for key, value in entries.items()}
    assert shown == expected


def test_config_show_subprocess_warns_and_fails_clearly(tmp_path: Path) -> None:
    write_config(tmp_path, '[sandbox]\ndefault = "docker"\n[sandboxes]\nx = 1\n')
    shown = run_cli("config", "show", "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown
    assert "warning:" in shown.stderr and "unknown table [sandboxes]" in shown.stderr
    assert shown.json()["warnings"]
    broken = tmp_path / "broken.toml"
    broken.write_text("[store\n", encoding="utf-8")
    failed = run_cli("config", "show", cwd=tmp_path, env={"AGENTENV_CONFIG": str(broken)})
    assert failed.returncode == 1
    assert failed.stderr.startswith(f"error: {broken}: invalid TOML")
    assert "Traceback" not in failed.stderr


def test_config_show_masks_url_credentials_and_key_shaped_values() -> None:
    """Issue 16: `user:pass@` in a URL and API keys under innocent names were printed in clear."""
    from agentenv.config import display_value

    shown = display_value("model.base_url", "https://alice:hunter2@llm.example/v1", {})
    assert shown == "https://****@llm.example/v1"
    assert display_value("plugins.x.endpoint_hint", "sk-proj-abcdefghijklmnop", {}) == "****"
    resolved = display_value("model.base_url", "env:BASE", {"BASE": "http://u:p@h/v1"})
    assert resolved == "env:BASE → http://****@h/v1"
    assert display_value("model.model", "gpt-test", {}) == "gpt-test"
