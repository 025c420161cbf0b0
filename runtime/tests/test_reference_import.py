"""Task files of the reference AgentEnv implementation (JSON arrays, entity names, `{"task_step_id": …}`
dependencies): `agentenv task import` and a direct `agentenv run` of one.

The reference implementation's own example bundles are run in `tests/test_reference_interop.py`; here the
files are written in its format for our support-desk world.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from agentenv_runtime.engine.importer import CONVERTERS, ReferenceTaskError, import_reference_task
from agentenv_runtime.engine.task import TaskError, read_task

REFUND = [
    {"id": "desk", "type": "deploy_env", "env_id": "helpdesk", "artifact_id": "acme", "sandbox_type": "local"},
    {"id": "email", "type": "deploy_env", "env_id": "email", "depends_on": []},
    {"id": "clock", "type": "sync_env_clock", "env_id": "helpdesk", "virtual_time": "2026-11-24T10:00:00Z",
     "virtual_seconds_per_real_second": 60, "depends_on": [{"task_step_id": "desk"}]},
    {"id": "lock", "type": "modify_env_tool_access", "env_id": "helpdesk", "action": "disable", "role": "support",
     "tools": ["issue_refund"]},
    {"id": "agent", "type": "deploy_agent", "env_ids": ["helpdesk"], "agent_name": "solver", "role": "billing_lead"},
    {"id": "ticket", "type": "prompt_agent", "agent_name": "solver", "prompt_id": "p1",
     "prompt": "Ticket TCK-9001 from Dana Kim is waiting."},
    {"id": "says", "type": "agent_prompt_response_verifier", "prompt_id": "p1", "verifier_id": "v-says",
     "criteria": [{"type": "response_contains", "criterion": "names the ticket", "needles": ["TCK-9001"]},
                  {"type": "response_regex_present", "criterion": "an amount", "pattern": "[0-9]+\\.[0-9]{2}"}]},
    {"id": "all", "type": "aggregate_verifiers", "verifier_ids": ["v-says"], "score_aggregator": "all_pass",
     "verifier_id": "v-all"},
]


def test_every_step_type_has_a_converter() -> None:
    """The 49 step types carry the reference's names, so each one installed here has a converter (step types of
    our own beyond them, such as a bundle's verifier, have no counterpart there to convert from)."""
    from agentenv import get_host
    from agentenv.contracts import kinds

    installed = set(get_host().usable(kinds.STEPS))
    assert len(CONVERTERS) == 49 and set(CONVERTERS) <= installed, sorted(set(CONVERTERS) - installed)


def test_fields_dependencies_and_names_are_mapped() -> None:
    imported = import_reference_task(REFUND, name="refund")
    assert imported.unmapped == []
    steps = {s["id"]: s for s in imported.task["steps"]}
    assert steps["desk"] == {"id": "desk", "type": "deploy_env", "envs": ["helpdesk"], "artifacts": ["helpdesk=acme"],
                             "sandbox": "process", "roles": {"support": {"tools": ["*"]}}}
    # `lock` changes `support`, which the reference serves every tool until then: declared so, not refused
    assert "step 'desk' (deploy_env): field `roles.support`: declared with every tool" in "\n".join(imported.notes)
    assert steps["email"]["depends_on"] == []
    assert steps["clock"] == {"id": "clock", "type": "sync_env_clock", "depends_on": ["desk"], "env": "desk",
                              "start": "2026-11-24T10:00:00Z", "mode": "scaled", "rate": 60}
    assert steps["lock"]["disable"] == ["issue_refund"] and steps["lock"]["env"] == "desk"
    assert steps["agent"] == {"id": "agent", "type": "deploy_agent", "env": "desk", "role": "billing_lead"}
    assert steps["ticket"]["agent"] == "agent"
    assert steps["says"]["prompt_step"] == "ticket"
    assert steps["says"]["checks"] == [
        {"name": "names the ticket", "contains": "TCK-9001", "case_sensitive": True},
        {"name": "an amount", "regex": "[0-9]+\\.[0-9]{2}"},
    ]
    assert steps["all"] == {"id": "all", "type": "aggregate_verifiers", "verifiers": ["says"], "method": "all_pass"}


def test_each_field_without_a_counterpart_is_named() -> None:
    steps = [
        {"id": "env", "type": "deploy_env", "env_id": "helpdesk", "gateway_mode": "consistent", "cpu": 2},
        {"id": "check", "type": "env_outcome_verifier", "env_id": "helpdesk", "file_artifact_id": "check_it"},
        {"id": "t", "type": "register_env_triggers", "env_id": "nowhere", "triggers": [{"when": {"type": "state"}}]},
        {"id": "odd", "type": "no_such_step"},
        {"id": "retry", "type": "reset_env", "env_id": "helpdesk", "retry_config": {"retry_from_step_id": "env"}},
    ]
    imported = import_reference_task(steps, name="x")
    text = "\n".join(imported.unmapped)
    assert "step 'env' (deploy_env): field `gateway_mode`" in text and "field `cpu`" in text
    assert "step 'check' (env_outcome_verifier): field `file_artifact_id`" in text
    assert "step 't' (register_env_triggers): field `env_id`: no step of this task deploys env 'nowhere'" in text
    assert "field `triggers.0.when.type: 'state' triggers have no counterpart" in text
    assert "step 'odd' (no_such_step): the step type has no counterpart" in text
    assert next(s for s in imported.task["steps"] if s["id"] == "retry")["retry"] == {"from": "env", "times": 1}
    with pytest.raises(ReferenceTaskError, match="non-empty JSON array"):
        import_reference_task({"steps": []}, name="x")
    with pytest.raises(ReferenceTaskError, match=r"steps\[0\]"):
        import_reference_task([{"type": "deploy_env"}], name="x")


def test_nested_keys_without_a_counterpart_are_named_with_their_path(tmp_path: Path) -> None:
    """Keys inside criteria, artifacts, parts, peerings and retry_config, and names no step makes, were dropped
    silently; each is now an item of its own (field path and why), with a summary count from the command."""
    hello = [  # the reference's hello bundle task, with keys its importer has no counterpart for
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box", "sandbox_type": "local"},
        {"id": "hello", "type": "verify_sandbox", "sandbox_name": "box", "base_dir": "/app/greeting",
         "verifier_id": "hello", "criteria": [
             {"type": "probe_file_contains", "criterion": "greets", "paths": ["hello.txt"], "expected": "hello",
              "case_insensitive": True},
             {"type": "bash_cmd_succeeds", "criterion": "check passes", "bash_cmd": "bash check.sh", "user": "root"},
         ]},
        {"id": "env", "type": "deploy_env", "env_id": "helpdesk"},
        {"id": "load", "type": "load_artifact", "env_id": "helpdesk",
         "artifacts": [{"artifact_id": "acme", "artifact_version": 3}]},
        {"id": "ask", "type": "prompt_agent", "prompt_id": "p1", "parts": [{"kind": "text", "text": "Hi",
                                                                            "metadata": {"lang": "en"}}]},
        {"id": "says", "type": "agent_prompt_response_verifier", "prompt_id": "p1", "verifier_id": "v",
         "criteria": [{"type": "response_contains", "criterion": "greets", "needles": ["hi"], "weight": 2,
                       "case_sensitive": False}]},
        {"id": "gate", "type": "validation_gate_aggregator", "required_gates": ["v", "nowhere"]},
        {"id": "again", "type": "reset_env", "env_id": "helpdesk",
         "retry_config": {"retry_from_step_id": "env", "max_retries": 2, "backoff_seconds": 5}},
        {"id": "down", "type": "teardown_sandboxes", "sandbox_names": ["box", "ghost"]},
    ]
    imported = import_reference_task(hello, name="hello")
    assert sorted(imported.unmapped) == sorted([
        "step 'hello' (verify_sandbox): field `criteria.0.case_insensitive`: no counterpart in a probe_file_contains "
        "check",
        "step 'hello' (verify_sandbox): field `criteria.1.user`: no counterpart in a bash_cmd_succeeds check",
        "step 'load' (load_artifact): field `artifacts.0.artifact_version`: artifacts are named and pinned by "
        "content hash",
        "step 'ask' (prompt_agent): field `parts.0.metadata`: a text part becomes plain prompt text",
        "step 'says' (agent_prompt_response_verifier): field `criteria.0.case_sensitive`: no counterpart in a "
        "response_contains check",
        "step 'gate' (validation_gate_aggregator): field `required_gates.1`: no step of this task is 'nowhere' or "
        "writes a verifier of that id",
        "step 'again' (reset_env): field `retry_config.backoff_seconds`: a retry here is {from, times}",
        "step 'down' (teardown_sandboxes): field `sandbox_names.1`: no step of this task deploys sandbox 'ghost'",
    ])
    says = next(s for s in imported.task["steps"] if s["id"] == "says")
    assert says["checks"][0]["weight"] == 2  # mapped now, where it was dropped
    source = tmp_path / "hello.json"
    source.write_text(json.dumps(hello))
    done = agentenv("task", "import", str(source), "--out", str(tmp_path / "hello.toml"))
    assert done.returncode == 1 and done.stderr.count("not mapped: ") == 8
    assert f"{source}: 8 item(s) of 7 step(s) not mapped" in done.stderr and "by hand" in done.stderr


def test_reference_triggers_are_translated() -> None:
    theirs = {"id": "t1", "when": {"type": "action", "tool": "get_ticket"},
              "actions": [{"type": "permission", "action": "enable", "role": "support", "tools": ["issue_refund"]}]}
    steps = [{"id": "env", "type": "deploy_env", "env_id": "helpdesk"},
             {"id": "rules", "type": "register_env_triggers", "env_id": "helpdesk", "triggers": [theirs]}]
    imported = import_reference_task(steps, name="x")
    assert imported.unmapped == []
    rules = imported.task["steps"][1]
    assert rules["env"] == "env" and rules["triggers"][0]["kind"] == "tool_call"
    steps[1]["triggers"] = [{"id": "t2", "when": {"type": "website", "app": "shop"}, "actions": []}]
    text = "\n".join(import_reference_task(steps, name="x").unmapped)
    assert "step 'rules' (register_env_triggers): field `triggers.0.when.type: 'website' triggers" in text


def test_executor_and_await_fields_of_register_env_triggers_are_mapped(tmp_path: Path) -> None:
    theirs = {"id": "t1", "when": {"type": "action", "tool": "get_ticket"},
              "actions": [{"type": "permission", "action": "enable", "role": "support", "tools": ["issue_refund"]}]}
    steps = [
        {"id": "env", "type": "deploy_env", "env_id": "helpdesk"},
        {"id": "boss", "type": "deploy_agent", "agent_name": "boss", "env_ids": ["helpdesk"]},
        {"id": "rules", "type": "register_env_triggers", "env_id": "helpdesk", "triggers": [theirs],
         "executor_agent_name": "boss", "executor_timeout_seconds": 30, "await_fired": ["t1"],
         "await_timeout_seconds": 600, "executor_hours": {"start": "09:00"}},
    ]
    imported = import_reference_task(steps, name="x")
    rules = next(s for s in imported.task["steps"] if s["id"] == "rules")
    assert rules["executor_agent"] == "boss" and rules["executor_timeout_seconds"] == 30
    assert rules["await_fired"] == ["t1"] and rules["await_timeout_seconds"] == 600
    assert imported.unmapped == [
        "step 'rules' (register_env_triggers): field `executor_hours`: no counterpart in agentenv's triggers"
    ]


def test_load_artifact_into_sandboxes_from_earlier_steps_and_snapshot_after_load_are_mapped() -> None:
    steps = [
        {"id": "env", "type": "deploy_env", "env_id": "helpdesk"},
        {"id": "load", "type": "load_artifact", "env_id": "helpdesk", "artifact_id": "acme",
         "snapshot_after_load": True},
        {"id": "box", "type": "deploy_sandbox", "sandbox_name": "box"},
        {"id": "grab", "type": "collect_artifacts", "sandbox_name": "box", "paths": ["out.txt"]},
        {"id": "files", "type": "load_artifact", "sandbox_name": "box", "collected_artifacts_step_id": "grab",
         "destination_path": "/app/in"},
        {"id": "data", "type": "load_artifact", "sandbox_name": "box", "artifact_id": "seed-data"},
        {"id": "again", "type": "load_artifact", "env_id": "helpdesk", "artifact_from_step_id": "load",
         "urls": ["https://example.com/a.json"]},
    ]  # fmt: skip
    imported = import_reference_task(steps, name="x")
    by_id = {s["id"]: s for s in imported.task["steps"]}
    assert by_id["load"]["snapshot_after_load"] is True and by_id["load"]["artifacts"] == ["helpdesk=acme"]
    files = by_id["files"]
    assert (files["type"], files["sandbox"], files["artifacts"], files["path"]) == (
        "load_artifact", "box", ["step:grab"], "/app/in"
    )
    assert by_id["data"]["artifacts"] == ["file:artifacts/seed-data"] and by_id["data"]["path"] == "/app/seed-data"
    assert by_id["again"]["artifacts"] == ["step:load"]
    assert [line for line in imported.unmapped if "load_artifact" in line] == [
        "step 'again' (load_artifact): field `urls`: agentenv loads artifacts from the bundle, the object store or "
        "earlier steps, not from URLs"
    ]


def test_reading_a_reference_file_refuses_unmapped_fields(tmp_path: Path) -> None:
    path = tmp_path / "task.json"
    path.write_text(json.dumps([{"id": "env", "type": "deploy_env", "env_id": "helpdesk", "ttl_seconds": 60}]))
    with pytest.raises(TaskError, match=r"task.json: step 'env' \(deploy_env\): field `ttl_seconds`"):
        read_task(path)
    path.write_text(json.dumps(REFUND))
    task = read_task(path)
    assert task.name == "task" and [s.type for s in task.steps][:2] == ["deploy_env", "deploy_env"]
    assert task.deps()["clock"] == ["desk"]


def agentenv(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_import_command_writes_toml_and_names_what_it_cannot_map(tmp_path: Path) -> None:
    source = tmp_path / "refund.json"
    source.write_text(json.dumps(REFUND))
    out = tmp_path / "refund.toml"
    done = agentenv("task", "import", str(source), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert tomllib.loads(out.read_text())["steps"][2]["env"] == "desk"
    lossy = tmp_path / "lossy.json"
    lossy.write_text(json.dumps([{"id": "env", "type": "deploy_env", "env_id": "helpdesk", "disk_size_gb": 4}]))
    done = agentenv("task", "import", str(lossy), "--out", str(tmp_path / "lossy.toml"))
    assert done.returncode == 1 and "not mapped:" in done.stderr and "field `disk_size_gb`" in done.stderr
    missing = agentenv("task", "import", str(tmp_path / "nope.json"), "--out", str(out))
    assert missing.returncode == 2 and "nope.json: cannot read it" in missing.stderr


def helpdesk_agents(bundle: Path) -> None:
    """The support-refund agents in `bundle`, without the email they send: in the reference layout each env is a
    world of its own and the agent acts in the helpdesk one, and a run refuses a policy calling a tool its world
    lacks."""
    import agentenv_support_desk

    agents = Path(agentenv_support_desk.__file__).parent / "bundles" / "support-refund" / "agents"
    (bundle / "agents").mkdir(parents=True)
    for policy in agents.glob("*.toml"):
        lines = policy.read_text().splitlines(keepends=True)
        (bundle / "agents" / policy.name).write_text("".join(line for line in lines if "send_email" not in line))


def test_a_reference_bundle_runs_directly(tmp_path: Path) -> None:
    """A bundle laid out the reference way (no bundle.toml), its task a JSON array, run with our solver."""
    bundle = tmp_path / "refund-ref"
    (bundle / "tasks").mkdir(parents=True)
    helpdesk_agents(bundle)
    drop = {"deploy_env": "sandbox_type", "deploy_agent": "role"}  # in process; the reference's default role
    steps = [{k: v for k, v in s.items() if k != drop.get(s["type"])} for s in REFUND if s["id"] != "email"]
    (bundle / "tasks" / "refund.json").write_text(json.dumps(steps))
    done = agentenv("run", str(bundle), "--agent", "solver", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert [t["score"] for t in summary["tasks"]] == [1.0], summary
    wrong = agentenv("run", str(bundle), "--agent", "wrong_solver", "--json")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr


def test_a_task_file_in_a_bundle_runs_in_that_bundle(tmp_path: Path) -> None:
    """Relative paths of a task file run directly (`agentenv run B/tasks/T.json`) are the bundle's."""
    bundle = tmp_path / "refund-ref"
    (bundle / "tasks").mkdir(parents=True)
    helpdesk_agents(bundle)
    steps = [{"id": "desk", "type": "deploy_env", "env_id": "helpdesk", "artifact_id": "acme"},
             {"id": "agent", "type": "deploy_agent", "env_ids": ["helpdesk"], "agent_name": "solver"},
             {"id": "ticket", "type": "prompt_agent", "agent_name": "solver", "prompt": "TCK-9001 is waiting."}]
    (bundle / "tasks" / "refund.json").write_text(json.dumps(steps))
    done = agentenv("run", str(bundle / "tasks" / "refund.json"), "--agent", "solver", "--json")
    assert done.returncode == 0, done.stdout + done.stderr  # agents/solver.toml found in the bundle, not in tasks/
