"""The root help's cache: a hit imports no plugin, no contract and not `typing`, and prints the same help; an edited
plugin module, a plugin deny list or another import path is a miss; a damaged cache is never worse than none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from agentenv.plugins import cache
from agentenv_testing.installs import cli_env, install_fixture_plugin

HELLO, BYE = ("fixture-hello", "Say hello from a plugin."), ("fixture-bye", "Say goodbye.")


def cli_plugin(*commands: tuple[str, str]) -> str:
    """A plugin module whose hook adds `commands` (name, help) to the CLI."""
    listed = ", ".join(f"CliCommand({name!r}, {text!r}, 'fixture_help_impl:app')" for name, text in commands)
    hook = "def agentenv_register_cli_commands():\n    from agentenv.contracts.cli import CliCommand\n"
    return f"from agentenv.hookspecs import hookimpl\n\n\n@hookimpl\n{hook}    return [{listed}]\n"


# The root help, then the watched modules the same process imported.
PROBE = """
import contextlib, io, json, sys
from agentenv.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["--help"])
watched = ("typing", "dataclasses", "pluggy", "tomllib", "agentenv.plugins.host", "agentenv.contracts.cli",
           "fixture_help_plugin")
print(json.dumps({"code": code, "help": out.getvalue(), "imported": sorted(m for m in watched if m in sys.modules)}))
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A folder with a plugin that adds the command `fixture-hello`."""
    root = tmp_path / "site"
    root.mkdir()
    install_fixture_plugin(
        root, "agentenv-fixture-help", "1.0.0", "fixture-help", "fixture_help_plugin", cli_plugin(HELLO)
    )
    return root


def root_help(site: Path, tmp_path: Path, **env: str) -> dict[str, object]:
    environ = cli_env([site], AGENTENV_CACHE_DIR=str(tmp_path / "cache"), **env)
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=environ, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_cached_root_help_imports_no_plugin_no_contract_and_no_typing(site: Path, tmp_path: Path) -> None:
    first = root_help(site, tmp_path)
    assert "fixture-hello" in str(first["help"]) and "fixture_help_plugin" in first["imported"]  # type: ignore[operator]
    second = root_help(site, tmp_path)
    assert second == {"code": 0, "help": first["help"], "imported": []}


def test_an_edited_plugin_module_is_noticed_at_once(site: Path, tmp_path: Path) -> None:
    assert "fixture-bye" not in str(root_help(site, tmp_path)["help"])
    (site / "fixture_help_plugin.py").write_text(cli_plugin(HELLO, BYE))
    after = root_help(site, tmp_path)
    assert "fixture-bye" in str(after["help"]) and "fixture_help_plugin" in after["imported"]  # type: ignore[operator]


def test_the_plugin_deny_list_is_part_of_the_key(site: Path, tmp_path: Path) -> None:
    assert "fixture-hello" in str(root_help(site, tmp_path)["help"])
    denied = root_help(site, tmp_path, AGENTENV_DISABLE_PLUGINS="fixture-help")
    assert "fixture-hello" not in str(denied["help"])
    assert "fixture-hello" in str(root_help(site, tmp_path)["help"]), "the first entry is still there"


def _count(calls: list[int], text: str = "help") -> str:
    calls.append(1)
    return text


def test_each_import_path_keeps_its_own_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    environ, calls = {cache.CACHE_DIR_VAR: str(tmp_path)}, []
    for _ in range(2):
        for first in ("", str(tmp_path)):  # `agentenv` and `python -m agentenv` differ in sys.path[0]
            monkeypatch.setattr(sys, "path", [first, *sys.path[1:]])
            assert cache.cached_text("probe", lambda: _count(calls), environ) == "help"
    assert len(calls) == 2


def test_a_damaged_cache_is_recomputed_and_replaced(tmp_path: Path) -> None:
    environ, calls = {cache.CACHE_DIR_VAR: str(tmp_path)}, []
    cache.cached_text("probe", lambda: _count(calls), environ)
    (written,) = tmp_path.glob("probe-*.txt")
    for damage in (b"\xff\xfe not text", b"\x1e\nonly a key", written.read_bytes().replace(b":", b"?")):
        written.write_bytes(damage)
        assert cache.cached_text("probe", lambda: _count(calls), environ) == "help"
    assert len(calls) == 4
    assert cache.cached_text("probe", lambda: _count(calls), environ) == "help" and len(calls) == 4


def test_no_cache_computes_every_time(tmp_path: Path) -> None:
    environ, calls = {cache.CACHE_DIR_VAR: str(tmp_path), cache.NO_CACHE_VAR: "1"}, []
    for _ in range(2):
        cache.cached_text("probe", lambda: _count(calls), environ)
    assert len(calls) == 2 and not list(tmp_path.iterdir())
