"""load_artifact beyond worlds: files into a sandbox or an agent's sandbox, what an earlier step produced
(`step:ID`), and a snapshot of the world right after loading."""
# ruff: noqa: F811 - the fixtures imported from steps_morekit are parameters of the tests

from __future__ import annotations

import hashlib
import json

import pytest
from agentenv_runtime import TaskError
from steps_morekit import inline_config, sandbox  # noqa: F401 - pytest fixtures
from steps_taskkit import clock, deploy, prompt, scripted, task

POST = {"call": "post_message", "args": {"channel": "#general", "text": "after the load"}, "expect": "ok"}


def load(step_id: str = "load", **fields):
    return {"id": step_id, "type": "load_artifact", **fields}


def collect(source: str, paths, step_id: str = "grab"):
    return {"id": step_id, "type": "collect_artifacts", "source": source, "paths": paths}


def snapshot(step_id: str, name: str, env: str = "world"):
    return {"id": step_id, "type": "snapshot_env", "env": env, "name": name}


def messages(runs, key: str) -> list[str]:
    return [m["text"] for m in json.loads(runs.object(key))["data"]["messages"]]


def test_bundle_files_folders_and_stored_objects_go_into_a_sandbox_at_a_path(runs, step, inline_config, tmp_path):
    data = tmp_path / "tasks" / "data"
    (data / "deep").mkdir(parents=True)
    (data / "orders.csv").write_text("id,total\n1,9.99\n")
    (data / "deep" / "note.txt").write_text("deep")
    runs(task(deploy(), snapshot("snap", "stored")), config=inline_config)  # an object to load by key
    record = runs(
        task(
            sandbox(),
            load(
                sandbox="box",
                path="inbox",
                artifacts=["data/orders.csv", "file:data", "store:artifacts/stored/slack.json"],
            ),
            collect("box", ["inbox/**"]),
        ),
        config=inline_config,
    )
    assert record["status"] == "succeeded", record["steps"]
    written = {f["path"]: f for f in step(record, "load")["output"]["files"]}
    assert sorted(written) == [
        "inbox/data/deep/note.txt",
        "inbox/data/orders.csv",
        "inbox/orders.csv",
        "inbox/slack.json",
    ]
    files = step(record, "grab")["output"]["files"]
    assert runs.object(files["inbox/orders.csv"]["key"]) == b"id,total\n1,9.99\n"
    assert runs.object(files["inbox/data/deep/note.txt"]["key"]) == b"deep"
    assert runs.object(files["inbox/slack.json"]["key"]) == runs.object("artifacts/stored/slack.json")
    assert written["inbox/orders.csv"]["sha256"] == hashlib.sha256(b"id,total\n1,9.99\n").hexdigest()


def test_what_one_sandbox_produced_goes_into_an_agents_sandbox(runs, step, inline_config):
    make = {"files": {"out/report.md": "# Report\n", "out/extra.txt": "x"}}
    record = runs(
        task(
            sandbox("maker"),
            {"id": "make", "type": "install_agent", "sandbox": "maker", "install": make},
            collect("maker", ["out/*"]),
            deploy(),
            scripted("agent", "world", []),
            sandbox("home"),
            {"id": "put", "type": "install_agent", "sandbox": "home", "agent": "agent", "install": {"files": {}}},
            load(agent="agent", path="/work", artifacts=["step:grab/out/report.md"]),
            collect("agent", ["work/**"], step_id="back"),
        ),
        config=inline_config,
    )
    assert record["status"] == "succeeded", record["steps"]
    assert [f["path"] for f in step(record, "load")["output"]["files"]] == ["/work/out/report.md"]
    back = step(record, "back")["output"]["files"]
    assert list(back) == ["work/out/report.md"] and runs.object(back["work/out/report.md"]["key"]) == b"# Report\n"


def test_an_agent_in_no_sandbox_is_refused_naming_the_fix(runs, step, inline_config):
    record = runs(
        task(
            deploy(),
            snapshot("snap", "x"),
            scripted("agent", "world", []),
            load(agent="agent", artifacts=["step:snap"]),
        ),
        config=inline_config,
    )
    assert (
        "field `agent`: agent 'agent' runs in no sandbox; put it in one with install_agent"
        in step(record, "load")["error"]
    )


def test_a_world_loads_what_an_earlier_snapshot_produced(runs, step):
    record = runs(
        task(
            deploy(),
            clock(),
            scripted("a", "world", [POST]),
            prompt("p", "a"),
            snapshot("snap", "day-one"),
            deploy("fresh", artifacts=[]),
            load(env="fresh", artifacts=["step:snap"]),
            snapshot("again", "reloaded", env="fresh"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "load")["output"]["artifacts"] == [step(record, "snap")["output"]["artifacts"]["slack"]["ref"]]
    assert "after the load" in messages(runs, "artifacts/reloaded/slack.json")


def test_snapshot_after_load_is_a_point_reset_env_returns_to(runs, step):
    record = runs(
        task(
            deploy(artifacts=[]),
            load(env="world", artifacts=["acme"], snapshot_after_load=True),
            clock(),
            scripted("a", "world", [POST]),
            prompt("p", "a"),
            {"id": "back", "type": "reset_env", "env": "world", "snapshot": "load"},
            snapshot("end", "end"),
            deploy("copy", artifacts=[]),
            load("reload", env="copy", artifacts=["step:load/slack.json"]),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "load")["output"]
    assert output["snapshot"]["name"] == "load" and output["world"] == output["snapshot"]["world"]
    assert output["snapshot"]["artifacts"]["slack"]["key"] == "artifacts/load/slack.json"
    assert "after the load" not in messages(runs, "artifacts/end/slack.json")  # reset to right after the load
    assert messages(runs, "artifacts/end/slack.json") == messages(runs, "artifacts/load/slack.json")
    assert step(record, "reload")["status"] == "succeeded"


def test_an_object_overwritten_since_its_step_stored_it_is_refused(runs, step):
    record = runs(
        task(
            deploy(),
            snapshot("first", "same"),
            clock(),
            scripted("a", "world", [POST]),
            prompt("p", "a"),
            snapshot("second", "same"),  # the same name: the first snapshot's objects are overwritten
            deploy("fresh", artifacts=[]),
            load(env="fresh", artifacts=["step:first"]),
        )
    )
    assert "object 'artifacts/same/slack.json' changed since its step stored it" in step(record, "load")["error"]


def test_a_step_that_stored_nothing_or_not_an_artifact_is_named(runs, step, inline_config):
    record = runs(task(deploy(), clock(), load(env="world", artifacts=["step:clock_world"])), config=inline_config)
    assert "step 'clock_world' stored no artifact or file in the object store" in step(record, "load")["error"]
    make = {"files": {"notes.txt": "plain text"}}
    record = runs(
        task(
            sandbox(),
            {"id": "make", "type": "install_agent", "sandbox": "box", "install": make},
            collect("box", "notes.txt"),
            deploy(artifacts=[]),
            load(env="world", artifacts=["step:grab/nope.txt"]),
        ),
        config=inline_config,
    )
    assert "step 'grab' produced no 'nope.txt' (it produced: notes.txt)" in step(record, "load")["error"]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"artifacts": ["acme"]}, "env", "give exactly one target"),
        ({"env": "world", "sandbox": "box", "artifacts": ["acme"]}, "env", "give exactly one target"),
        ({"sandbox": "box", "artifacts": ["slack=acme"]}, "artifacts[0]", "a sandbox takes files"),
        (
            {"sandbox": "box", "artifacts": ["store:k"], "snapshot_after_load": True},
            "snapshot_after_load",
            "only a world",
        ),
        ({"env": "world", "artifacts": ["step:ghost"]}, "artifacts[0]", "no step 'ghost'"),
        ({"sandbox": "box", "path": "../up", "artifacts": ["store:k"]}, "path", "`..` is not allowed"),
        ({"env": "world", "artifacts": ["acme"], "snapshot_after_load": "a/b"}, "snapshot_after_load", "snapshot name"),
        ({"env": "world", "artifacts": ["step:"]}, "artifacts[0]", "a step id after 'step:'"),
    ],
)
def test_load_targets_preflight(runs, fields, field, message):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(), sandbox(), load(**fields)))
    text = str(caught.value)
    assert f"step 'load' (load_artifact): field `{field}`" in text and message in text, text
