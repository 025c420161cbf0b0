"""Task import: a Harbor-format task written for these tests and a SWE-bench instance built from one of our
repositories become bundles whose oracle scores 1.0 and whose no-op agent scores 0.0 (process sandbox)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv_steps.deploy import clear_templates
from agentenv_testing.tasks import TaskRuns
from agentenv_workspace import layers, sandbox
from agentenv_workspace.importers import ImportError_, import_harbor, import_swe

HERE = Path(__file__).parent
CODING = HERE.parents[2] / "bundles" / "coding" / "src" / "agentenv_coding" / "bundles" / "coding"
needs_bwrap = pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap (bwrap) is not installed")


@pytest.fixture(autouse=True, scope="module")
def _own_root(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("imports") / "workspaces"
    clear_templates()  # deployed world templates hold layers of the store they were built in
    with layers.private_root(root):
        yield
    clear_templates()


def run_bundle(runs: TaskRuns, out: Path, task: str, agent: str | None = None) -> dict[str, Any]:
    overrides = {"agent": agent} if agent else None
    record = runs(out / "tasks" / f"{task}.toml", bundle_dir=out, overrides=overrides)
    assert record["status"] == "succeeded", record["steps"]
    return record


@needs_bwrap
def test_harbor_task_imports_with_its_oracle_and_every_unmapped_field_listed(
    agentenv_runs: TaskRuns, tmp_path: Path
) -> None:
    out = tmp_path / "bundle"
    imported = import_harbor(HERE / "harbor" / "fix-greeting", out)
    assert imported.tasks == ["fix-greeting"]
    listed = "\n".join(imported.unmapped)
    for field in ("[environment] cpus = 1", "[metadata] difficulty", "FROM python:3.11-slim", "RUN mkdir"):
        assert field in listed, field
    assert "cpus = 1" in (out / "IMPORT.md").read_text()
    task = (out / "tasks" / "fix-greeting.toml").read_text()
    assert 'mount_point = "/app"' in task and "memory_mb = 2048" in task and "network = false" in task
    assert run_bundle(agentenv_runs, out, "fix-greeting")["score"] == 1.0
    assert run_bundle(agentenv_runs, out, "fix-greeting", "noop")["score"] == 0.0


def test_task_import_harbor_and_swe_are_the_same_importers_as_workspace_import(
    agentenv_cli: Callable[..., Any], tmp_path: Path
) -> None:
    """`agentenv task import harbor|swe` (the spelling the runtime's `task import` offers plugins) writes the bundle
    `agentenv workspace import` writes; a bare reference task file still converts without a format name."""
    done = agentenv_cli("task", "import", "harbor", str(HERE / "harbor" / "fix-greeting"), "--out", str(tmp_path / "a"))
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and (tmp_path / "a" / "tasks" / "fix-greeting.toml").is_file()
    again = agentenv_cli(
        "workspace", "import", "harbor", str(HERE / "harbor" / "fix-greeting"), "--out", str(tmp_path / "b")
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "a" / "tasks" / "fix-greeting.toml").read_text() == (
        tmp_path / "b" / "tasks" / "fix-greeting.toml"
    ).read_text()
    listed = agentenv_cli("task", "import", "--help")
    assert all(name in listed.stdout for name in ("harbor", "swe", "reference"))
    missing = agentenv_cli("task", "import", "swe", str(tmp_path / "none.jsonl"), "--repo", str(tmp_path), "--out",
                           str(tmp_path / "c"))  # fmt: skip
    assert missing.returncode == 2 and "none.jsonl" in missing.stderr
    reference = tmp_path / "ref.json"
    reference.write_text(json.dumps([{"id": "desk", "type": "deploy_env", "env_id": "helpdesk"}]))
    bare = agentenv_cli("task", "import", str(reference), "--out", str(tmp_path / "ref.toml"))
    assert (tmp_path / "ref.toml").is_file(), bare.stderr


def test_harbor_folder_without_tests_is_refused_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "task"
    shutil.copytree(HERE / "harbor" / "fix-greeting", broken)
    (broken / "tests" / "test.sh").unlink()
    with pytest.raises(ImportError_, match=r"tests/test.sh: missing"):
        import_harbor(broken, tmp_path / "out")


def swe_instance(tmp_path: Path) -> tuple[Path, Path]:
    """Our calc repository as a git repository, and a SWE-bench instance of its add() bug."""
    repo = tmp_path / "calc"
    shutil.copytree(CODING / "artifacts" / "repos" / "calc", repo)
    shutil.copy(CODING / "hidden" / "runner" / "junit_runner.py", repo)
    (repo / "tests" / "test_calc.py").write_text(
        "import unittest\n\nfrom calc import sub\n\n\nclass TestCalc(unittest.TestCase):\n"
        "    def test_sub(self):\n        self.assertEqual(sub(5, 3), 2)\n"
    )
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "calc"], check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    instance = {
        "instance_id": "agentenv__calc-1",
        "repo": "agentenv/calc",
        "base_commit": base,
        "problem_statement": "calc.add(2, 3) returns -1; it must add.",
        "patch": (
            "--- a/calc.py\n+++ b/calc.py\n@@ -4,2 +4,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
        ),
        "test_patch": (
            "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -1,8 +1,11 @@\n import unittest\n \n"
            "-from calc import sub\n+from calc import add, sub\n \n \n class TestCalc(unittest.TestCase):\n"
            "+    def test_add(self):\n+        self.assertEqual(add(2, 3), 5)\n+\n"
            "     def test_sub(self):\n         self.assertEqual(sub(5, 3), 2)\n"
        ),
        "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::TestCalc::test_add"]),
        "PASS_TO_PASS": json.dumps(["tests/test_calc.py::TestCalc::test_sub"]),
        "version": "0.1",
    }
    jsonl = tmp_path / "calc.jsonl"
    jsonl.write_text(json.dumps(instance) + "\n")
    return jsonl, repo


@needs_bwrap
def test_swe_instance_from_our_repo_grades_the_gold_patch_one_and_noop_zero(
    agentenv_runs: TaskRuns, tmp_path: Path
) -> None:
    jsonl, repo = swe_instance(tmp_path)
    out = tmp_path / "bundle"
    imported = import_swe(jsonl, repo, out, test_command="python3 junit_runner.py tests report.xml")
    assert imported.tasks == ["agentenv__calc-1"]
    assert any("version = '0.1'" in line for line in imported.unmapped)
    assert any("not cloned" in line for line in imported.unmapped)
    gold = run_bundle(agentenv_runs, out, "agentenv__calc-1")
    assert gold["score"] == 1.0, [s.get("output") for s in gold["steps"]]
    noop = run_bundle(agentenv_runs, out, "agentenv__calc-1", "noop")
    assert noop["score"] == 0.0
    grade = next(s for s in noop["steps"] if s["id"] == "grade")["output"]
    assert grade["partial_credit"] == 0.5  # test_sub still passes: partial credit beside the 0


def test_harbor_task_in_docker_oracle_one_noop_zero(
    docker_engine: None, agentenv_runs: TaskRuns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentenv_docker.api import ensure_base_image

    ensure_base_image(log=lambda message: None)
    monkeypatch.setenv("AGENTENV_WORKSPACE_SANDBOX", "docker")
    clear_templates()
    out = tmp_path / "bundle"
    import_harbor(HERE / "harbor" / "fix-greeting", out)
    assert run_bundle(agentenv_runs, out, "fix-greeting")["score"] == 1.0
    assert run_bundle(agentenv_runs, out, "fix-greeting", "noop")["score"] == 0.0
    clear_templates()
