"""The config switch: `agentenv run support-refund` records to DynamoDB and S3 because the config says so,
and a second machine (another config dir, same moto server) reads the same runs back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import boto3
from agentenv_testing.services import LoopbackService


def config_dir(root: Path, table: str, bucket: str, images: str = "") -> Path:
    """A machine's `.agentenv/config.toml` naming the AWS stores; the endpoint is an `env:` reference. `images`
    (settings of the `ecr` store) also makes ECR the image store."""
    (root / ".agentenv").mkdir(parents=True)
    (root / ".agentenv" / "config.toml").write_text(
        "[store]\n"
        'document = "dynamodb"\n'
        'object = "s3"\n' + ('image = "ecr"\n' if images else "") + "[plugins.agentenv-aws.document]\n"
        f'table = "{table}"\n'
        'endpoint_url = "env:AGENTENV_TEST_AWS_ENDPOINT"\n'
        "[plugins.agentenv-aws.object]\n"
        f'bucket = "{bucket}"\n'
        'prefix = "agentenv/"\n'
        "create_bucket = true\n"
        'endpoint_url = "env:AGENTENV_TEST_AWS_ENDPOINT"\n'
        + (f"[plugins.agentenv-aws.image]\n{images}" if images else "")
    )
    return root


def agentenv(cwd: Path, endpoint: str, *args: str) -> tuple[int, Any, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    env |= {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "AGENTENV_TEST_AWS_ENDPOINT": endpoint}
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )
    data = json.loads(done.stdout) if "--json" in args and done.stdout.strip() else done.stdout
    return done.returncode, data, done.stderr


def test_support_refund_records_to_dynamodb_and_s3_and_another_machine_reads_them(
    tmp_path: Path, moto: LoopbackService
) -> None:
    table, bucket = f"records-{uuid.uuid4().hex[:8]}", f"objects-{uuid.uuid4().hex[:8]}"
    laptop = config_dir(tmp_path / "laptop", table, bucket)
    other = config_dir(tmp_path / "other", table, bucket)

    code, result, stderr = agentenv(laptop, moto.url, "run", "support-refund", "--keep", "--json")
    assert code == 0, stderr
    task = result["tasks"][0]
    assert task["score"] == 1.0
    run_id = task["run_id"]

    # Nothing went to local disk; the record is in DynamoDB and the blobs are in S3 under the prefix.
    assert not (laptop / ".agentenv" / "data").exists()
    item = boto3.client("dynamodb", endpoint_url=moto.url).get_item(
        TableName=table, Key={"c": {"S": "runs"}, "id": {"S": run_id}}
    )
    assert json.loads(item["Item"]["doc"]["S"])["score"] == 1.0
    keys = [o["Key"] for o in boto3.client("s3", endpoint_url=moto.url).list_objects_v2(Bucket=bucket)["Contents"]]
    assert any(k.startswith(f"agentenv/runs/{run_id}/") and k.endswith(".trajectory.jsonl") for k in keys), keys
    assert any(k.endswith(".snapshot") for k in keys), keys

    code, listed, stderr = agentenv(other, moto.url, "runs", "list", "--json")
    assert code == 0, stderr
    assert [r["id"] for r in listed] == [run_id]
    assert listed[0]["trajectory_digest"] == task["trajectory_digest"]
    code, shown, stderr = agentenv(other, moto.url, "runs", "show", run_id[:8], "--json")
    assert code == 0, stderr
    assert shown["id"] == run_id and shown["score"] == 1.0
    code, events, stderr = agentenv(other, moto.url, "runs", "trajectory", run_id, "--json")
    assert code == 0, stderr
    assert any(e.get("tool") for e in events)
    assert not (other / ".agentenv" / "data").exists()


def test_registry_on_aws_stores_push_here_run_there(
    tmp_path: Path, moto: LoopbackService, docker_registry: LoopbackService, docker_engine: None
) -> None:
    """The registry on DynamoDB, S3 and ECR: push a bundle and an env image on one machine, run and pull on another."""
    table, bucket = f"records-{uuid.uuid4().hex[:8]}", f"objects-{uuid.uuid4().hex[:8]}"
    images = (
        f'repository_prefix = "t{uuid.uuid4().hex[:8]}/"\n'
        'endpoint_url = "env:AGENTENV_TEST_AWS_ENDPOINT"\n'
        f'registry_url = "{docker_registry.url}"\n'
    )
    laptop = config_dir(tmp_path / "laptop", table, bucket, images)
    cluster = config_dir(tmp_path / "cluster", table, bucket, images)

    code, pushed, stderr = agentenv(
        laptop, moto.url, "registry", "push", "bundle", "support-refund", "--version", "2.0.0", "--json"
    )
    assert code == 0, stderr
    assert pushed["new"] is True and pushed["digest"].startswith("sha256:")
    archive = tmp_path / "world.image.tar"
    archive.write_bytes(b"a served-world image archive (docker save output)")
    code, env_pushed, stderr = agentenv(
        laptop, moto.url, "registry", "push", "env", str(archive), "--name", "support-desk", "--version", "1", "--json"
    )
    assert code == 0, stderr

    code, listed, stderr = agentenv(cluster, moto.url, "registry", "list", "--json")
    assert code == 0, stderr
    assert {(e["kind"], e["name"], e["version"]) for e in listed} == {
        ("bundle", "support-refund", "2.0.0"),
        ("env", "support-desk", "1"),
    }
    code, result, stderr = agentenv(cluster, moto.url, "run", "registry://support-refund@2.0.0", "--json")
    assert code == 0, stderr
    assert result["tasks"][0]["score"] == 1.0
    code, pulled, stderr = agentenv(
        cluster, moto.url, "registry", "pull", "env", f"support-desk@{env_pushed['digest']}", "--json"
    )
    assert code == 0, stderr
    assert Path(pulled["path"]).read_bytes() == archive.read_bytes()


def test_store_settings_resolve_secrets_from_secrets_manager(tmp_path: Path, moto: LoopbackService) -> None:
    """`[store] secret = "secretsmanager"`, and a store setting that is a `secret:` reference resolves through it."""
    table, bucket = f"records-{uuid.uuid4().hex[:8]}", f"objects-{uuid.uuid4().hex[:8]}"
    prefix = f"t{uuid.uuid4().hex[:8]}/"
    boto3.client("secretsmanager", endpoint_url=moto.url).create_secret(
        Name=f"{prefix}TEAM_BUCKET", SecretString=bucket
    )
    root = config_dir(tmp_path / "laptop", table, "secret:TEAM_BUCKET")
    config = root / ".agentenv" / "config.toml"
    config.write_text(
        config.read_text().replace("[store]\n", '[store]\nsecret = "secretsmanager"\n', 1)
        + f'[plugins.agentenv-aws.secret]\nprefix = "{prefix}"\nendpoint_url = "env:AGENTENV_TEST_AWS_ENDPOINT"\n'
    )
    code, result, stderr = agentenv(root, moto.url, "run", "support-refund", "--json")
    assert code == 0, stderr
    run_id = result["tasks"][0]["run_id"]
    listed = boto3.client("s3", endpoint_url=moto.url).list_objects_v2(Bucket=bucket, Prefix=f"agentenv/runs/{run_id}/")
    assert listed.get("KeyCount", 0) >= 1, "the trajectory went to the bucket named by the secret"

    config.write_text(config.read_text().replace("secret:TEAM_BUCKET", "secret:NO_SUCH_SECRET"))
    code, _, stderr = agentenv(root, moto.url, "runs", "list")
    assert code != 0
    assert "secret 'NO_SUCH_SECRET' was not found" in stderr and "Traceback" not in stderr


def test_bad_store_settings_are_one_line_naming_the_file_and_field(tmp_path: Path, moto: LoopbackService) -> None:
    root = config_dir(tmp_path / "laptop", "t", "b")
    config = root / ".agentenv" / "config.toml"
    config.write_text(config.read_text().replace('bucket = "b"', 'bukket = "b"'))
    for args in (("runs", "list"), ("run", "support-refund"), ("registry", "list")):
        code, _, stderr = agentenv(root, moto.url, *args)
        assert code != 0, args
        assert f"{config}: [plugins.agentenv-aws.object] `bucket`: Field required; `bukket`" in stderr, (args, stderr)
        assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr


def test_literal_credentials_in_the_config_are_refused(tmp_path: Path, moto: LoopbackService) -> None:
    root = config_dir(tmp_path / "laptop", f"records-{uuid.uuid4().hex[:8]}", f"objects-{uuid.uuid4().hex[:8]}")
    config = root / ".agentenv" / "config.toml"
    config.write_text(config.read_text() + 'access_key_id = "AKIAEXAMPLE"\n')  # lands in [plugins.agentenv-aws.object]
    code, _, stderr = agentenv(root, moto.url, "runs", "list")
    assert code == 1
    assert "plugins.agentenv-aws.object.access_key_id is a literal credential; write it as env:NAME" in stderr
    assert "AKIAEXAMPLE" not in stderr and "Traceback" not in stderr
    config.write_text(config.read_text().replace('"AKIAEXAMPLE"', '"env:AWS_ACCESS_KEY_ID"'))
    code, _, stderr = agentenv(root, moto.url, "runs", "list", "--json")
    assert code == 0, stderr
