"""Env validators 30, 31, 34, 35, 36 inside real tasks: real worlds pass, broken ones fail by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime import TaskError
from validators_testkit import ALL, served, world_step

CHECKS = (
    "verify_mcp_tool_schema",
    "verify_spec_conformance",
    "verify_env_card",
    "verify_env_core_protocol",
    "verify_universe_load_export_roundtrip",
)


def checks(target: dict[str, Any], **extra: Any) -> list[dict[str, Any]]:
    return [{"id": kind, "type": kind, **target, **extra.get(kind, {})} for kind in CHECKS]


def rows_of(record: dict[str, Any], step_id: str) -> dict[str, dict[str, Any]]:
    return {r["criterion"]: r for r in record["by_id"][step_id]["output"]["rows"]}


def test_support_desk_world_passes_every_check_and_is_left_untouched(run: Any) -> None:
    record = run([world_step(), *checks({"env": "world"})])
    assert record["status"] == "succeeded", record
    for kind in CHECKS:
        out = record["by_id"][kind]["output"]
        assert out["passed"] is True and out["score"] == 1.0, (kind, [r for r in out["rows"] if not r["passed"]])
    schema = rows_of(record, "verify_mcp_tool_schema")
    assert "tool get_ticket" in schema and "tool post_message" in schema and "tool send_email" in schema
    protocol = rows_of(record, "verify_env_core_protocol")
    assert protocol["data/add loads a row"]["passed"] and protocol["data/get shows the added row"]["passed"]
    trip = rows_of(record, "verify_universe_load_export_roundtrip")
    assert set(trip) == {f"{env} export → reload → export" for env in ALL}
    assert "helpdesk/acme" in trip["helpdesk export → reload → export"]["detail"]
    assert record["score"] == 1.0 and record["passed"] is True
    assert sorted(record["verifiers"]) == sorted(CHECKS)


@pytest.mark.parametrize("env", ALL)
def test_each_app_alone(run: Any, env: str) -> None:
    record = run([world_step(envs=[env]), *checks({"env": "world"})])
    assert all(record["by_id"][kind]["output"]["passed"] for kind in CHECKS), record


def test_checks_use_a_copy_of_the_deployed_world(run: Any) -> None:
    """The checks load and reset data; the task's own world must see none of it."""
    record = run([world_step(), *checks({"env": "world"}), {"id": "after", "type": "test_export", "world": "world"}])
    assert record["by_id"]["verify_env_core_protocol"]["output"]["passed"]
    after = record["by_id"]["after"]["output"]
    assert after["export"] == record["by_id"]["world"]["output"]["export"]
    assert after["events"] == 0


def test_broken_env_fails_schema_check_naming_the_tool(run: Any) -> None:
    steps = [world_step(envs=["broken_notes"], artifacts=[]), *checks({"env": "world"})]
    record = run(steps)
    assert record["status"] == "succeeded"
    out = record["by_id"]["verify_mcp_tool_schema"]["output"]
    assert out["passed"] is False and out["score"] == 0.5
    bad = rows_of(record, "verify_mcp_tool_schema")["tool find"]
    assert not bad["passed"] and "no description" in bad["detail"] and "parameter 'query' has no type" in bad["detail"]
    assert rows_of(record, "verify_mcp_tool_schema")["tool add_note"]["passed"]
    # an empty world has nothing to copy as a probe row: that is a failed criterion, named
    probe = rows_of(record, "verify_env_core_protocol")["data/add loads a row"]
    assert not probe["passed"] and "load an artifact" in probe["detail"]


def test_probe_row_and_probe_call(run: Any) -> None:
    extra = {
        "verify_env_core_protocol": {
            "probe": {"env": "broken_notes", "table": "notes", "row": {"id": 7, "text": "probe"}},
            "probe_call": {"tool": "add_note", "arguments": {"text": "written by a tool"}},
        }
    }
    record = run([world_step(envs=["broken_notes"], artifacts=[]), checks({"env": "world"}, **extra)[3]])
    rows = rows_of(record, "verify_env_core_protocol")
    assert all(r["passed"] for r in rows.values()), rows
    assert "data/reset undoes a tool call" in rows


def test_reset_empty_semantics_fail_against_agentenv_gateway(run: Any) -> None:
    step = checks({"env": "world"}, verify_env_core_protocol={"reset": "empty"})[3]
    record = run([world_step(envs=["slack"]), step])
    rows = rows_of(record, "verify_env_core_protocol")
    assert not rows["data/reset returns to the empty state"]["passed"]
    assert "survived" in rows["data/reset returns to the empty state"]["detail"]


def test_spec_file_mismatches_are_named(run: Any, tmp_path: Path) -> None:
    from agentenv_runtime import build_world

    tools = build_world(["slack"]).list_tools()
    by_name = {t["name"]: json.loads(json.dumps(t)) for t in tools}
    del by_name["list_users"]  # served but not declared
    by_name["post_message"]["inputSchema"]["properties"]["urgent"] = {"type": "boolean", "description": "x"}
    by_name["get_channel"]["inputSchema"]["required"] = []
    by_name["fly"] = {"name": "fly", "description": "Fly.", "inputSchema": {"type": "object", "properties": {}}}
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tools": list(by_name.values())}))
    step = {"id": "spec", "type": "verify_spec_conformance", "env": "world", "spec": str(spec)}
    record = run([world_step(envs=["slack"]), step])
    rows = rows_of(record, "spec")
    assert rows["tool fly"]["detail"] == "declared but not served"
    assert rows["tool list_users"]["detail"] == "served but not declared by any env"
    assert "missing parameter(s) urgent" in rows["tool post_message"]["detail"]
    assert "declared optional" in rows["tool get_channel"]["detail"]
    assert rows["tool get_user"]["passed"]
    assert record["by_id"]["spec"]["output"]["passed"] is False


def test_declared_envs_differ_from_served(run: Any) -> None:
    step = {"id": "spec", "type": "verify_spec_conformance", "env": "world", "envs": ["slack", "email"]}
    record = run([world_step(envs=["slack"]), step])
    rows = rows_of(record, "spec")
    assert rows["tool send_email"]["detail"] == "declared but not served"
    assert rows["tool post_message"]["passed"]


def test_url_target(run: Any) -> None:
    with served(["helpdesk", "email"]) as (url, world):
        before = world.export()
        record = run(checks({"url": url}))
        for kind in CHECKS:
            assert record["by_id"][kind]["output"]["passed"], (kind, record["by_id"][kind]["output"]["rows"])
        after = world.export()
    # checking a URL loads a probe row into that world (documented); nothing else changes
    changed = [(env, t) for env in after for t in after[env] if after[env][t] != before[env][t]]
    assert len(changed) == 1
    trip = rows_of(record, "verify_universe_load_export_roundtrip")
    assert "data/get of http://127.0.0.1" in trip["email export → reload → export"]["detail"]


def test_url_with_tokens(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VALIDATE_TOKEN", "s3cret")
    with served(["slack"], tokens={"default": "s3cret"}) as (url, _):
        ok = run([{"id": "card", "type": "verify_env_card", "url": url, "token": "env:VALIDATE_TOKEN"}])
        public = run([{"id": "card", "type": "verify_env_card", "url": url}])
    assert ok["by_id"]["card"]["output"]["passed"]
    assert rows_of(ok, "card")["capabilities.tools"]["detail"] == "18 tools"
    rows = rows_of(public, "card")  # the card is a public discovery document: served without a token, no tools
    assert rows["card served"]["passed"] and rows["capabilities.tools"]["detail"] == "0 tools"


def test_unreachable_url_is_a_failed_verdict(run: Any) -> None:
    record = run([{"id": "schema", "type": "verify_mcp_tool_schema", "url": "http://127.0.0.1:9", "timeout": 2}])
    out = record["by_id"]["schema"]["output"]
    assert out["passed"] is False and "MCP tools/list" in out["rows"][0]["criterion"]


def test_roundtrip_with_artifact_and_a_deployed_world_without_one(run: Any) -> None:
    step = {"id": "trip", "type": "verify_universe_load_export_roundtrip", "env": "world", "artifacts": ["slack=acme"]}
    record = run([world_step(envs=["slack"], artifacts=[]), step])
    detail = rows_of(record, "trip")["slack export → reload → export"]["detail"]
    assert "slack/acme" in detail and "identical" in detail
    plain = {"id": "trip", "type": "verify_universe_load_export_roundtrip", "env": "world"}
    notes = {
        "id": "world",
        "type": "test_world",
        "envs": ["broken_notes"],
        "calls": [{"tool": "add_note", "args": {"text": "hello"}}],
    }
    record = run([notes, plain])
    detail = rows_of(record, "trip")["broken_notes export → reload → export"]["detail"]
    assert "1 rows" in detail and "deployed world's data" in detail


@pytest.mark.parametrize(
    ("step", "field", "message"),
    [
        ({"type": "verify_env_card"}, "env", "name the deploy_env step"),
        ({"type": "verify_env_card", "env": "nope"}, "env", "no step 'nope'"),
        ({"type": "verify_env_card", "env": "world", "url": "http://x"}, "env", "not both"),
        ({"type": "verify_mcp_tool_schema", "url": "ftp://x"}, "url", "not an http(s) URL"),
        ({"type": "verify_env_core_protocol", "env": "world", "token": "t"}, "token", "only sent to a `url`"),
        ({"type": "verify_env_core_protocol", "env": "world", "reset": "never"}, "reset", ""),
        ({"type": "verify_spec_conformance", "env": "world", "spec": "a.json", "envs": ["slack"]}, "spec", "not both"),
        ({"type": "verify_universe_load_export_roundtrip", "env": "world", "artefacts": []}, "artefacts", ""),
    ],
)
def test_preflight(run: Any, step: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(TaskError) as err:
        run([world_step(envs=["slack"]), {"id": "check", **step}])
    text = str(err.value)
    assert "'check'" in text and field in text and message in text, text


def test_with_the_real_deploy_env_step(tmp_path: Path) -> None:
    """The validators read what agentenv-steps' deploy_env deploys (skipped when it is not installed)."""
    pytest.importorskip("agentenv_steps")
    from agentenv_testing.tasks import run_task

    deploy = {"id": "world", "type": "deploy_env", "envs": "helpdesk,email,slack", "artifacts": ["acme"]}
    record = run_task({"name": "validate", "steps": [deploy, *checks({"env": "world"})]}, tmp_path)
    assert record["status"] == "succeeded" and record["score"] == 1.0, record
    names = {r["criterion"] for r in record["steps"][1]["output"]["rows"]}
    assert "tool get_time" in names  # deploy_env arms the clock, so the world adds its own tool


def test_plugin_entry_module_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, agentenv_validators.plugin as p; p.agentenv_register_cli_commands(); "
        "print(sorted(m for m in ('mcp', 'httpx2', 'agentenv_gateway', 'jsonschema', 'typer') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
