"""The `AGENTENV_<TABLE>__<KEY>` layer (between the file and `agentenv run` flags) and `agentenv config
explain | sources | debug`, each with `--json`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv.config import ConfigError, load_config
from agentenv_testing.installs import CliResult

Agentenv = Callable[..., CliResult]


@pytest.fixture(autouse=True)
def _host() -> None:
    """The variables' layer is the runtime's hook, which the kernel's `load_config` calls through the process's
    plugin host (every `agentenv` command has one): start one, as a command would."""
    from agentenv import get_host, reset_host

    reset_host()
    get_host()


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".agentenv").mkdir()
    (tmp_path / ".agentenv" / "config.toml").write_text(text)
    return tmp_path


def test_variables_override_the_file_and_keep_its_types(tmp_path: Path) -> None:
    project = _project(tmp_path, '[sandbox]\ndefault = "process"\n[run]\nseed = 4\n')
    environ = {
        "AGENTENV_SANDBOX__DEFAULT": "docker",
        "AGENTENV_RUN__SEED": "11",
        "AGENTENV_PLUGINS__AGENTENV_DOCKER__DOCKER__PULL": "false",
        "AGENTENV_MODEL__TEMPERATURE": "0.5",
        "AGENTENV_STATE_DIR": "/elsewhere",  # no `__`: not a config key
    }
    config = load_config(cwd=project, environ=environ)
    assert config.raw("sandbox.default") == "docker"
    assert config.raw("run.seed") == 11
    assert config.raw("plugins.agentenv-docker.docker.pull") is False
    assert config.raw("model.temperature") == 0.5  # a new key is read as a TOML value
    assert config.sources["sandbox.default"] == "env AGENTENV_SANDBOX__DEFAULT"
    assert config.sources["run.seed"] == "env AGENTENV_RUN__SEED"
    assert "state_dir" not in config.values and config.raw("world") is None
    untouched = load_config(cwd=project, environ={})
    assert untouched.raw("sandbox.default") == "process" and untouched.sources["run.seed"].endswith("config.toml")


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("AGENTENV_RUN__SEED", "seven", "AGENTENV_RUN__SEED='seven': expected an int"),
        ("AGENTENV_RUN__SEED__X", "1", "`run.seed` is a value, not a table"),
        ("AGENTENV_PLUGINS__AGENTENV_DOCKER", "1", "`plugins.agentenv-docker` is a table"),
    ],
)
def test_a_bad_variable_names_itself_and_the_fix(tmp_path: Path, variable: str, value: str, message: str) -> None:
    project = _project(tmp_path, '[plugins.agentenv-docker.docker]\npull = true\n')
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_config(cwd=project, environ={variable: value})


def test_explain_says_what_a_key_is_and_where_it_is_set(
    tmp_path: Path, agentenv: Agentenv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path, '[sandbox]\ndefault = "process"\n'))
    from_file = agentenv("config", "explain", "sandbox.default", "--json").json()
    assert from_file["value"] == "process"
    assert from_file["set_in"] == str(tmp_path / ".agentenv" / "config.toml")
    assert from_file["type"] == "str" and from_file["default"] == "inline" and from_file["reader"] == "agentenv-runtime"
    monkeypatch.setenv("AGENTENV_SANDBOX__DEFAULT", "docker")
    from_env = agentenv("config", "explain", "sandbox.default", "--json").json()
    assert from_env["set_in"] == "env AGENTENV_SANDBOX__DEFAULT" and from_env["value"] == "docker"
    plugin = agentenv("config", "explain", "plugins.agentenv-sandbox-local.process.ignore_limits", "--json").json()
    assert plugin["reader"] == "agentenv-sandbox-local" and plugin["type"] == "bool" and plugin["default"] is False
    assert "without enforcing them" in plugin["does"]
    text = agentenv("config", "explain", "sandbox.default")
    assert "set in:  env AGENTENV_SANDBOX__DEFAULT" in text.stdout and "read by: agentenv-runtime" in text.stdout
    typo = agentenv("config", "explain", "sandbox.defualt")
    assert typo.returncode != 0 and "did you mean sandbox.default" in typo.stderr


def test_sources_lists_every_layer_in_order(
    tmp_path: Path, agentenv: Agentenv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_project(tmp_path, "[run]\nseed = 1\n"))
    monkeypatch.setenv("AGENTENV_RUN__SEED", "2")
    layers = agentenv("config", "sources", "--json").json()["layers"]
    assert [layer["layer"] for layer in layers] == ["defaults", "file", "env", "flags"]
    assert layers[1]["found"] == [str(tmp_path / ".agentenv" / "config.toml")]
    assert layers[2]["found"] == [{"variable": "AGENTENV_RUN__SEED", "key": "run.seed"}]
    text = agentenv("config", "sources").stdout
    assert text.index("1. defaults") < text.index("2. file") < text.index("3. env") < text.index("4. flags")


def test_debug_flags_keys_no_plugin_reads(tmp_path: Path, agentenv: Agentenv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path, '[sandbox]\ndefualt = "docker"\n[model]\napi_key = "env:NOPE_KEY"\n'))
    data = agentenv("config", "debug", "--json").json()
    assert data["unknown_keys"] == ["sandbox.defualt"]
    row = next(r for r in data["values"] if r["key"] == "model.api_key")
    assert row["known"] and row["source"].endswith("config.toml")
    assert data["plugins"]["agentenv-runtime"] == "ok"
    text = agentenv("config", "debug")
    assert "no installed plugin reads sandbox.defualt" in text.stderr
