"""Store benchmarks (the clouds issue): our cloud stores against the raw SDK call on the same emulator.

For each backend, the median latency of a record put/get (a ~1 KB run record) and an object put/get (16 KiB)
through our store, and through the bare SDK call our store makes, on the same emulator, interleaved so both
see the same machine load; the ratio is ours ÷ raw (target ≤ 1.2×). Then 1,000 run records are written to
DynamoDB and listed in one `agentenv runs list --limit 1000 --json` through the CLI, against the raw paged
Query that reads the same items.

Services, each started here on a free loopback port and stopped at the end: moto in server mode (DynamoDB,
S3), gcp-storage-emulator (Cloud Storage) and, where gcloud has it, the Firestore emulator.

Run: .venv/bin/python bench/store_bench.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenv_testing.services import LoopbackService

BIN = Path(sys.executable).parent
RECORD: dict[str, Any] = {
    "id": "run-0",
    "task": "support-refund",
    "status": "succeeded",
    "passed": True,
    "score": 1.0,
    "seed": 0,
    "started_at": 0.0,
    "trajectory_digest": "sha256:" + "0" * 64,
    "steps": [{"id": f"s{i}", "type": "call_tool", "status": "succeeded", "duration_ms": 1.5} for i in range(8)],
}
BLOB = os.urandom(16 * 1024)


def median_ms(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def compare(name: str, ours: Callable[[], object], raw: Callable[[], object], repeat: int) -> None:
    """Warm both, then alternate rounds of each so drift in machine load hits both alike."""
    for _ in range(10):
        ours()
        raw()
    a, b = [], []
    for _ in range(5):
        a.append(median_ms(ours, repeat // 5))
        b.append(median_ms(raw, repeat // 5))
    mine, bare = statistics.median(a), statistics.median(b)
    print(f"{name:<34} ours {mine:7.3f} ms   raw SDK {bare:7.3f} ms   ratio {mine / bare:5.2f}x")


def bench_aws(moto: str, repeat: int) -> None:
    import boto3
    from agentenv_aws.dynamodb import DynamoDocumentStore
    from agentenv_aws.s3 import S3ObjectStore

    table, bucket = f"bench-{uuid.uuid4().hex[:8]}", f"bench-{uuid.uuid4().hex[:8]}"
    docs = DynamoDocumentStore({"table": table, "endpoint_url": moto})
    objects = S3ObjectStore({"bucket": bucket, "endpoint_url": moto, "create_bucket": True})
    dynamo, s3 = boto3.client("dynamodb", endpoint_url=moto), boto3.client("s3", endpoint_url=moto)
    text = json.dumps(RECORD, separators=(",", ":"))
    key = {"c": {"S": "runs"}, "id": {"S": "raw"}}

    def raw_put() -> None:  # the item our store writes: the JSON text, a fresh write order and revision
        item = {**key, "doc": {"S": text}, "seq": {"N": str(time.time_ns())}, "rev": {"S": uuid.uuid4().hex}}
        dynamo.put_item(TableName=table, Item=item)

    compare("dynamodb record put", lambda: docs.put("runs", "ours", RECORD), raw_put, repeat)
    compare(
        "dynamodb record get",
        lambda: docs.get("runs", "ours"),
        lambda: json.loads(dynamo.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]["doc"]["S"]),
        repeat,
    )
    compare(
        "s3 object put (16 KiB)",
        lambda: objects.put("bench/ours", BLOB),
        lambda: s3.put_object(Bucket=bucket, Key="bench/raw", Body=BLOB),
        repeat,
    )
    compare(
        "s3 object get (16 KiB)",
        lambda: objects.get("bench/ours"),
        lambda: s3.get_object(Bucket=bucket, Key="bench/raw")["Body"].read(),
        repeat,
    )


def bench_gcs(endpoint: str, repeat: int) -> None:
    from agentenv_gcp.gcs import GcsObjectStore
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    bucket = f"bench-{uuid.uuid4().hex[:8]}"
    objects = GcsObjectStore({"project": "bench", "bucket": bucket, "endpoint_url": endpoint, "create_bucket": True})
    raw = storage.Client(project="bench", credentials=AnonymousCredentials(), client_options={"api_endpoint": endpoint})
    blob = raw.bucket(bucket).blob("bench/raw")
    compare(
        "gcs object put (16 KiB)",
        lambda: objects.put("bench/ours", BLOB),
        lambda: blob.upload_from_string(BLOB),
        repeat,
    )
    compare("gcs object get (16 KiB)", lambda: objects.get("bench/ours"), blob.download_as_bytes, repeat)


def bench_firestore(repeat: int) -> None:
    from agentenv_gcp.firestore import FirestoreDocumentStore
    from google.cloud import firestore

    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    docs = FirestoreDocumentStore({"project": "bench", "namespace": namespace})
    raw = firestore.Client(project="bench").collection("raw").document(namespace).collection("runs").document("raw")
    text = json.dumps(RECORD, separators=(",", ":"))
    compare(
        "firestore record put",
        lambda: docs.put("runs", "ours", RECORD),
        lambda: raw.set({"doc": text, "seq": time.time_ns(), "rev": uuid.uuid4().hex}),
        repeat,
    )
    compare(
        "firestore record get",
        lambda: docs.get("runs", "ours"),
        lambda: json.loads(raw.get(field_paths=["doc"]).get("doc")),
        repeat,
    )


def bench_runs_list(moto: str) -> None:
    """1,000 run records in DynamoDB, listed by one `agentenv runs list` (a process: imports, config, query)."""
    import boto3
    from agentenv_aws.dynamodb import DynamoDocumentStore

    table = f"runs-{uuid.uuid4().hex[:8]}"
    docs = DynamoDocumentStore({"table": table, "endpoint_url": moto})
    for i in range(1000):
        docs.put("runs", f"run-{i:04d}", {**RECORD, "id": f"run-{i:04d}", "started_at": float(i)})
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config.toml"
        config.write_text(
            f'[store]\ndocument = "dynamodb"\n[plugins.agentenv-aws.document]\ntable = "{table}"\n'
            f'endpoint_url = "{moto}"\n'
        )
        env = {**os.environ, "AGENTENV_CONFIG": str(config)}
        argv = [str(BIN / "agentenv"), "runs", "list", "--limit", "1000", "--json"]
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=folder, check=True)
        cli = time.perf_counter() - start
    listed = json.loads(done.stdout)
    dynamo = boto3.client("dynamodb", endpoint_url=moto)

    def raw_query() -> int:
        request: dict[str, Any] = {
            "TableName": table,
            "IndexName": "by_seq",
            "ScanIndexForward": False,
            "KeyConditionExpression": "c = :c",
            "ProjectionExpression": "doc",
            "Limit": 1000,
            "ConsistentRead": True,
            "ExpressionAttributeValues": {":c": {"S": "runs"}},
        }
        count = 0
        while True:
            page = dynamo.query(**request)
            count += len([json.loads(i["doc"]["S"]) for i in page["Items"]])
            if "LastEvaluatedKey" not in page:
                return count
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    ours = median_ms(lambda: docs.query("runs", limit=1000), 5)
    bare = median_ms(raw_query, 5)
    print(
        f"runs list --limit 1000 (CLI process) listed {len(listed)} runs in {cli * 1000:.0f} ms, "
        f"newest first: {listed[0]['id']} … {listed[-1]['id']}"
    )
    print(
        f"{'dynamodb query of 1,000 records':<34} ours {ours:7.1f} ms   raw SDK {bare:7.1f} ms   "
        f"ratio {ours / bare:5.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=200, help="calls per measurement (default 200)")
    args = parser.parse_args()
    os.environ.update(
        {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}
    )
    with tempfile.TemporaryDirectory() as logs:
        log = Path(logs)
        with LoopbackService(
            [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", "{port}"], log=log / "moto.log", ready_path="/moto-api/"
        ) as moto:
            bench_aws(moto.url, args.repeat)
            bench_runs_list(moto.url)
        gcs_argv = [
            str(BIN / "gcp-storage-emulator"),
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            "{port}",
            "--in-memory",
        ]
        with LoopbackService(gcs_argv, log=log / "gcs.log") as gcs:
            bench_gcs(gcs.url, args.repeat)
        if shutil.which("gcloud") is None:
            print("firestore: skipped (gcloud is not installed)")
            return
        fs_argv = ["gcloud", "emulators", "firestore", "start", "--host-port=127.0.0.1:{port}", "--quiet"]
        with LoopbackService(fs_argv, log=log / "firestore.log", start_seconds=120) as fs:
            os.environ["FIRESTORE_EMULATOR_HOST"] = f"127.0.0.1:{fs.port}"
            bench_firestore(args.repeat)


if __name__ == "__main__":
    main()
