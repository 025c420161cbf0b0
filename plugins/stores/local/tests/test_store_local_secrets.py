"""The `env` secret store: the kernel's conformance kit plus environment and file rules."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from agentenv_store_local._files import StoreFileError
from agentenv_store_local.secret import EnvSecretStore, normalize_key
from agentenv_testing.stores import SecretStoreConformance

PREFIX = "AGENTENV_TEST_SECRET_"  # no test leaves variables with this prefix set


def write_secrets(path: Path, secrets: Mapping[str, str], mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{json.dumps(k)} = {json.dumps(v, ensure_ascii=False)}" for k, v in secrets.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(mode)
    return path


def make(file: Path | None, prefix: str = PREFIX) -> EnvSecretStore:
    return EnvSecretStore({"prefix": prefix, "file": None if file is None else str(file)})


class TestEnvSecretConformance(SecretStoreConformance):
    def make_store(self, tmp_path: Path, secrets: Mapping[str, str]) -> EnvSecretStore:
        return make(write_secrets(tmp_path / "secrets.toml", secrets))


def test_environment_comes_before_the_file(tmp_path: Path, monkeypatch: Any) -> None:
    store = make(write_secrets(tmp_path / "s.toml", {"API_TOKEN": "from-file"}))
    assert store.get("API_TOKEN") == "from-file"
    monkeypatch.setenv(PREFIX + "API_TOKEN", "from-env")
    assert store.get("API_TOKEN") == "from-env"
    monkeypatch.setenv(PREFIX + "API_TOKEN", "")
    assert store.get("API_TOKEN") == ""  # set-but-empty is a value, not a miss


def test_default_settings(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    store = EnvSecretStore()
    assert store.prefix == "AGENTENV_SECRET_"
    assert store.file == tmp_path / ".agentenv" / "secrets.toml"
    assert store.get("SURELY_NOT_SET_ANYWHERE") is None  # no file: no error
    monkeypatch.setenv("AGENTENV_SECRET_OPENAI_API_KEY", "sk-test")
    assert store.get("openai-api.key") == "sk-test"
    assert store.env_var("openai-api.key") == "AGENTENV_SECRET_OPENAI_API_KEY"


def test_keys_are_normalised_for_variables_and_file(tmp_path: Path, monkeypatch: Any) -> None:
    path = write_secrets(tmp_path / "s.toml", {"slack-bot-token": "xoxb", "GITHUB_TOKEN": "ghp"})
    store = make(path)
    assert store.get("slack-bot-token") == "xoxb"
    assert store.get("SLACK_BOT_TOKEN") == "xoxb"
    assert store.get("slack.bot.token") == "xoxb"
    assert store.get("github-token") == "ghp"
    monkeypatch.setenv(PREFIX + "A_B_C", "env")
    assert store.get("a.b-c") == "env"


def test_exact_file_key_wins_over_normalised_match(tmp_path: Path) -> None:
    store = make(write_secrets(tmp_path / "s.toml", {"api-key": "dash", "API_KEY": "upper"}))
    assert store.get("api-key") == "dash"
    assert store.get("API_KEY") == "upper"
    with pytest.raises(StoreFileError, match="several different values"):
        store.get("api.key")


@pytest.mark.parametrize("key", ["", "has space", "slash/key", "ünï", "semi;colon"])
def test_invalid_keys_are_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match="invalid secret key"):
        make(None).get(key)


def test_file_keys_that_are_not_valid_keys_are_ignored(tmp_path: Path) -> None:
    store = make(write_secrets(tmp_path / "s.toml", {"has space": "x", "OK": "y"}))
    assert store.get("OK") == "y"
    assert store.get("has_space") is None


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o601, 0o610])
def test_exposed_secrets_file_is_refused_with_the_fix(tmp_path: Path, mode: int) -> None:
    path = write_secrets(tmp_path / "secrets.toml", {"API_TOKEN": "tok"}, mode=mode)
    store = make(path)
    with pytest.raises(StoreFileError) as err:
        store.get("API_TOKEN")
    message = str(err.value)
    assert f"chmod 600 {path}" in message
    assert f"{mode:o}" in message


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_private_modes_are_accepted_and_env_needs_no_file(tmp_path: Path, monkeypatch: Any) -> None:
    path = write_secrets(tmp_path / "secrets.toml", {"API_TOKEN": "tok"}, mode=0o400)
    assert make(path).get("API_TOKEN") == "tok"
    path.chmod(0o644)
    monkeypatch.setenv(PREFIX + "API_TOKEN", "env")
    assert make(path).get("API_TOKEN") == "env"  # the exposed file is not even read


def test_environment_only_when_file_is_disabled(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    write_secrets(tmp_path / ".agentenv" / "secrets.toml", {"API_TOKEN": "file"})
    for store in (EnvSecretStore({"prefix": PREFIX, "file": None}), EnvSecretStore({"prefix": PREFIX, "file": ""})):
        assert store.file is None
        assert store.get("API_TOKEN") is None


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("API_TOKEN = 'unterminated\n", "not valid UTF-8 TOML"),
        ("API_TOKEN = 42\n", "'API_TOKEN' must be a string"),
        ("[nested]\nAPI_TOKEN = 'x'\n", "'nested' must be a string"),
    ],
)
def test_malformed_secrets_file_names_the_file(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "secrets.toml"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(StoreFileError, match=match) as err:
        make(path).get("API_TOKEN")
    assert str(path) in str(err.value)


def test_file_edits_apply_without_a_new_store(tmp_path: Path) -> None:
    path = write_secrets(tmp_path / "s.toml", {"API_TOKEN": "one"})
    store = make(path)
    assert store.get("API_TOKEN") == "one"
    write_secrets(path, {"API_TOKEN": "two"})
    assert store.get("API_TOKEN") == "two"


def test_a_folder_as_secrets_file_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "secrets.toml"
    folder.mkdir()
    with pytest.raises(StoreFileError, match=r"secrets\.toml"):
        make(folder).get("API_TOKEN")


def test_normalize_key() -> None:
    assert normalize_key("openai-api.key") == "OPENAI_API_KEY"
    with pytest.raises(TypeError):
        normalize_key(3)  # type: ignore[arg-type]
