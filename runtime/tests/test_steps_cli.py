"""`agentenv steps list/show` over the installed step plugins, and the task schema built from them."""

from __future__ import annotations

import json
import subprocess
import sys


def agentenv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, timeout=120)


def test_steps_list_json_names_each_step_with_its_distribution() -> None:
    done = agentenv("steps", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["deploy_env"]["distribution"] == "agentenv-steps"
    assert rows["rubrics_verifier"]["distribution"] == "agentenv-steps" and rows["rubrics_verifier"]["verifier"]
    assert all(set(row) >= {"name", "distribution", "version", "description"} for row in rows.values())


def test_steps_show_lists_fields_with_types_defaults_and_descriptions() -> None:
    done = agentenv("steps", "show", "sync_env_clock", "--json")
    assert done.returncode == 0, done.stderr
    fields = {f["name"]: f for f in json.loads(done.stdout)["fields"]}
    assert fields["env"]["required"] and fields["env"]["type"] == "str"
    assert not fields["mode"]["required"] and fields["mode"]["default"] is None
    assert "clock" in fields["env"]["description"]
    missing = agentenv("steps", "show", "no_such_step")
    assert missing.returncode == 1 and "agentenv steps list" in missing.stderr
