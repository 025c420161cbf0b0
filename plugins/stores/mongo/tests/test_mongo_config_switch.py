"""The config switch: `agentenv run support-refund` records its runs in MongoDB because the config says so (the URL
an `env:` reference), and a second machine (another config dir, the same server) reads them back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from agentenv_testing.services import free_port
from pymongo import MongoClient

URL_VAR = "AGENTENV_TEST_MONGO_URL"


def config_dir(root: Path, database: str, extra: str = "") -> Path:
    """A machine's `.agentenv/config.toml` with MongoDB as its document store."""
    (root / ".agentenv").mkdir(parents=True)
    (root / ".agentenv" / "config.toml").write_text(
        '[store]\ndocument = "mongodb"\n'
        f'[plugins.agentenv-store-mongo.document]\nurl = "env:{URL_VAR}"\ndatabase = "{database}"\n{extra}'
    )
    return root


def agentenv(cwd: Path, url: str, *args: str) -> tuple[int, Any, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), URL_VAR: url, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )
    data = json.loads(done.stdout) if "--json" in args and done.stdout.strip() else done.stdout
    return done.returncode, data, done.stderr


def test_support_refund_records_to_mongodb_and_another_machine_reads_them(tmp_path: Path, mongoeco: str) -> None:
    database = f"records_{uuid.uuid4().hex[:8]}"
    laptop = config_dir(tmp_path / "laptop", database)
    other = config_dir(tmp_path / "other", database)

    code, result, stderr = agentenv(laptop, mongoeco, "run", "support-refund", "--json")
    assert code == 0, stderr
    task = result["tasks"][0]
    assert task["score"] == 1.0
    run_id = task["run_id"]

    assert not (laptop / ".agentenv" / "data" / "records.sqlite3").exists()
    with MongoClient(mongoeco) as client:
        stored = client[database]["agentenv_documents"].find_one({"_id": {"c": "runs", "id": run_id}})
    assert stored is not None and stored["doc"]["score"] == 1.0 and stored["doc"]["status"] == "succeeded"

    code, listed, stderr = agentenv(other, mongoeco, "runs", "list", "--json")
    assert code == 0, stderr
    assert [r["id"] for r in listed] == [run_id]
    assert listed[0]["trajectory_digest"] == task["trajectory_digest"]
    code, shown, stderr = agentenv(other, mongoeco, "runs", "show", run_id[:8], "--json")
    assert code == 0, stderr
    assert shown["id"] == run_id and shown["score"] == 1.0


def test_an_unreachable_server_is_one_line_from_the_cli(tmp_path: Path) -> None:
    root = config_dir(tmp_path / "laptop", "records", "timeout_seconds = 0.5\n")
    url = f"mongodb://127.0.0.1:{free_port()}/"
    code, _, stderr = agentenv(root, url, "runs", "list")
    assert code != 0
    assert "cannot reach the server" in stderr and "`url` under [plugins.agentenv-store-mongo.document]" in stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr


def test_bad_settings_are_one_line_naming_the_file_and_field(tmp_path: Path) -> None:
    root = config_dir(tmp_path / "laptop", "records", 'colection = "x"\n')
    code, _, stderr = agentenv(root, "mongodb://127.0.0.1:1/", "runs", "list")
    assert code != 0
    assert "[plugins.agentenv-store-mongo.document] `colection`: Extra inputs are not permitted" in stderr, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
