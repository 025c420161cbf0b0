"""`tests_verifier` on real commands in real workspaces: exit status, JUnit XML, reward files, SWE lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime import Artifact
from agentenv_workspace import layers
from agentenv_workspace.env import WorkspaceEnv
from agentenv_workspace.verifier import CodeTestsSettings, grade, names_case, read_junit

REPORT = """<testsuite>
  <testcase classname="tests.test_calc.TestCalc" name="test_add"/>
  <testcase classname="tests.test_calc.TestCalc" name="test_sub"><failure message="boom"/></testcase>
  <testcase classname="tests.test_calc.TestCalc" name="test_skip"><skipped/></testcase>
</testsuite>
"""


@pytest.fixture(autouse=True)
def _own_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(layers.ROOT_VARIABLE, str(tmp_path / "root"))
    yield
    layers.store().close()


def workspace(tmp_path: Path, files: dict[str, str]) -> WorkspaceEnv:
    spec = tmp_path / "ws.json"
    spec.write_text(json.dumps({"name": "ws", "env": "workspace", "version": "1", "data": {"files": files}}))
    env = WorkspaceEnv()
    env.load(Artifact.from_file(spec))
    return env


def settings(**fields: Any) -> CodeTestsSettings:
    return CodeTestsSettings.model_validate({"env": "repo", **fields})


def test_exit_status_scores_and_grading_leaves_the_agent_tree_alone(tmp_path: Path) -> None:
    env = workspace(tmp_path, {"ok.sh": "exit 0\n"})
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "check.sh").write_text("test -f ok.sh\n")
    passed = grade(env.fork(), settings(command="sh check.sh"), [hidden])
    assert passed["score"] == 1.0 and passed["passed"]
    assert not (env.root / "check.sh").exists()  # the hidden file went into the grading fork only
    failed = grade(env.fork(), settings(command="exit 3"), [])
    assert failed["score"] == 0.0 and failed["exit_code"] == 3


def test_reward_file_under_logs_is_the_score(tmp_path: Path) -> None:
    env = workspace(tmp_path, {"a": ""})
    none = grade(env.fork(), settings(command="true", results="reward"), [])
    assert none["score"] == 0.0 and "no reward file" in none["rows"][0]["detail"]
    harbor = "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt"
    if not env.isolated():  # /logs exists only inside the sandbox's namespaces
        harbor = harbor.replace("/logs", "$PWD/logs")
    full = grade(env.fork(), settings(command=harbor, results="reward"), [])
    assert full["score"] == 1.0 or not env.isolated()
    wrote = grade(env.fork(), settings(command="echo 0.5 > reward.txt", results="reward", reward="reward.txt"), [])
    assert wrote["score"] == 0.5 and not wrote["passed"]
    garbage = grade(env.fork(), settings(command="echo yes > reward.txt", results="reward", reward="reward.txt"), [])
    assert garbage["score"] == 0.0 and "not a number" in garbage["rows"][0]["detail"]


def test_junit_all_must_pass_with_partial_credit_beside(tmp_path: Path) -> None:
    env = workspace(tmp_path, {"report.xml": REPORT})
    result = grade(env.fork(), settings(command="true", results="junit"), [])
    assert result["score"] == 0.0 and result["partial_credit"] == pytest.approx(1 / 3)
    assert read_junit(env.root / "report.xml") == {
        "tests.test_calc.TestCalc.test_add": True,
        "tests.test_calc.TestCalc.test_sub": False,
        "tests.test_calc.TestCalc.test_skip": False,
    }
    missing = grade(env.fork(), settings(command="rm report.xml", results="junit"), [])
    assert missing["score"] == 0.0


def test_swe_lists_score_one_only_when_every_listed_test_is_right(tmp_path: Path) -> None:
    env = workspace(tmp_path, {"report.xml": REPORT})
    resolved = settings(command="true", results="junit", fail_to_pass=["tests/test_calc.py::TestCalc::test_add"])
    assert grade(env.fork(), resolved, [])["score"] == 1.0
    broken = settings(
        command="true",
        results="junit",
        fail_to_pass=["tests/test_calc.py::TestCalc::test_add"],
        pass_to_pass=["TestCalc.test_sub", "test_gone"],
    )
    result = grade(env.fork(), broken, [])
    assert result["score"] == 0.0 and result["partial_credit"] == pytest.approx(1 / 3)
    assert result["tests"]["pass_to_pass: test_gone"] == "not run"


def test_ids_match_in_every_spelling() -> None:
    key = "tests.test_calc.TestCalc.test_add"
    for listed in ("tests/test_calc.py::TestCalc::test_add", "TestCalc.test_add", "test_add", key):
        assert names_case(listed, key), listed
    assert not names_case("test_ad", key)


def test_swe_lists_without_junit_are_refused_in_preflight() -> None:
    from agentenv_workspace.verifier import CodeTestsVerifier

    problems = CodeTestsVerifier().preflight(settings(command="x", fail_to_pass=["t"]), ["repo"])
    assert problems and problems[0][0] == "results"
