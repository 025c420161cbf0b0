"""Every API route of the real `agentenv up`, over loopback HTTP, against runs the real runtime recorded."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import agentenv_explorer
import httpx
import pytest
from agentenv_testing.services import LoopbackService

if TYPE_CHECKING:
    from conftest import Project


def get(explorer: LoopbackService, path: str, **params: Any) -> httpx.Response:
    return httpx.get(explorer.url + path, params=params, timeout=60)


def test_runs_list_filters_and_pages(explorer: LoopbackService, project: Project) -> None:
    everything = get(explorer, "/api/runs").json()
    ids = [r["id"] for r in everything["runs"]]
    assert set(project.runs.values()) <= set(ids)
    refunds = get(explorer, "/api/runs", task="resolve-refund").json()["runs"]
    assert {r["id"] for r in refunds} == {project.runs["refund_pass"], project.runs["refund_fail"]}
    failing = get(explorer, "/api/runs", task="resolve-refund", passed="false").json()["runs"]
    assert [r["id"] for r in failing] == [project.runs["refund_fail"]]
    assert failing[0]["agent"] == "wrong_solver" and failing[0]["score"] == 0.25
    by_agent = get(explorer, "/api/runs", agent="wrong_solver").json()["runs"]
    assert [r["id"] for r in by_agent] == [project.runs["refund_fail"]]
    own_agent = {r["id"] for r in get(explorer, "/api/runs", agent="task default").json()["runs"]}
    assert project.runs["refund_pass"] in own_agent and project.runs["refund_fail"] not in own_agent
    first = get(explorer, "/api/runs", limit=1).json()
    second = get(explorer, "/api/runs", limit=1, offset=first["next_offset"]).json()
    assert first["runs"][0]["id"] == ids[0] and second["runs"][0]["id"] == ids[1]


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"limit": "many"}, "limit='many' is not a whole number"),
        ({"limit": "0"}, "out of range"),
        ({"offset": "-1"}, "out of range"),
        ({"status": "exploded"}, "not a run status"),
        ({"passed": "maybe"}, "not a boolean"),
        ({"seed": "x"}, "not a whole number"),
        ({"colour": "red"}, "unknown query parameter 'colour'"),
    ],
)
def test_bad_run_filters_are_400(explorer: LoopbackService, params: dict[str, str], says: str) -> None:
    answer = get(explorer, "/api/runs", **params)
    assert answer.status_code == 400
    assert says in answer.json()["error"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/runs/r-nope",
        "/api/runs/r-nope/steps",
        "/api/runs/r-nope/trajectory",
        "/api/runs/r-nope/artifacts",
        "/api/runs/r-nope/verifier",
        "/api/runs/r-nope/world",
        "/api/runs/r-nope/events",
    ],
)
def test_unknown_run_is_404_with_a_message(explorer: LoopbackService, path: str) -> None:
    answer = get(explorer, path)
    assert answer.status_code == 404
    assert answer.json() == {"error": "no run 'r-nope'; list the stored runs at GET /api/runs", "status": 404}


def test_one_run_steps_and_verifier(explorer: LoopbackService, project: Project) -> None:
    run = project.runs["refund_fail"]
    record = get(explorer, f"/api/runs/{run[:20]}").json()  # a unique prefix is enough
    assert record["id"] == run and record["summary"]["passed"] is False
    steps = get(explorer, f"/api/runs/{run}/steps").json()["steps"]
    assert [s["id"] for s in steps] == ["desk", "data", "agent", "ticket", "grade"]
    assert all(s["status"] == "succeeded" and s["duration_ms"] is not None for s in steps)
    assert {s["id"]: s["depends_on"] for s in steps}["grade"] == [
        "desk",
        "data",
        "agent",
        "ticket",
    ]  # no depends_on: all before
    verifier = get(explorer, f"/api/runs/{run}/verifier").json()
    rows = {r["criterion"]: r for r in verifier["verifiers"]["grade"]["rows"]}
    assert verifier["score"] == 0.25 and rows["refund_amount"]["detail"] == "got 12999, expected 8999"


def test_trajectory_pages_and_server_side_filters(explorer: LoopbackService, project: Project) -> None:
    run = project.runs["refund_pass"]
    whole = get(explorer, f"/api/runs/{run}/trajectory").json()
    assert whole["total"] == len(whole["events"]) and whole["next_offset"] is None
    assert [e["seq"] for e in whole["events"]] == list(range(whole["total"]))
    page = get(explorer, f"/api/runs/{run}/trajectory", offset=1, limit=2).json()
    assert [e["seq"] for e in page["events"]] == [1, 2] and page["next_offset"] == 3
    refunds = get(explorer, f"/api/runs/{run}/trajectory", tool="issue_refund").json()["events"]
    assert len(refunds) == 1 and refunds[0]["args"]["amount"] == 89.99 and refunds[0]["role"] == "billing_lead"
    assert get(explorer, f"/api/runs/{run}/trajectory", world="elsewhere").status_code == 404
    assert get(explorer, f"/api/runs/{run}/trajectory", limit="9999").status_code == 400


def test_artifacts_and_one_object(explorer: LoopbackService, project: Project) -> None:
    run = project.runs["hello"]
    listing = get(explorer, f"/api/runs/{run}/artifacts").json()
    assert listing["objects"] == [f"runs/{run}/world.final.snapshot.zlib", f"runs/{run}/world.trajectory.jsonl"]
    raw = get(explorer, f"/api/runs/{run}/artifacts/world.trajectory.jsonl")
    assert raw.status_code == 200 and json.loads(raw.content.splitlines()[0])["seq"] == 0
    missing = get(explorer, f"/api/runs/{run}/artifacts/nothing.bin")
    assert missing.status_code == 404 and "stored no object 'nothing.bin'" in missing.json()["error"]


def test_world_page(explorer: LoopbackService, project: Project) -> None:
    world = get(explorer, f"/api/runs/{project.runs['refund_fail']}/world").json()
    assert world["envs"] == ["helpdesk", "email", "slack"]
    assert "issue_refund" in world["roles"]["billing_lead"] and "issue_refund" not in world["roles"]["support"]
    assert world["card"]["name"] == "helpdesk+email+slack"
    # a succeeded run keeps its world's final state (compressed): the tables are those the agent left
    assert world["tables_note"] is None
    refunds = world["tables"]["helpdesk.refunds"]
    assert refunds["rows"][-1][:4] == ["REF-3001", "ORD-5001", "PAY-7001", 12999], refunds  # its wrong amount


def test_compare_a_passing_and_a_failing_run(explorer: LoopbackService, project: Project) -> None:
    answer = get(explorer, "/api/compare", a=project.runs["refund_pass"], b=project.runs["refund_fail"]).json()
    first = answer["trajectory"]["first_difference"]
    assert answer["trajectory"]["identical"] is False
    assert first["a"]["tool"] == "issue_refund" and first["b"]["tool"] == "issue_refund"
    assert (first["a"]["args"]["amount"], first["b"]["args"]["amount"]) == (89.99, 129.99)
    differs = {c["criterion"] for c in answer["criteria"] if c["differs"]}
    assert differs == {"grade.refund_amount", "grade.customer_told"}
    # both succeeded, so both kept their final state: the refund row of each differs (89.99 vs 129.99)
    assert answer["tables"]["helpdesk.refunds"] == {"only_a": 1, "only_b": 1}, answer["tables"]
    same = get(explorer, "/api/compare", a=project.runs["refund_pass"], b=project.runs["refund_pass"]).json()
    assert same["trajectory"]["identical"] is True
    assert get(explorer, "/api/compare", a=project.runs["hello"]).status_code == 400
    assert get(explorer, "/api/compare", a="r-nope", b=project.runs["hello"]).status_code == 404


def test_bundles_tasks_schema_envs_plugins_registry(explorer: LoopbackService) -> None:
    bundles = {b["name"]: b for b in get(explorer, "/api/bundles").json()["bundles"]}
    assert bundles["hello"]["status"] == "ready" and bundles["support-refund"]["tasks"][0]["graded"] is True
    assert "wrong_solver" in bundles["support-refund"]["agents"]
    task = get(explorer, "/api/bundles/support-refund/tasks/resolve-refund").json()
    assert [s["id"] for s in task["steps"]][-1] == "grade"
    assert get(explorer, "/api/bundles/support-refund/tasks/nothing").status_code == 404
    assert get(explorer, "/api/bundles/nothing/tasks/x").status_code == 404
    schema = get(explorer, "/api/tasks/schema").json()
    assert "steps" in schema["properties"]
    envs = {e["name"]: e for e in get(explorer, "/api/envs").json()["envs"]}
    assert "issue_refund" in envs["helpdesk"]["tools"]
    card = get(explorer, "/api/envs/helpdesk,email/card").json()
    assert card["card"]["name"] == "helpdesk+email" and any(t["name"] == "issue_refund" for t in card["tools"])
    assert get(explorer, "/api/envs/nosuchenv/card").status_code == 404
    plugins = get(explorer, "/api/plugins").json()
    assert plugins["ok"] is True and "agentenv-explorer" in {p["distribution"] for p in plugins["plugins"]}
    assert get(explorer, "/api/registry").json() == {"entries": []}
    panels = get(explorer, "/api/panels").json()["panels"]
    assert [(p["name"], p["place"]) for p in panels] == [("run-notes", "run"), ("overview", "page")]
    assert panels[0] == {
        "name": "run-notes",
        "title": "Run notes",
        "place": "run",
        "script": "/api/panels/run-notes/script",
    }
    assert "export function render" in get(explorer, "/api/panels/run-notes/script").text
    assert get(explorer, "/api/panels/nothing/script").status_code == 404


def test_openapi_lists_every_route(explorer: LoopbackService) -> None:
    document = get(explorer, "/api/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert {"get", "post"} <= set(document["paths"]["/api/runs"])
    assert "/api/runs/{run_id}/events" in document["paths"]
    assert get(explorer, "/api/no/such/route").status_code == 404


def test_ui_files_are_served(explorer: LoopbackService) -> None:
    page = get(explorer, "/")
    assert page.status_code == 200 and '<script type="module"' in page.text
    modules = sorted(p.name for p in (Path(agentenv_explorer.__file__).parent / "static").glob("*.js"))
    preloaded = sorted(re.findall(r'<link rel="modulepreload" href="/static/([^"]+)">', page.text))
    assert preloaded == modules, "index.html preloads every module (a missing one is fetched late, import by import)"
    assert get(explorer, "/static/app.js").headers["content-type"].startswith("text/javascript")
    assert get(explorer, "/static/..%2Fapp.py").status_code == 404


def test_a_plugin_panel_gets_its_data(explorer: LoopbackService, project: Project) -> None:
    answer = get(explorer, f"/api/panels/run-notes/data/{project.runs['refund_pass']}").json()
    assert answer == {"task": "resolve-refund", "steps": 5}
    assert get(explorer, "/api/panels/run-notes/data/r-nope").status_code == 404
