"""snapshot_agent_state and collect_artifacts inside real tasks."""
# ruff: noqa: F811 - the fixtures imported from steps_morekit are parameters of the tests

from __future__ import annotations

import hashlib
import json

import pytest
from agentenv_runtime import TaskError
from steps_morekit import inline_config, sandbox  # noqa: F401 - pytest fixtures
from steps_taskkit import deploy, prompt, scripted, task

LOOKUP = {"call": "list_channels", "args": {}, "save": "channels"}


# ---- snapshot_agent_state ---------------------------------------------------------------------------
def test_agent_state_is_saved_as_json(runs, step):
    agent = scripted("agent", "world", [LOOKUP, {"say": "found {{ channels.0.name }}"}])
    steps = (
        deploy(),
        agent,
        {"id": "skills", "type": "add_skills", "agent": "agent", "skills": [{"name": "s", "text": "Skill."}]},
        prompt("ask", "agent", "which channels?"),
        {"id": "save", "type": "snapshot_agent_state", "agent": "agent", "name": "after-ask"},
    )
    record = runs(task(*steps))
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "save")["output"]
    assert output["key"] == "agent_states/after-ask.json"
    blob = runs.object(output["key"])
    assert output["sha256"] == hashlib.sha256(blob).hexdigest()
    document = json.loads(blob)
    assert (document["agent"], document["kind"], document["role"], document["run"]) == (
        "agent",
        "scripted",
        "default",
        record["id"],
    )
    state = document["state"]
    assert set(output["fields"]) == set(state) >= {"conversation", "saved", "calls", "turn_index", "skills"}
    assert state["conversation"][0] == {"role": "user", "content": "which channels?"}
    assert state["conversation"][1]["content"] == step(record, "ask")["output"]["response"]
    assert state["saved"]["channels"][0]["name"]
    assert state["skills"] == [{"name": "s", "text": "Skill."}]


def test_snapshot_agent_state_preflight_and_wrong_step(runs, step):
    with pytest.raises(TaskError) as err:
        runs(task(deploy(), {"id": "save", "type": "snapshot_agent_state", "agent": "ghost"}))
    assert "step 'save' (snapshot_agent_state): field `agent`: no step 'ghost'" in str(err.value)
    record = runs(task(deploy(), {"id": "save", "type": "snapshot_agent_state", "agent": "world"}))
    assert "field `agent`: step 'world' did not deploy an agent (it made a World)" in step(record, "save")["error"]


# ---- collect_artifacts ------------------------------------------------------------------------------
MAKE = {
    "files": {
        "out/report.md": "# Report\n",
        "out/data/a.csv": "a\n1\n",
        "out/data/deep/b.csv": "b\n2\n",
        "notes.txt": "not a deliverable",
    }
}


def collect(**fields):
    return {"id": "grab", "type": "collect_artifacts", "source": "box", **fields}


def test_files_and_globs_are_copied_into_the_object_store(runs, step, inline_config):
    steps = (
        sandbox(),
        {"id": "make", "type": "install_agent", "sandbox": "box", "install": MAKE},
        collect(paths=["out/report.md", "out/**/*.csv"]),
    )
    record = runs(task(*steps), config=inline_config)
    assert record["status"] == "succeeded", record["steps"]
    files = step(record, "grab")["output"]["files"]
    assert sorted(files) == ["out/data/a.csv", "out/data/deep/b.csv", "out/report.md"]
    for path, entry in files.items():
        assert entry["key"] == f"runs/{record['id']}/collected/grab/{path}"
        assert runs.object(entry["key"]).decode() == MAKE["files"][path]
        assert entry["bytes"] == len(MAKE["files"][path])


def test_a_pattern_matching_nothing_fails_unless_allowed(runs, step, inline_config):
    steps = (sandbox(), {"id": "make", "type": "install_agent", "sandbox": "box", "install": MAKE})
    record = runs(task(*steps, collect(paths=["out/*.pdf", "missing.txt"])), config=inline_config)
    assert record["status"] == "failed"
    assert "nothing in the sandbox matches out/*.pdf, missing.txt" in step(record, "grab")["error"]
    record = runs(task(*steps, collect(paths=["out/*.md", "*.pdf"], allow_missing=True)), config=inline_config)
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "grab")["output"]["missing"] == ["*.pdf"]
    assert list(step(record, "grab")["output"]["files"]) == ["out/report.md"]


def test_an_agent_installed_in_a_sandbox_is_a_source(runs, step, inline_config):
    steps = (
        sandbox(),
        deploy(),
        scripted("agent", "world", []),
        {"id": "make", "type": "install_agent", "sandbox": "box", "agent": "agent", "install": MAKE},
        {**collect(paths="notes.txt"), "source": "agent"},
    )
    record = runs(task(*steps), config=inline_config)
    assert record["status"] == "succeeded", record["steps"]
    assert list(step(record, "grab")["output"]["files"]) == ["notes.txt"]


def test_collect_preflight(runs):
    with pytest.raises(TaskError) as err:
        runs(task(sandbox(), collect(paths=["../etc/passwd"])))
    assert "step 'grab' (collect_artifacts): field `paths`: Value error, '../etc/passwd': `..` is not allowed" in str(
        err.value
    )
