"""`agentenv agent validate URL` in subprocesses: our served agent passes, a plain SDK agent fails by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agent_validators_testkit import serve_llm_agent, serve_model, serve_plain


def agentenv(*args: str, state_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTENV_")}
    env["AGENTENV_STATE_DIR"] = str(state_dir)  # the inline sandbox of the install check keeps its files here
    return subprocess.run(
        [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_our_served_agent_passes(tmp_path: Path) -> None:
    with serve_model() as model, serve_llm_agent(model) as (url, _app):
        done = agentenv("agent", "validate", url, "--timeout", "30", state_dir=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for check in ("verify_a2a_agent_card", "verify_a2a_snapshot", "verify_a2a_install", "verify_a2a_peer_agents"):
        assert any(line.startswith(f"PASS  {check}: ") for line in lines), done.stdout
    assert f"{url}: all required checks passed" in done.stdout
    assert not list((tmp_path / "inline-sandboxes").glob("*.json"))  # the install sandbox was torn down


def test_an_agent_whose_card_urls_are_relative_passes(tmp_path: Path) -> None:
    """The reference implementation's default card url is `"/a2a"`: resolved against the card's address, it is a
    good url, and messages reach the agent there (the extension's endpoint is a path too)."""
    with serve_model() as model, serve_llm_agent(model, card_url="/") as (url, _app):
        done = agentenv("agent", "validate", url, "--json", "--timeout", "30", state_dir=tmp_path)
    report = json.loads(done.stdout)
    verdicts = {c["step"]: c for c in report["checks"]}
    card_rows = {r["criterion"]: r for r in verdicts["verify_a2a_agent_card"]["rows"]}
    assert card_rows["url"]["passed"] and f"{url}/a2a (card: /a2a)" in card_rows["url"]["detail"], card_rows["url"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(v["passed"] for v in verdicts.values()), [v for v in verdicts.values() if not v["passed"]]


def test_plain_agent_fails_naming_the_checks_as_json(tmp_path: Path) -> None:
    with serve_plain() as url:
        done = agentenv("agent", "validate", url, "--json", "--skip", "verify_a2a_modalities", state_dir=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    verdicts = {c["step"]: c for c in report["checks"]}
    assert report["passed"] is False
    assert verdicts["verify_a2a_agent_card"]["passed"] and verdicts["verify_a2a_core_protocol"]["passed"]
    assert verdicts["verify_a2a_modalities"]["skipped"] == "--skip"
    assert not verdicts["verify_a2a_system_prompt"]["passed"]
    assert "urn:agentenv:agent-config/v1" in verdicts["verify_a2a_role"]["reason"]


def test_bad_input_exits_2(tmp_path: Path) -> None:
    assert agentenv("agent", "validate", "not-a-url", state_dir=tmp_path).returncode == 2
    done = agentenv("agent", "validate", "http://127.0.0.1:9", "--skip", "nope", state_dir=tmp_path)
    assert done.returncode == 2 and "--skip: no check 'nope'" in done.stderr


def test_agent_is_a_command_group_listed_at_the_top(tmp_path: Path) -> None:
    top = agentenv("--help", state_dir=tmp_path)
    assert any(line.strip().startswith("agent ") for line in top.stdout.splitlines()), top.stdout
    group = agentenv("agent", "--help", state_dir=tmp_path)
    assert group.returncode == 0 and "validate" in group.stdout
