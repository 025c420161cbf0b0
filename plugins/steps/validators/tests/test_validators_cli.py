"""`agentenv env validate` end to end in subprocesses: the apps pass, a broken fixture plugin fails by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from validators_testkit import served

BROKEN_ENV = '''
from typing import Any

from agentenv_runtime import Env, tool


class BrokenEnv(Env):
    name = "broken_fixture"
    description = "A fixture env whose `lookup` tool has no description and an untyped parameter."
    schema = "CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE);"

    @tool(read_only=True)
    def count_items(self) -> dict[str, Any]:
        """How many items there are."""
        return {"count": self.db.execute("SELECT COUNT(*) FROM items").fetchone()[0]}

    @tool(read_only=True)
    def lookup(self, label):
        return self.query("SELECT * FROM items WHERE label = ?", (label,))
'''

BROKEN_PLUGIN = """
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs():
    from validators_broken_env.env import BrokenEnv

    return [BrokenEnv]
"""


def install_broken_plugin(root: Path) -> Path:
    """A distribution `agentenv-broken-fixture` on disk, found by importlib.metadata like an installed one."""
    package = root / "validators_broken_env"
    (package / "artifacts").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "env.py").write_text(textwrap.dedent(BROKEN_ENV))
    (package / "plugin.py").write_text(textwrap.dedent(BROKEN_PLUGIN))
    artifact = {
        "name": "basic",
        "env": "broken_fixture",
        "version": "1.0.0",
        "description": "Two items.",
        "data": {"items": [{"id": 1, "label": "alpha"}, {"id": 2, "label": "beta"}]},
    }
    (package / "artifacts" / "basic.json").write_text(json.dumps(artifact))
    meta = root / "agentenv_broken_fixture-1.0.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agentenv-broken-fixture\nVersion: 1.0.0\n"
        "Requires-Dist: agentenv-kernel>=0.1,<0.2\n"
    )
    (meta / "entry_points.txt").write_text("[agentenv.plugins]\nbroken-fixture = validators_broken_env.plugin\n")
    (meta / "RECORD").write_text("")
    return root


def agentenv(*args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTENV_")}
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


@pytest.mark.parametrize("target", ["slack", "email", "helpdesk", "helpdesk,email,slack"])
def test_apps_pass(target: str) -> None:
    done = agentenv("env", "validate", target)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for check in (
        "verify_mcp_tool_schema",
        "verify_spec_conformance",
        "verify_env_card",
        "verify_env_core_protocol",
        "verify_universe_load_export_roundtrip",
    ):
        assert any(line.startswith(f"PASS  {check}: ") for line in lines), done.stdout
    assert f"{target}: all required checks passed" in done.stdout


def test_broken_fixture_plugin_fails_naming_the_check(tmp_path: Path) -> None:
    root = install_broken_plugin(tmp_path / "site")
    done = agentenv("env", "validate", "broken_fixture", pythonpath=root)
    assert done.returncode == 1, done.stdout + done.stderr
    failing = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failing) == 1, done.stdout
    assert failing[0].startswith("FAIL  verify_mcp_tool_schema: tool lookup: no description")
    assert "parameter 'label' has no type" in failing[0]
    assert "FAILED: verify_mcp_tool_schema" in done.stdout
    as_json = json.loads(agentenv("env", "validate", "broken_fixture", "--json", pythonpath=root).stdout)
    assert as_json["passed"] is False
    assert [c["step"] for c in as_json["checks"] if not c["passed"]] == ["verify_mcp_tool_schema"]
    # composed with a good app, the broken one still fails the run
    assert agentenv("env", "validate", "slack,broken_fixture", pythonpath=root).returncode == 1


def test_served_url() -> None:
    with served(["slack", "email"]) as (url, _):
        done = agentenv("env", "validate", url, "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    by_step = {c["step"]: c for c in report["checks"]}
    assert by_step["verify_spec_conformance"]["skipped"] and by_step["verify_spec_conformance"]["required"] is False
    assert by_step["verify_universe_load_export_roundtrip"]["passed"]


def test_unknown_env_and_unreachable_url() -> None:
    unknown = agentenv("env", "validate", "nope")
    assert unknown.returncode == 2 and "nope" in unknown.stderr
    gone = agentenv("env", "validate", "http://127.0.0.1:9", "--timeout", "2")
    assert gone.returncode == 1
    assert "FAIL  verify_env_card: card served: cannot reach" in gone.stdout
