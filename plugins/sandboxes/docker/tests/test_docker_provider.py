"""The docker provider against the real engine: containers, exec, files, ports, labels, policy, teardown."""

from __future__ import annotations

import os
import secrets
import socket
import time
import urllib.request
from typing import Any

import pytest
from agentenv.contracts import NetworkPolicy, SandboxSpec, SpecRefused
from agentenv_docker.provider import DockerProvider
from agentenv_docker.sandbox import DockerSandbox

TEST_LABELS = {"agentenv.test": f"docker-{os.getpid()}"}  # pruned by the `provider` fixture


def new_run() -> str:
    return f"test-{secrets.token_hex(5)}"


def make(provider: DockerProvider, run: str | None = None, **fields: Any) -> DockerSandbox:
    labels = {"agentenv.run": run or new_run(), **TEST_LABELS, **fields.pop("labels", {})}
    sandbox = provider.create(SandboxSpec(labels=labels, **fields))
    assert isinstance(sandbox, DockerSandbox)
    return sandbox


def engine_objects(provider: DockerProvider, name: str) -> tuple[list[Any], list[Any]]:
    """Containers and networks called `name` (the sandbox id names both)."""
    containers = provider.client.containers.list(all=True, filters={"name": f"^{name}$"})
    networks = [n for n in provider.client.networks.list(names=[name]) if n.name == name]
    return containers, networks


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_create_labels_limits_and_private_network(provider: DockerProvider) -> None:
    run = new_run()
    sandbox = make(provider, run, cpu=0.5, memory_mb=128, env={"GREETING": "hi there"}, labels={"team": "a"})
    assert sandbox.status() == "running"
    container = provider.client.containers.get(sandbox.id)
    labels = container.labels
    assert labels["agentenv.run"] == run and labels["team"] == "a"
    assert labels["agentenv.managed"] == "true" and labels["agentenv.sandbox"] == sandbox.id
    host_config = container.attrs["HostConfig"]
    assert host_config["NanoCpus"] == 500_000_000
    assert host_config["Memory"] == 128 * 1024 * 1024
    assert container.attrs["Config"]["Image"] == provider.settings.base_image
    networks = container.attrs["NetworkSettings"]["Networks"]
    assert list(networks) == [sandbox.id]
    network = provider.client.networks.get(sandbox.id)
    assert network.attrs["Internal"] is False
    assert network.attrs["Labels"]["agentenv.run"] == run and network.attrs["Labels"]["agentenv.managed"] == "true"
    assert sandbox.exec(["sh", "-c", 'echo "$GREETING"; pwd']).stdout == "hi there\n/sandbox\n"
    sandbox.teardown()


def test_exec_exit_codes_stderr_and_missing_command(provider: DockerProvider) -> None:
    sandbox = make(provider)
    result = sandbox.exec(["python3", "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(5)"])
    assert (result.exit_code, result.stdout, result.stderr) == (5, "out\n", "err\n")
    missing = sandbox.exec(["no-such-command-here"])
    assert missing.exit_code != 0
    sandbox.teardown()


def test_exec_timeout_kills_the_command_and_its_children(provider: DockerProvider) -> None:
    sandbox = make(provider)
    started = time.monotonic()
    result = sandbox.exec(["sh", "-c", "echo started; sleep 300 & sleep 301; echo never"], timeout=1.5)
    assert result.exit_code == 124
    assert result.stdout == "started\n"
    assert "timed out" in result.stderr
    assert time.monotonic() - started < 60  # generous: the 300 s sleeps must not be waited for
    left = sandbox.exec(["sh", "-c", "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '"]).stdout
    assert "sleep 300" not in left and "sleep 301" not in left
    assert sandbox.exec(["true"], timeout=30).exit_code == 0  # the sandbox still works
    sandbox.teardown()


def test_files_relative_absolute_missing_and_folders(provider: DockerProvider) -> None:
    sandbox = make(provider)
    sandbox.put_file("/etc/agentenv/conf.json", b'{"a": 1}')
    assert sandbox.get_file("/etc/agentenv/conf.json") == b'{"a": 1}'
    sandbox.put_file("x/y.txt", b"rel")
    assert sandbox.get_file("/sandbox/x/y.txt") == b"rel"
    with pytest.raises(FileNotFoundError, match=r"nope\.txt"):
        sandbox.get_file("nope.txt")
    with pytest.raises(IsADirectoryError):
        sandbox.get_file("x")
    sandbox.teardown()


def test_port_served_inside_is_reachable_through_url(provider: DockerProvider) -> None:
    port = free_port()
    sandbox = make(provider, ports=[port])
    sandbox.put_file("hello.txt", b"from inside")
    started = sandbox.exec(["sh", "-c", f"python3 -m http.server {port} >/dev/null 2>&1 &"], timeout=30)
    assert started.exit_code == 0
    url = sandbox.url(port)
    assert url.startswith("http://127.0.0.1:") and not url.endswith(f":{port}")  # a random host port
    body, last = None, ""
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"{url}/hello.txt", timeout=5) as response:
                body = response.read()
                break
        except OSError as exc:
            last = repr(exc)
            time.sleep(0.2)
    assert body == b"from inside", last
    with pytest.raises(ValueError, match="not published"):
        sandbox.url(port + 1)
    sandbox.teardown()


def test_teardown_removes_container_and_network_and_is_idempotent(provider: DockerProvider) -> None:
    run = new_run()
    sandbox = make(provider, run)
    assert engine_objects(provider, sandbox.id) != ([], [])
    sandbox.teardown()
    sandbox.teardown()
    assert engine_objects(provider, sandbox.id) == ([], [])
    assert sandbox.status() == "missing"
    assert provider.list({"agentenv.run": run}) == []


def test_stopped_container_is_stopped_and_listed(provider: DockerProvider) -> None:
    run = new_run()
    sandbox = make(provider, run, command=["true"])
    for _ in range(100):
        if sandbox.status() == "stopped":
            break
        time.sleep(0.1)
    assert sandbox.status() == "stopped"
    assert [s.id for s in provider.list({"agentenv.run": run})] == [sandbox.id]
    sandbox.teardown()


def test_list_matches_every_label(provider: DockerProvider) -> None:
    run = new_run()
    a = make(provider, run, labels={"role": "env"})
    b = make(provider, run, labels={"role": "agent"})
    assert {s.id for s in provider.list({"agentenv.run": run})} == {a.id, b.id}
    assert [s.id for s in provider.list({"agentenv.run": run, "role": "agent"})] == [b.id]
    listed = provider.list({"agentenv.run": run, "role": "env"})[0]
    assert listed.labels["role"] == "env" and listed.exec(["echo", "x"]).stdout == "x\n"
    provider.prune({"agentenv.run": run})
    assert provider.list({"agentenv.run": run}) == []


def test_refusals_name_the_field_and_leave_nothing(provider: DockerProvider) -> None:
    run = new_run()
    cases = {
        "mode": {"mode": "vm"},
        "network": {"network": NetworkPolicy(mode="allowlist", allow=["pypi.org"])},
    }
    driver = provider.client.info()["Driver"]
    if driver not in {"btrfs", "zfs", "devicemapper", "overlay2"}:
        cases["disk_mb"] = {"disk_mb": 512}
    for field, spec in cases.items():
        with pytest.raises(SpecRefused, match=field) as caught:
            make(provider, run, **spec)
        if field == "disk_mb":
            assert driver in str(caught.value)
    with pytest.raises(SpecRefused, match="ports"):
        make(provider, run, network=NetworkPolicy(mode="allowlist"), ports=[8000])
    with pytest.raises(SpecRefused, match="ports"):
        make(provider, run, network=NetworkPolicy(mode="loopback"), ports=[8000])
    with pytest.raises(SpecRefused, match=r"network: mode 'none'.*use mode 'loopback'"):
        make(provider, run, network=NetworkPolicy(mode="none"))
    assert provider.list({"agentenv.run": run}) == []
    assert provider.client.networks.list(filters={"label": f"agentenv.run={run}"}) == []


def test_empty_allowlist_means_no_network_access(provider: DockerProvider) -> None:
    sandbox = make(provider, network=NetworkPolicy(mode="allowlist"))
    assert provider.client.networks.get(sandbox.id).attrs["Internal"] is True
    probe = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('192.0.2.1', 80), timeout=3)\n"
        "except OSError as exc:\n"
        "    print('blocked', type(exc).__name__)\n"
        "else:\n"
        "    print('connected')\n"
    )
    result = sandbox.exec(["python3", "-c", probe], timeout=30)
    assert result.stdout.startswith("blocked"), result
    sandbox.teardown()


def test_missing_images_are_refused_with_the_fix(base_image: str) -> None:
    run = new_run()
    provider = DockerProvider({"pull": False})
    with pytest.raises(SpecRefused, match=r"image: cannot use 'agentenv-test/none:1'.*pull"):
        make(provider, run, image="agentenv-test/none:1")
    off = DockerProvider({"base_image": "agentenv/base:absent-for-test", "build_base": False})
    with pytest.raises(SpecRefused) as caught:
        make(off, run)
    assert "python -m agentenv_docker.base_image --tag agentenv/base:absent-for-test" in str(caught.value)
    assert provider.list({"agentenv.run": run}) == []
    assert provider.client.networks.list(filters={"label": f"agentenv.run={run}"}) == []


def test_ttl_labels_a_deadline_and_prune_expired_removes_only_expired(provider: DockerProvider) -> None:
    run = new_run()
    short = make(provider, run, ttl_seconds=1)
    lasting = make(provider, run, ttl_seconds=3600)
    plain = make(provider, run)
    deadline = int(short.labels["agentenv.deadline"])
    assert abs(deadline - time.time()) < 120
    while time.time() <= deadline:
        time.sleep(0.2)
    for _ in range(100):  # the default command ends at the deadline, so the container stops by itself
        if short.status() == "stopped":
            break
        time.sleep(0.1)
    assert short.status() == "stopped" and lasting.status() == "running"
    removed = provider.prune_objects({"agentenv.run": run}, expired=True)
    assert removed["containers"] == [short.id] and removed["networks"] == [short.id]
    assert {s.id for s in provider.list({"agentenv.run": run})} == {lasting.id, plain.id}
    assert [s.id for s in provider.sandboxes({"agentenv.run": run}, expired=True)] == []
    provider.prune({"agentenv.run": run})
    assert provider.list({"agentenv.run": run}) == []


def test_prune_never_touches_unmanaged_objects(provider: DockerProvider) -> None:
    run = new_run()
    foreign = provider.client.networks.create(f"foreign-{run}", labels={"agentenv.run": run})
    try:
        sandbox = make(provider, run)
        removed = provider.prune_objects({"agentenv.run": run})
        assert removed == {"containers": [sandbox.id], "networks": [sandbox.id], "volumes": []}
        assert provider.client.networks.get(foreign.id).name == f"foreign-{run}"
    finally:
        foreign.remove()


LOOPBACK_PROBE = """
import os, socket
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen()
socket.create_connection(server.getsockname(), timeout=5).close()
try:
    socket.create_connection(("192.0.2.1", 80), timeout=5)
    outside = "connected"
except OSError as exc:
    outside = f"errno {exc.errno}"
print(sorted(os.listdir("/sys/class/net")), "own loopback ok", outside)
"""


def test_loopback_mode_leaves_the_container_only_its_own_loopback(provider: DockerProvider) -> None:
    open_box = make(provider)
    closed = make(provider, network=NetworkPolicy(mode="loopback"))
    assert provider.client.containers.get(closed.id).attrs["HostConfig"]["NetworkMode"] == "none"
    assert engine_objects(provider, closed.id)[1] == []  # no network was made for it
    interfaces_open = open_box.exec(["python3", "-c", LOOPBACK_PROBE], timeout=60).stdout
    result = closed.exec(["python3", "-c", LOOPBACK_PROBE], timeout=60)
    assert result.stdout.strip() == "['lo'] own loopback ok errno 101", result  # ENETUNREACH: no route at all
    assert "eth0" in interfaces_open  # the same probe in a sandbox with a network
    closed.teardown()
    assert engine_objects(provider, closed.id) == ([], [])
