"""verify_sandbox inside real tasks.

Most tests use `FolderSandbox` (tests/conftest.py): a real sandbox for test purposes — a temporary
folder where commands really run with subprocess — made by a test-only step, so these tests need no
sandbox plugin. When agentenv-sandbox-local is installed, one more test runs the same probes in the
`inline` provider's sandbox made by the real `deploy_sandbox` step.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentenv import PluginHost
from agentenv.contracts import kinds
from agentenv_runtime import TaskError

FILES = {"out/report.md": "# Report\nRefund: 89.99 USD\n", "src/app.py": "print('hi')\n"}
PASSING = [
    {"file_exists": "out/report.md"},
    {"dir_exists": "src"},
    {"file_matches": "out/report.md", "regex": r"^Refund: 89\.99", "name": "report has refund", "weight": 2},
    {"command": ["python3", "src/app.py"]},
    {"command": "test $(ls out | wc -l) -eq 1", "name": "one output file"},
    {"command": "exit 3", "expect_exit": 3},
]


def box(files: dict[str, str] = FILES) -> dict[str, Any]:
    return {"id": "box", "type": "test_sandbox", "key": "box", "files": files}


def probe(*checks: dict[str, Any]) -> dict[str, Any]:
    return {"id": "grade", "type": "verify_sandbox", "sandbox": "box", "checks": list(checks)}


def test_all_probes_pass(run: Any) -> None:
    record = run([box(), probe(*PASSING)])
    out = record["by_id"]["grade"]["output"]
    assert record["status"] == "succeeded", record["by_id"]["grade"]
    assert out["score"] == 1.0 and out["passed"] is True
    assert [r["criterion"] for r in out["rows"]] == [
        "file out/report.md exists",
        "dir src exists",
        "report has refund",
        "command 'python3 src/app.py' exits 0",
        "one output file",
        "command 'exit 3' exits 3",
    ]
    assert record["score"] == 1.0


def test_failing_probes(run: Any) -> None:
    checks = [
        {"file_exists": "src"},  # a folder, not a file
        {"dir_exists": "out/report.md"},  # a file, not a folder
        {"file_exists": "missing.txt"},
        {"file_matches": "out/report.md", "regex": "129\\.99"},
        {"file_matches": "missing.txt", "regex": "x"},
        {"command": "echo broken >&2; exit 2", "name": "tests pass"},
        {"command": "sleep 5", "timeout": 0.2, "name": "hangs"},
        {"file_exists": "out/report.md", "weight": 3},
    ]
    out = run([box(), probe(*checks)])["by_id"]["grade"]["output"]
    assert [r["passed"] for r in out["rows"]] == [False] * 7 + [True]
    assert out["score"] == pytest.approx(3 / 10) and out["passed"] is False
    rows = {r["criterion"]: r["detail"] for r in out["rows"]}
    assert rows["tests pass"] == "exit 2 (expected 0): broken"
    assert "timed out" in rows["hangs"]
    assert "cannot read missing.txt" in rows["missing.txt matches 'x'"]


def test_resource_that_is_not_a_sandbox_fails(run: Any) -> None:
    record = run([{"id": "box", "type": "test_world", "key": "box", "envs": ["helpdesk"]}, probe({"dir_exists": "."})])
    step = record["by_id"]["grade"]
    assert step["status"] == "failed" and "not a sandbox" in step["error"]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"sandbox": "nope", "checks": [{"dir_exists": "."}]}, "sandbox", "no step 'nope'"),
        ({"sandbox": "box", "checks": []}, "checks", "empty"),
        ({"sandbox": "box", "checks": [{"file_matches": "a"}]}, "checks.0", "go together"),
        ({"sandbox": "box", "checks": [{"file_exists": "a", "regex": "x"}]}, "checks.0", "go together"),
        ({"sandbox": "box", "checks": [{"file_exists": "a", "dir_exists": "b"}]}, "checks.0", "exactly one of"),
        ({"sandbox": "box", "checks": [{"command": []}]}, "checks.0", "empty argv"),
        ({"sandbox": "box", "checks": [{"file_exists": "a", "expect_exit": 1}]}, "checks.0", "belongs with `command`"),
        ({"sandbox": "box", "checks": [{"file_matches": "a", "regex": "("}]}, "checks.0", "regular expression"),
        ({"sandbox": "box", "checks": [{"dir_exists": "a"}, {"dir_exists": "a"}]}, "checks", "repeat"),
    ],
)
def test_preflight(run: Any, fields: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(TaskError) as err:
        run([box(), {"id": "grade", "type": "verify_sandbox", **fields}])
    text = str(err.value)
    assert "step 'grade' (verify_sandbox)" in text and f"field `{field}`" in text and message in text


def test_inline_provider_with_real_deploy_sandbox(run: Any, host: PluginHost) -> None:
    if "deploy_sandbox" not in host.registry(kinds.STEPS) or "inline" not in host.registry(kinds.SANDBOX_PROVIDERS):
        pytest.skip("needs agentenv-steps (deploy_sandbox) and agentenv-sandbox-local (inline)")
    record = run(
        [
            {"id": "box", "type": "deploy_sandbox", "provider": "inline"},
            {"id": "work", "type": "test_put_files", "sandbox": "box", "files": FILES},
            probe(*PASSING[:5], {"file_exists": "nothing-here.txt"}),
        ]
    )
    out = record["by_id"]["grade"]["output"]
    assert record["by_id"]["grade"]["status"] == "succeeded", record["by_id"]
    assert [r["passed"] for r in out["rows"]] == [True] * 5 + [False]
    assert out["score"] == pytest.approx(6 / 7)  # weights 1, 1, 2, 1, 1 pass; 1 fails
