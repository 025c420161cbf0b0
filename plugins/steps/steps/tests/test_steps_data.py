"""load_artifact, snapshot_env and reset_env inside real tasks."""

from __future__ import annotations

import hashlib
import json

import pytest
from agentenv_runtime import Artifact, TaskError
from steps_taskkit import calls, clock, deploy, prompt, scripted, task

POST = {"call": "post_message", "args": {"channel": "#general", "text": "saved state"}, "expect": "ok"}


def snapshot(step_id="snap", name="saved", env="world"):
    return {"id": step_id, "type": "snapshot_env", "env": env, "name": name}


def exported(runs, name, env="slack"):
    return json.loads(runs.object(f"artifacts/{name}/{env}.json"))["data"]


def test_snapshot_saves_each_env_and_the_world(runs, step):
    record = runs(
        task(deploy(envs="slack,helpdesk"), clock(), scripted("a", "world", [POST]), prompt("p", "a"), snapshot())
    )
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "snap")["output"]
    assert set(output["artifacts"]) == {"slack", "helpdesk"}
    for env, saved in output["artifacts"].items():
        raw = runs.object(saved["key"])
        assert saved["key"] == f"artifacts/saved/{env}.json"
        assert hashlib.sha256(raw).hexdigest() == saved["sha256"]
        artifact = Artifact.from_bytes(raw)
        assert (artifact.name, artifact.env, artifact.version) == ("saved", env, record["id"])
        assert saved["ref"] == artifact.ref
    assert output["world"]["key"] == "artifacts/saved/world.snapshot"
    assert hashlib.sha256(runs.object(output["world"]["key"])).hexdigest() == output["world"]["sha256"]
    assert "saved state" in [m["text"] for m in exported(runs, "saved")["messages"]]


def test_a_later_task_loads_the_snapshot_and_gets_the_same_export(runs, step):
    first = runs(task(deploy(), clock(), scripted("a", "world", [POST]), prompt("p", "a"), snapshot()))
    assert first["status"] == "succeeded"
    second = runs(
        task(
            deploy(artifacts=[]),
            {"id": "load", "type": "load_artifact", "env": "world", "artifacts": ["store:artifacts/saved/slack.json"]},
            snapshot("again", name="reloaded"),
        )
    )
    assert second["status"] == "succeeded", second["steps"]
    ref = step(first, "snap")["output"]["artifacts"]["slack"]["ref"]
    assert step(second, "load")["output"] == {"artifacts": [ref]}
    assert exported(runs, "reloaded") == exported(runs, "saved")


def test_deploy_env_takes_a_stored_artifact_too(runs, step):
    runs(task(deploy(), clock(), scripted("a", "world", [POST]), prompt("p", "a"), snapshot()))
    record = runs(task(deploy(artifacts=["slack=store:artifacts/saved/slack.json"]), snapshot("again", "redeployed")))
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "world")["output"]["artifacts"][0].startswith("slack/saved@")
    assert exported(runs, "redeployed") == exported(runs, "saved")


def test_load_artifact_by_name_into_a_bare_world(runs, step):
    record = runs(
        task(
            deploy(envs="slack,email", artifacts=[]),
            {"id": "load", "type": "load_artifact", "env": "world", "artifacts": "acme"},
            snapshot(),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    refs = step(record, "load")["output"]["artifacts"]
    assert sorted(r.split("@")[0] for r in refs) == ["email/acme", "slack/acme"]
    assert exported(runs, "saved", "email")  # rows arrived


def test_load_artifact_checks_pins(runs, step):
    record = runs(
        task(
            deploy(artifacts=[]),
            {"id": "load", "type": "load_artifact", "env": "world", "artifacts": ["slack=acme"]},
            pins={"artifacts": {"slack/acme": "0000"}},
        )
    )
    assert record["status"] == "failed"
    assert "the task pins 0000" in step(record, "load")["error"]


def test_a_failed_load_changes_nothing(runs, step):
    record = runs(
        task(
            deploy(envs="slack,email", artifacts=[]),
            {
                "id": "load",
                "type": "load_artifact",
                "env": "world",
                "artifacts": ["email=acme", "slack=acme", "slack=acme"],
                "fail_task_on_error": False,
            },
            snapshot(),
        )
    )
    assert "field `artifacts`" in step(record, "load")["error"]
    assert all(rows == [] for rows in exported(runs, "saved", "email").values())  # the email load was undone too


def test_a_stored_artifact_that_is_not_there_fails_the_step(runs, step):
    spec = "store:artifacts/none/slack.json"  # only the run can look in the object store
    record = runs(
        task(deploy(artifacts=[]), {"id": "load", "type": "load_artifact", "env": "world", "artifacts": [spec]})
    )
    assert "no object 'artifacts/none/slack.json'" in step(record, "load")["error"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("helpdesk=acme", "the world has no env 'helpdesk'"),
        ("slack=nowhere.json", "slack ships no artifact 'nowhere.json'"),
    ],
)
def test_load_artifact_mistakes_are_refused_before_the_run(runs, spec, message):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(artifacts=[]), {"id": "load", "type": "load_artifact", "env": "world", "artifacts": [spec]}))
    assert "step 'load' (load_artifact): field `artifacts[0]`: " in str(caught.value)
    assert message in str(caught.value)


def test_reset_returns_to_the_loaded_state(runs, step):
    record = runs(
        task(
            deploy(),
            snapshot("before", "before"),
            clock(),
            scripted("a", "world", [POST]),
            prompt("p", "a"),
            {"id": "reset", "type": "reset_env", "env": "world"},
            snapshot("after", "after"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "reset")["output"] == {"restored": "initial"}
    assert exported(runs, "after") == exported(runs, "before")


def test_reset_to_a_snapshot(runs, step):
    second_post = {"call": "post_message", "args": {"channel": "#general", "text": "after the snapshot"}}
    record = runs(
        task(
            deploy(),
            clock(),
            scripted("a", "world", [POST], [second_post]),
            prompt("p1", "a"),
            snapshot("mid", "mid"),
            prompt("p2", "a"),
            {"id": "reset", "type": "reset_env", "env": "world", "snapshot": "mid"},
            snapshot("end", "end"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    texts = [m["text"] for m in exported(runs, "end")["messages"]]
    assert "saved state" in texts and "after the snapshot" not in texts
    assert exported(runs, "end") == exported(runs, "mid")
    assert len(calls(runs.trajectory(record), "post_message")) == 2  # the trajectory is kept


def test_reset_to_a_snapshot_of_another_world_fails(runs, step):
    record = runs(
        task(
            deploy("small", artifacts=[]),
            deploy(envs="slack,email"),
            snapshot(env="small"),
            {"id": "reset", "type": "reset_env", "env": "world", "snapshot": "snap"},
        )
    )
    assert "field `snapshot`" in step(record, "reset")["error"]


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"id": "s", "type": "snapshot_env", "env": "world", "name": "a/b"}, "field `name`"),
        ({"id": "s", "type": "snapshot_env", "env": "nope", "name": "x"}, "field `env`"),
        ({"id": "s", "type": "reset_env", "env": "world", "snapshot": "nope"}, "field `snapshot`"),
        ({"id": "s", "type": "load_artifact", "env": "world", "artifacts": ["store:"]}, "field `artifacts[0]`"),
        ({"id": "s", "type": "load_artifact", "env": "world", "artifacts": []}, "field `artifacts`"),
    ],
)
def test_data_preflight_names_step_and_field(runs, bad, where):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(), bad))
    assert f"step 's' ({bad['type']})" in str(caught.value)
    assert where in str(caught.value)


# ---- rewind_env --------------------------------------------------------------------------------------
def post(text):
    return {"call": "post_message", "args": {"channel": "#general", "text": text}, "expect": "ok"}


def test_rewind_env_goes_back_to_a_tool_call_of_the_trajectory(runs, step):
    agent = scripted("a", "world", [post("one"), post("two"), post("three")], [post("after the rewind")])
    first = runs(task(deploy(rewindable=True), clock(), agent, prompt("p", "a")))
    position = next(e["seq"] for e in runs.trajectory(first) if e.get("args", {}).get("text") == "two")
    record = runs(
        task(
            deploy(rewindable=True),
            clock(),
            agent,
            prompt("p", "a"),
            {"id": "back", "type": "rewind_env", "env": "world", "to_event": position},
            prompt("p2", "a"),
            snapshot("end", "end"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "back")["output"]["to_event"] == position and step(record, "back")["output"]["dropped"] == 1
    texts = [m["text"] for m in exported(runs, "end")["messages"]]
    assert "two" in texts and "three" not in texts and "after the rewind" in texts
    events = runs.trajectory(record)
    assert [e["to_event"] for e in events if e["kind"] == "rewind"] == [position]


def test_rewind_env_needs_a_rewindable_world_and_a_tool_call_position(runs, step):
    agent = scripted("a", "world", [post("one")])
    record = runs(
        task(deploy(), agent, prompt("p", "a"), {"id": "back", "type": "rewind_env", "env": "world", "to_event": 0})
    )
    assert "field `to_event`: this world keeps no rewind points" in step(record, "back")["error"]
    assert "set `rewindable = true` on deploy_env 'world'" in step(record, "back")["error"]
    record = runs(
        task(
            deploy(rewindable=True),
            agent,
            prompt("p", "a"),
            {"id": "back", "type": "rewind_env", "env": "world", "to_event": 50},
        )
    )
    assert "field `to_event`: the trajectory has no event 50" in step(record, "back")["error"]
    served = runs(task(deploy(rewindable=True, sandbox="process")))
    assert "field `rewindable`: only a world run in process keeps rewind points" in step(served, "world")["error"]
