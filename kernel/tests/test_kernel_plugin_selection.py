"""AGENTENV_PLUGINS (allow list) and AGENTENV_DISABLE_PLUGINS (deny list): a disabled plugin is listed with
status "disabled" and never imported. Its fixture module raises on import, so importing it would show."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv.contracts import kinds
from agentenv.plugins.discovery import discover
from agentenv.plugins.host import PluginHost
from agentenv_testing.installs import CliResult, install_fixture_plugin, install_good_plugin, run_cli

BOMB = 'raise RuntimeError("fixture-bomb was imported although it is disabled")\n'


def install_bomb(root: Path) -> Path:
    return install_fixture_plugin(root, "agentenv-fixture-bomb", "1.0.0", "fixture-bomb", "fixture_bomb", BOMB)


@pytest.fixture
def site(on_path: Path) -> Path:
    install_good_plugin(on_path)
    return install_bomb(on_path)


def status_of(environ: dict[str, str]) -> dict[str, str]:
    return {info.name: info.status for info in discover(environ)}


def test_the_bomb_really_explodes(site: Path) -> None:
    """Sanity: without a deny list the fixture module is imported, and fails."""
    host = PluginHost(environ={}).load()
    bomb = host.find("fixture-bomb")
    assert bomb is not None and bomb.status == "failed"
    assert [p.code for p in bomb.problems] == ["import-failed"]


def test_disabled_plugin_is_listed_and_not_imported_subprocess(tmp_path: Path) -> None:
    install_good_plugin(tmp_path)
    install_bomb(tmp_path)
    env = {"AGENTENV_DISABLE_PLUGINS": "fixture-bomb"}
    listing = run_cli("plugin", "list", "--json", paths=[tmp_path], env=env)
    assert listing.returncode == 0, listing
    plugins = {p["name"]: p for p in listing.json()}
    assert (plugins["fixture-bomb"]["status"], plugins["fixture-bomb"]["problems"]) == ("disabled", [])
    assert plugins["fixture-good"]["status"] == "ok"
    assert plugins["fixture-good"]["contributes"] == {"envs": ["fixture_notes"]}
    # With only the fixtures allowed the result does not depend on what else is installed.
    env["AGENTENV_PLUGINS"] = "fixture-good,fixture-bomb"
    check = run_cli("plugin", "check", "--json", paths=[tmp_path], env=env)
    assert (check.returncode, check.json()) == (0, {"ok": True, "problems": []}), check


@pytest.mark.parametrize(
    "deny", ["fixture-bomb", "agentenv-fixture-bomb", " other , fixture-bomb ,", "fixture-good,fixture-bomb"]
)
def test_deny_list_by_plugin_or_distribution_name(site: Path, deny: str) -> None:
    host = PluginHost(environ={"AGENTENV_DISABLE_PLUGINS": deny}).load()
    assert host.find("fixture-bomb").status == "disabled"  # type: ignore[union-attr]
    assert "fixture_bomb" not in sys.modules
    assert all(p.plugin != "fixture-bomb" for p in host.problems())
    assert ("fixture_notes" in host.registries[kinds.ENVS.name]) is ("fixture-good" not in deny)


def test_allow_list_disables_everything_but_what_the_allowed_plugins_require_subprocess(tmp_path: Path) -> None:
    install_good_plugin(tmp_path)
    install_bomb(tmp_path)
    result = run_cli("plugin", "list", "--json", paths=[tmp_path], env={"AGENTENV_PLUGINS": "agentenv-fixture-good"})
    assert result.returncode == 0, result
    status = {p["name"]: p["status"] for p in result.json()}
    assert status.pop("fixture-good") == "ok"
    assert status.pop("runtime") == "ok", "fixture-good requires agentenv-runtime, so it is allowed too"
    assert status.pop("store-local") == "ok", "which requires agentenv-store-local"
    assert set(status.values()) == {"disabled"}, status


def test_allow_list_limits_env_list(
    site: Path, agentenv: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTENV_PLUGINS", "fixture-good")
    result = agentenv("env", "list", "--json")
    assert result.returncode == 0, result
    assert [row["name"] for row in result.json()] == ["fixture_notes"]
    assert "fixture_bomb" not in sys.modules


def test_allow_list_parsing(site: Path) -> None:
    status = status_of({"AGENTENV_PLUGINS": " fixture-good , ,"})
    assert (status["runtime"], status["fixture-good"], status["fixture-bomb"]) == ("ok", "ok", "disabled")
    assert status_of({"AGENTENV_PLUGINS": ""})["fixture-bomb"] == "ok", "an empty allow list allows everything"


def test_deny_wins_over_allow(site: Path) -> None:
    environ = {"AGENTENV_PLUGINS": "fixture-good", "AGENTENV_DISABLE_PLUGINS": "agentenv-fixture-good"}
    assert status_of(environ)["fixture-good"] == "disabled"


def test_a_required_plugin_can_still_be_denied(site: Path) -> None:
    """What an allowed plugin requires is allowed, but the deny list wins (e.g. to debug a runtime hook)."""
    environ = {"AGENTENV_PLUGINS": "fixture-good", "AGENTENV_DISABLE_PLUGINS": "runtime"}
    assert status_of(environ)["runtime"] == "disabled"


def test_process_environment_is_the_default(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTENV_DISABLE_PLUGINS", "fixture-bomb")
    assert {i.name: i.status for i in discover()}["fixture-bomb"] == "disabled"
    assert PluginHost().find("fixture-bomb").status == "disabled"  # type: ignore[union-attr]
