"""`run_container_unit_tests_verifier` inside real tasks, in containers on the real docker engine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from agentenv import PluginHost
from agentenv.contracts import kinds
from agentenv_docker.provider import DockerProvider
from agentenv_docker.unit_tests import RunContainerUnitTestsVerifier
from agentenv_runtime import TaskError
from agentenv_testing.tasks import run_task, temporary_config

TESTS = """\
import unittest

from solution import add


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)


if __name__ == "__main__":
    unittest.main()
"""
REWARD = """\
import json
from solution import add
cases = [(1, 1, 2), (2, 3, 5), (0, 0, 1), (1, 4, 5)]
passed = sum(add(a, b) == want for a, b, want in cases)
json.dump({"reward": passed / len(cases)}, open("/tmp/reward.json", "w"))
"""


def box(**spec: Any) -> dict[str, Any]:
    labels = {"agentenv.test": f"docker-{os.getpid()}"}
    return {"id": "box", "type": "deploy_sandbox", "provider": "docker", "spec": {"labels": labels, **spec}}


def verifier(**fields: Any) -> dict[str, Any]:
    return {"id": "tests", "type": "run_container_unit_tests_verifier", "sandbox": "box", **fields}


def run(tmp_path: Path, *steps: dict[str, Any]) -> dict[str, Any]:
    return run_task({"name": "unit-tests", "steps": list(steps)}, tmp_path, config=temporary_config(tmp_path))


def step_record(record: dict[str, Any], step_id: str) -> dict[str, Any]:
    return next(s for s in record["steps"] if s["id"] == step_id)


GOOD = "def add(a, b):\n    return a + b\n"
BAD = "def add(a, b):\n    return a - b if a > 1 else a + b\n"


def test_exit_code_and_reward_file_scores(tmp_path: Path, provider: DockerProvider) -> None:
    files = {"solution.py": GOOD, "tests/test_add.py": TESTS}
    record = run(tmp_path / "a", box(), verifier(command="python3 -m unittest discover -s tests", files=files))
    tests = step_record(record, "tests")
    assert record["status"] == "succeeded", tests["error"]
    assert record["score"] == 1.0 and record["passed"] is True
    assert tests["output"]["rows"] == [
        {"criterion": "tests pass", "passed": True, "score": 1.0, "weight": 1.0, "detail": "exit code 0"}
    ]
    assert "OK" in tests["output"]["stderr"]
    assert DockerProvider({}).list({"agentenv.run": record["id"]}) == []  # torn down with the run

    files = {"solution.py": BAD, "tests/test_add.py": TESTS, "reward.py": REWARD}
    failing = verifier(command="python3 -m unittest discover -s tests", files=files)
    reward = {**verifier(command=["python3", "reward.py"], reward_file="/tmp/reward.json"), "id": "reward"}
    record = run(tmp_path / "b", box(), failing, reward)
    assert record["status"] == "succeeded"
    assert step_record(record, "tests")["output"]["score"] == 0.0
    assert step_record(record, "tests")["output"]["exit_code"] == 1
    output = step_record(record, "reward")["output"]
    assert output["score"] == 0.5 and record["score"] == 0.5  # (2, 3) fails with BAD; (0, 0, 1) never holds
    assert output["rows"][0]["detail"] == "reward 0.5 from /tmp/reward.json"


def test_missing_reward_file_and_timeout_score_zero(tmp_path: Path, provider: DockerProvider) -> None:
    none = verifier(command="true", reward_file="/tmp/nothing.json")
    slow = {**verifier(command="sleep 30", timeout=1), "id": "slow"}
    record = run(tmp_path, box(), none, slow)
    assert record["status"] == "succeeded", record["steps"]
    assert step_record(record, "tests")["output"]["rows"][0]["detail"].startswith("no reward file /tmp/nothing.json")
    slow_output = step_record(record, "slow")["output"]
    assert slow_output["timed_out"] is True and slow_output["score"] == 0.0 and record["score"] == 0.0


def test_registration_and_preflight(tmp_path: Path) -> None:
    host = PluginHost().load()
    assert host.get(kinds.STEPS, "run_container_unit_tests_verifier") is RunContainerUnitTestsVerifier
    assert RunContainerUnitTestsVerifier.verifier is True
    with pytest.raises(TaskError) as err:
        run(tmp_path, verifier(sandbox="ghost", command="true"))
    assert "step 'tests' (run_container_unit_tests_verifier): field `sandbox`: no step 'ghost'" in str(err.value)
    with pytest.raises(TaskError) as err:
        run(tmp_path, box(), verifier(command=[]))
    assert "field `command`: give the test command" in str(err.value)


def test_a_step_that_made_no_sandbox_is_refused(tmp_path: Path) -> None:
    record = run(
        tmp_path,
        {"id": "box", "type": "deploy_env", "envs": "slack", "artifacts": ["acme"]},
        verifier(command="true"),
    )
    assert record["status"] == "failed"
    assert "field `sandbox`: step 'box' made a World, not a Sandbox" in step_record(record, "tests")["error"]
