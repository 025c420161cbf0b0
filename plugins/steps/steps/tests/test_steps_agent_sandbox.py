"""deploy_agent's sandbox: limits, time to live and network policy enforced by the provider that serves (or
refused, naming the field), `env_vars` resolved from references, and the sandbox torn down with the run."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv import get_host
from agentenv.contracts import kinds
from agentenv_runtime import TaskError
from agentenv_testing.tasks import temporary_config
from steps_taskkit import deploy, scripted, task

PROBE = """
import json, os, socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
    host = "reached"
except OSError:
    host = "unreachable"
print(json.dumps({"cpus": len(os.sched_getaffinity(0)), "host": host,
                  "greeting": os.environ.get("GREETING"), "token": os.environ.get("TOKEN")}))
"""


@pytest.fixture
def local_config(tmp_path: Path):
    """inline and process sandboxes under tmp_path (skip when agentenv-sandbox-local is missing)."""
    providers = get_host().registry(kinds.SANDBOX_PROVIDERS)
    if "process" not in providers:
        pytest.skip("no process sandbox provider installed")
    config = temporary_config(tmp_path)
    config.values["plugins"][providers["process"].dist] = {
        name: {"state_dir": str(tmp_path / "state" / name), "root": str(tmp_path / "boxes")}
        for name in ("inline", "process")
    }
    return config


@pytest.fixture
def host_port() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield server.getsockname()[1]
    server.close()


def agent(sandbox: dict | None = None, **fields):
    step = scripted("agent", "world", [])
    return {**step, **({"sandbox": sandbox} if sandbox is not None else {}), **fields}


def probe(port: int):
    command = f"'{sys.executable}' -c '{PROBE}' {port} > probe.json"
    return {"id": "probe", "type": "install_agent", "sandbox": "agent", "install": {"commands": [command]}}


def collect():
    return {"id": "grab", "type": "collect_artifacts", "source": "agent", "paths": ["probe.json"]}


def sandboxes_left(tmp_path: Path) -> list[str]:
    return [p.name for p in (tmp_path / "state").rglob("*.json")]


def test_limits_network_and_env_vars_are_the_agents_sandbox(runs, step, local_config, host_port, tmp_path, monkeypatch):
    from agentenv_sandbox_local.confine import network_problem

    if why := network_problem("loopback"):
        pytest.skip(why)
    monkeypatch.setenv("H33_TOKEN_SOURCE", "from-the-environment")
    sandbox = {"provider": "process", "cpu": 1, "memory_mb": 512, "ttl_seconds": 600, "network": "loopback"}
    env_vars = {"GREETING": "hello", "TOKEN": "env:H33_TOKEN_SOURCE"}
    record = runs(
        task(deploy(), agent(sandbox, env_vars=env_vars), probe(host_port), collect()), config=local_config
    )
    assert record["status"] == "succeeded", record["steps"]
    made = step(record, "agent")["output"]["sandbox"]
    assert made["provider"] == "process" and made["network"] == "loopback" and made["env"] == ["GREETING", "TOKEN"]
    seen = json.loads(runs.object(step(record, "grab")["output"]["files"]["probe.json"]["key"]))
    assert seen == {"cpus": 1, "host": "unreachable", "greeting": "hello", "token": "from-the-environment"}
    assert "from-the-environment" not in json.dumps(record)  # resolved values are never recorded
    assert sandboxes_left(tmp_path) == []  # torn down with the run


def test_the_same_probe_without_limits_sees_the_machine(runs, step, local_config, host_port):
    record = runs(task(deploy(), agent({"provider": "process"}), probe(host_port), collect()), config=local_config)
    assert record["status"] == "succeeded", record["steps"]
    seen = json.loads(runs.object(step(record, "grab")["output"]["files"]["probe.json"]["key"]))
    assert seen["host"] == "reached" and seen["greeting"] is None


def test_a_provider_that_cannot_enforce_a_limit_is_passed_over(runs, step, local_config):
    record = runs(task(deploy(), agent({"provider": "inline,process", "memory_mb": 256})), config=local_config)
    assert record["status"] == "succeeded", record["steps"]
    made = step(record, "agent")["output"]["sandbox"]
    assert made["provider"] == "process"
    assert made["passed_over"][0].startswith("inline: refused the spec") and "memory_mb=256" in made["passed_over"][0]


@pytest.mark.parametrize(
    ("sandbox", "message"),
    [
        ({"provider": "inline", "cpu": 1}, "inline: refused the spec: inline sandbox cannot honour the spec: cpu=1.0"),
        ({"provider": "process", "disk_mb": 100}, "disk_mb=100: process does not enforce resource limits"),
        (
            {"provider": "process", "network": {"mode": "allowlist", "allow": ["pypi.org"]}},
            "a process cannot be limited to named hosts",
        ),
    ],
)
def test_what_no_provider_of_the_chain_can_enforce_fails_naming_the_field(runs, step, local_config, sandbox, message):
    record = runs(task(deploy(), agent(sandbox)), config=local_config)
    error = step(record, "agent")["error"]
    assert error.startswith("field `sandbox.provider`: no provider in") and message in error, error


def test_references_that_do_not_resolve_name_the_variable(runs, step, local_config, monkeypatch):
    monkeypatch.delenv("H33_NOT_SET", raising=False)
    record = runs(
        task(deploy(), agent({"provider": "process"}, env_vars={"KEY": "env:H33_NOT_SET"})), config=local_config
    )
    assert "field `env_vars.KEY`: env_vars.KEY: environment variable H33_NOT_SET is not set" in step(record, "agent")[
        "error"
    ]
    monkeypatch.setenv("AGENTENV_SECRET_H33_API_TOKEN", "s3cret")
    record = runs(
        task(deploy(), agent({"provider": "process"}, env_vars={"KEY": "secret:h33-api-token"})), config=local_config
    )
    assert record["status"] == "succeeded", record["steps"]
    record = runs(
        task(deploy(), agent({"provider": "process"}, env_vars={"KEY": "secret:h33-missing"})), config=local_config
    )
    assert "field `env_vars.KEY`: env_vars.KEY: secret 'h33-missing' was not found" in step(record, "agent")["error"]


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"env_vars": {"A": "1"}}, "env_vars", "give `sandbox` too"),
        ({"sandbox": {}, "env_vars": {"1BAD": "x"}}, "env_vars.1BAD", "a variable name is letters"),
        ({"sandbox": {"cpu": 0}}, "sandbox.cpu", "greater than 0"),
        ({"sandbox": {"network": "nowhere"}}, "sandbox.network.mode", "Input should be"),
        ({"sandbox": {"memory": 5}}, "sandbox.memory", "Extra inputs are not permitted"),
    ],
)
def test_agent_sandbox_preflight(runs, fields, field, message):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(), agent(**fields)))
    text = str(caught.value)
    assert f"field `{field}`" in text and message in text, text


CGROUP_PROBE = """
import json, os
def read(*paths):
    for path in paths:
        if os.path.exists(path):
            return open(path).read().split()
    return None
cpu = read("/sys/fs/cgroup/cpu.max") or read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") + read(
    "/sys/fs/cgroup/cpu/cpu.cfs_period_us")
memory = read("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
print(json.dumps({"cpu": cpu, "memory": memory, "interfaces": sorted(os.listdir("/sys/class/net")),
                  "token": os.environ.get("TOKEN")}))
"""


def test_a_docker_agent_sandbox_enforces_limits_and_the_network_in_the_container(runs, step, tmp_path, monkeypatch):
    from agentenv_testing.services import docker_engine_problem

    if problem := docker_engine_problem():
        pytest.skip(problem)
    monkeypatch.setenv("AGENTENV_SECRET_H33_DOCKER_TOKEN", "in-the-container")
    sandbox = {"provider": "docker", "cpu": 0.5, "memory_mb": 128, "ttl_seconds": 600, "network": "loopback"}
    command = f"python3 -c '{CGROUP_PROBE}' > probe.json"
    record = runs(
        task(
            deploy(),
            agent(sandbox, env_vars={"TOKEN": "secret:h33-docker-token"}),
            {"id": "probe", "type": "install_agent", "sandbox": "agent", "install": {"commands": [command]}},
            collect(),
        ),
        config=temporary_config(tmp_path),
    )
    assert record["status"] == "succeeded", record["steps"]
    made = step(record, "agent")["output"]["sandbox"]
    assert made["provider"] == "docker" and made["network"] == "loopback"
    seen = json.loads(runs.object(step(record, "grab")["output"]["files"]["probe.json"]["key"]))
    assert seen["cpu"] == ["50000", "100000"] and seen["memory"] == [str(128 * 1024 * 1024)]
    assert seen["interfaces"] == ["lo"] and seen["token"] == "in-the-container"
    import docker

    left = docker.from_env().containers.list(all=True, filters={"label": f"agentenv.run={record['id']}"})
    assert left == []  # torn down with the run
