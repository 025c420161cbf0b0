"""`agentenv bundle export`: artifacts inside, hashes pinned, runs elsewhere (another folder and config), at scale."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "registry-bundle"


def agentenv(cwd: Path, *args: str) -> tuple[int, Any, str]:
    """The CLI in `cwd` with a config of its own there (records and cache in that folder)."""
    (cwd / ".agentenv").mkdir(parents=True, exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "AGENTENV_CACHE": str(cwd / "cache")}
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600
    )
    data = json.loads(done.stdout) if "--json" in args and done.returncode in (0, 1) and done.stdout else done.stdout
    return done.returncode, data, done.stderr


def test_export_pins_artifacts_inside_and_runs_elsewhere(tmp_path: Path) -> None:
    out = tmp_path / "here" / "support-refund-export"
    (tmp_path / "here").mkdir()
    code, summary, stderr = agentenv(
        tmp_path / "here", "bundle", "export", "support-refund", "--out", str(out), "--json"
    )
    assert code == 0, stderr
    assert set(summary["artifacts"]) == {"helpdesk/acme", "email/acme", "slack/acme"}
    for env in ("helpdesk", "email", "slack"):
        assert any((out / "artifacts" / env).glob("acme.*")), env
    task = json.loads((out / "tasks" / "resolve-refund.json").read_text())
    assert not (out / "tasks" / "resolve-refund.toml").exists()
    assert task["pins"]["artifacts"] == summary["artifacts"]
    assert all(len(sha) == 64 for sha in task["pins"]["artifacts"].values())
    loads = [s for s in task["steps"] if s["type"] == "load_artifact"]
    assert sorted(loads[0]["artifacts"]) == sorted(
        f"{env}=artifacts/{env}/{next((out / 'artifacts' / env).glob('acme.*')).name}"
        for env in ("helpdesk", "email", "slack")
    )
    manifest = tomllib.loads((out / "bundle.toml").read_text())
    assert manifest["requires"]["agentenv-helpdesk"] == ">=0.1,<0.2"
    assert manifest["exported_with"]["agentenv-helpdesk"].startswith("0.")

    elsewhere = tmp_path / "elsewhere"
    moved = elsewhere / "bundle"
    shutil.copytree(out, moved)  # another folder, another config: nothing points back at the source
    code, result, stderr = agentenv(elsewhere, "run", str(moved), "--json")
    assert code == 0, stderr
    assert result["tasks"][0]["score"] == 1.0

    # The pinned hashes are checked: different data in the export is refused.
    copied = next((moved / "artifacts" / "slack").glob("acme.*"))
    copied.write_bytes(copied.read_bytes().replace(b"general", b"generaL", 1))
    code, result, stderr = agentenv(elsewhere, "run", str(moved), "--json")
    assert code == 1 and result["tasks"][0]["status"] == "failed"
    code, record, stderr = agentenv(elsewhere, "runs", "show", result["tasks"][0]["run_id"], "--json")
    errors = " ".join(step.get("error") or "" for step in record["steps"])
    assert "artifact slack/acme has sha256" in errors and "the task pins" in errors, errors


def test_tar_gz_export_is_reproducible_and_runs(tmp_path: Path) -> None:
    first, second = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    for out in (first, second):
        code, _, stderr = agentenv(tmp_path, "bundle", "export", str(FIXTURE), "--out", str(out))
        assert code == 0, stderr
    assert first.read_bytes() == second.read_bytes()
    code, result, stderr = agentenv(tmp_path / "other", "run", str(first), "--json")
    assert code == 0, stderr
    assert [t["status"] for t in result["tasks"]] == ["succeeded"]


def test_hundreds_of_tasks_export_and_run(tmp_path: Path) -> None:
    bundle = tmp_path / "many"
    shutil.copytree(FIXTURE, bundle)
    text = (bundle / "tasks" / "demo.toml").read_text()
    for i in range(200):
        (bundle / "tasks" / f"demo-{i:03d}.toml").write_text(text.replace('name = "demo"', f'name = "demo-{i:03d}"'))
    manifest = (bundle / "bundle.toml").read_text().replace('tasks = ["demo"]\n', "")
    (bundle / "bundle.toml").write_text(manifest)
    out = tmp_path / "many.tar.gz"
    code, summary, stderr = agentenv(tmp_path, "bundle", "export", str(bundle), "--out", str(out), "--json")
    assert code == 0, stderr
    assert summary["artifacts"], "the tasks' artifacts are pinned"
    code, result, stderr = agentenv(tmp_path / "run", "run", str(out), "--json")
    assert code == 0, stderr
    assert len(result["tasks"]) == 201
    assert {t["status"] for t in result["tasks"]} == {"succeeded"}


def test_export_refuses_an_existing_target(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("x")
    code, _, stderr = agentenv(tmp_path, "bundle", "export", str(FIXTURE), "--out", str(tmp_path / "taken"))
    assert code == 1 and "already exists" in stderr and "Traceback" not in stderr
