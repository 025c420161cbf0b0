"""The config switch on Google Cloud: `agentenv run support-refund` records to Firestore and Cloud Storage because
the config says so, and a second machine (another config dir, the same emulators) reads the same runs back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from agentenv_gcp.gcs import GcsObjectStore
from agentenv_testing.services import LoopbackService

PROJECT = "agentenv-test"


def config_dir(root: Path, namespace: str, bucket: str) -> Path:
    """A machine's `.agentenv/config.toml` naming the Google Cloud stores; the endpoint is an `env:` reference."""
    (root / ".agentenv").mkdir(parents=True)
    (root / ".agentenv" / "config.toml").write_text(
        "[store]\n"
        'document = "firestore"\n'
        'object = "gcs"\n'
        "[plugins.agentenv-gcp.document]\n"
        f'project = "{PROJECT}"\n'
        f'namespace = "{namespace}"\n'
        "[plugins.agentenv-gcp.object]\n"
        f'project = "{PROJECT}"\n'
        f'bucket = "{bucket}"\n'
        "create_bucket = true\n"
        'endpoint_url = "env:AGENTENV_TEST_GCS_ENDPOINT"\n'
    )
    return root


def agentenv(cwd: Path, gcs: str, firestore: str, *args: str) -> tuple[int, Any, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(cwd),
        "AGENTENV_TEST_GCS_ENDPOINT": gcs,
        "FIRESTORE_EMULATOR_HOST": firestore,
    }
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )
    data = json.loads(done.stdout) if "--json" in args and done.stdout.strip() else done.stdout
    return done.returncode, data, done.stderr


def test_support_refund_records_to_firestore_and_gcs_and_another_machine_reads_them(
    tmp_path: Path, firestore_emulator: LoopbackService, gcs_emulator: LoopbackService
) -> None:
    namespace, bucket = f"records-{uuid.uuid4().hex[:8]}", f"objects-{uuid.uuid4().hex[:8]}"
    laptop = config_dir(tmp_path / "laptop", namespace, bucket)
    other = config_dir(tmp_path / "other", namespace, bucket)
    firestore = os.environ["FIRESTORE_EMULATOR_HOST"]

    code, result, stderr = agentenv(laptop, gcs_emulator.url, firestore, "run", "support-refund", "--keep", "--json")
    assert code == 0, stderr
    task = result["tasks"][0]
    assert task["score"] == 1.0
    run_id = task["run_id"]

    assert not (laptop / ".agentenv" / "data").exists()
    raw = GcsObjectStore({"project": PROJECT, "bucket": bucket, "endpoint_url": gcs_emulator.url})
    keys = raw.list(f"runs/{run_id}/")
    assert any(k.endswith(".trajectory.jsonl") for k in keys) and any(k.endswith(".snapshot") for k in keys), keys

    code, listed, stderr = agentenv(other, gcs_emulator.url, firestore, "runs", "list", "--json")
    assert code == 0, stderr
    assert [r["id"] for r in listed] == [run_id]
    assert listed[0]["trajectory_digest"] == task["trajectory_digest"]
    code, shown, stderr = agentenv(other, gcs_emulator.url, firestore, "runs", "show", run_id[:8], "--json")
    assert code == 0, stderr
    assert shown["id"] == run_id and shown["score"] == 1.0
    code, events, stderr = agentenv(other, gcs_emulator.url, firestore, "runs", "trajectory", run_id, "--json")
    assert code == 0, stderr
    assert any(e.get("tool") for e in events)
    assert not (other / ".agentenv" / "data").exists()
