"""The `process` provider: the spec's command as the main process, mapped ports, status, cleanup, crash registry."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest
from agentenv.contracts import SandboxSpec
from agentenv_sandbox_local.process import ProcessProvider, ProcessSandbox
from agentenv_sandbox_local.procs import process_alive

SERVER = [sys.executable, "-m", "http.server", "{port}", "--bind", "127.0.0.1"]


def provider(tmp_path: Path) -> ProcessProvider:
    return ProcessProvider({"root": str(tmp_path / "work"), "state_dir": str(tmp_path / "state")})


def wait_for(url: str, seconds: float = 30.0) -> bytes:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not process_alive(pid, None):
            return True
        time.sleep(0.05)
    return False


def test_command_serves_on_a_mapped_port_until_teardown(tmp_path: Path) -> None:
    box = provider(tmp_path).create(SandboxSpec(command=SERVER, ports=[8000], labels={"agentenv.run": "r1"}))
    assert isinstance(box, ProcessSandbox)
    try:
        mapped = box.ports[8000]
        assert box.url(8000) == f"http://127.0.0.1:{mapped}"
        box.put_file("hello.txt", b"hi from the sandbox")
        assert wait_for(box.url(8000) + "/hello.txt") == b"hi from the sandbox"
        assert box.status() == "running"
        main = box.main
        assert main is not None and main["pid"] in box.pids
        assert box.exec(["sh", "-c", "echo $AGENTENV_PORT_8000"]).stdout.strip() == str(mapped)
    finally:
        box.teardown()
    assert box.status() == "missing"
    assert gone(main["pid"]), "the main process outlived teardown"


def test_two_sandboxes_asking_for_the_same_port_do_not_collide(tmp_path: Path) -> None:
    made = [provider(tmp_path).create(SandboxSpec(command=SERVER, ports=[8000])) for _ in range(2)]
    try:
        assert made[0].ports[8000] != made[1].ports[8000]
        for box in made:
            box.put_file("id.txt", box.id.encode())
            assert wait_for(box.url(8000) + "/id.txt") == box.id.encode()
    finally:
        for box in made:
            box.teardown()


def test_placeholders_name_each_port(tmp_path: Path) -> None:
    box = provider(tmp_path).create(SandboxSpec(ports=[80, 443]))
    try:
        assert box.expand(["x", "{port}", "{port:443}", "a={port:80}/b"]) == [
            "x",
            str(box.ports[80]),
            str(box.ports[443]),
            f"a={box.ports[80]}/b",
        ]
        with pytest.raises(ValueError, match=r"spec\.ports"):
            box.url(9999)
    finally:
        box.teardown()


def test_status_is_stopped_when_the_main_process_exits_and_logs_are_kept(tmp_path: Path) -> None:
    box = provider(tmp_path).create(SandboxSpec(command=["sh", "-c", "echo starting; echo boom >&2; exit 3"]))
    try:
        deadline = time.monotonic() + 10
        while box.status() == "running" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert box.status() == "stopped"
        assert box.logs().splitlines() == ["starting", "boom"]
        # Seen from another process's listing, too (no Popen handle there).
        listed = provider(tmp_path).list({})[0]
        assert listed.status() == "stopped"
    finally:
        box.teardown()


def test_teardown_kills_everything_the_command_spawned(tmp_path: Path) -> None:
    script = "sleep 300 & echo $! > child.pid; exec sleep 300"
    box = provider(tmp_path).create(SandboxSpec(command=["sh", "-c", script]))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            child = int(box.get_file("child.pid"))
            break
        except (OSError, ValueError):
            time.sleep(0.02)
    box.teardown()
    assert gone(child) and gone(box.main["pid"] if box.main else child)


def test_prune_from_another_process_kills_a_crashed_runs_server(tmp_path: Path) -> None:
    """A run that dies without teardown leaves a state file; a later process finds and kills the server."""
    code = textwrap.dedent(
        f"""
        import sys
        from agentenv.contracts.sandbox import SandboxSpec
        from agentenv_sandbox_local.process import ProcessProvider
        p = ProcessProvider({{"root": {str(tmp_path / "work")!r}, "state_dir": {str(tmp_path / "state")!r}}})
        box = p.create(SandboxSpec(command=["sleep", "300"], labels={{"agentenv.run": "crashed"}}))
        print(box.main["pid"])
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    pid = int(done.stdout.strip())
    assert process_alive(pid, None)
    found = provider(tmp_path).list({"agentenv.run": "crashed"})
    assert len(found) == 1 and found[0].status() == "running"
    assert provider(tmp_path).prune({"agentenv.run": "crashed"}) == [found[0].id]
    assert gone(pid)
    assert provider(tmp_path).list({"agentenv.run": "crashed"}) == []


def test_refusals_name_the_process_provider(tmp_path: Path) -> None:
    from agentenv.contracts import SpecRefused

    with pytest.raises(SpecRefused, match=r"process .*image='python:3.11'"):
        provider(tmp_path).create(SandboxSpec(image="python:3.11"))
    assert provider(tmp_path).list({}) == []


# ---- what the process provider enforces: the network, CPUs, memory --------------------------------
CONNECT = textwrap.dedent(
    """
    import socket, sys
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
        print("reached")
    except OSError as exc:
        print("unreachable", exc.errno)
    """
)
SELF_LOOP = textwrap.dedent(
    """
    import socket
    server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen()
    try:
        socket.create_connection(server.getsockname(), timeout=5).close()
        print("own loopback works")
    except OSError as exc:
        print("no loopback", exc.errno)
    """
)


@pytest.fixture
def host_port():
    """A server on this machine's loopback, as the world's gateway would be."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield server.getsockname()[1]
    server.close()


def run_in(box: ProcessSandbox, script: str, *args: str) -> str:
    done = box.exec([sys.executable, "-c", script, *args], timeout=60)
    assert done.exit_code == 0, done
    return done.stdout.strip()


@pytest.mark.parametrize("mode", ["loopback", "none"])
def test_network_modes_cut_the_sandbox_off_from_this_machine(tmp_path: Path, host_port: int, mode: str) -> None:
    from agentenv.contracts import NetworkPolicy
    from agentenv_sandbox_local.confine import network_problem

    if why := network_problem(mode):
        pytest.skip(why)
    open_box = provider(tmp_path).create(SandboxSpec(labels={"agentenv.run": "net"}))
    closed = provider(tmp_path).create(SandboxSpec(network=NetworkPolicy(mode=mode), labels={"agentenv.run": "net"}))
    try:
        assert run_in(open_box, CONNECT, str(host_port)) == "reached"  # the same call without the policy
        assert run_in(closed, CONNECT, str(host_port)).startswith("unreachable")
        inside = run_in(closed, SELF_LOOP)
        assert inside == ("own loopback works" if mode == "loopback" else "no loopback 101")  # ENETUNREACH
    finally:
        open_box.teardown()
        closed.teardown()


def test_the_main_command_runs_under_the_network_policy_too(tmp_path: Path, host_port: int) -> None:
    from agentenv.contracts import NetworkPolicy
    from agentenv_sandbox_local.confine import network_problem

    if why := network_problem("loopback"):
        pytest.skip(why)
    command = ["sh", "-c", f"'{sys.executable}' -c '{CONNECT}' {host_port} > main.out"]
    box = provider(tmp_path).create(SandboxSpec(command=command, network=NetworkPolicy(mode="loopback")))
    try:
        deadline = time.monotonic() + 60
        while box.status() == "running" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert box.get_file("main.out").decode().startswith("unreachable")
    finally:
        box.teardown()


def test_memory_limit_stops_a_process_that_takes_more(tmp_path: Path) -> None:
    take = "import sys; data = bytearray(int(sys.argv[1]) * 1024 * 1024); print(len(data) // 2**20)"
    free = provider(tmp_path).create(SandboxSpec())
    tight = provider(tmp_path).create(SandboxSpec(memory_mb=200))
    try:
        assert free.exec([sys.executable, "-c", take, "400"], timeout=60).stdout.strip() == "400"
        refused = tight.exec([sys.executable, "-c", take, "400"], timeout=60)
        assert refused.exit_code != 0 and "MemoryError" in refused.stderr
        assert tight.exec([sys.executable, "-c", take, "50"], timeout=60).stdout.strip() == "50"
    finally:
        free.teardown()
        tight.teardown()


def test_cpu_limit_pins_commands_to_that_many_cpus(tmp_path: Path) -> None:
    import os

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("this machine gives this process one CPU: a limit of one changes nothing to observe")
    count = "import os; print(len(os.sched_getaffinity(0)))"
    box = provider(tmp_path).create(SandboxSpec(cpu=1))
    try:
        assert box.exec([sys.executable, "-c", count]).stdout.strip() == "1"
    finally:
        box.teardown()


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"cpu": 0.5}, "cpu=0.5: the process provider limits whole CPUs"),
        ({"cpu": 4096}, "cpu=4096.0: this machine lets agentenv use"),
        ({"disk_mb": 100}, "disk_mb=100: process does not enforce resource limits"),
        ({"network": {"mode": "allowlist", "allow": ["pypi.org"]}}, "a process cannot be limited to named hosts"),
        ({"network": {"mode": "loopback"}, "ports": [8000]}, "nothing outside the sandbox reaches its ports"),
    ],
)
def test_what_the_process_provider_cannot_enforce_is_refused(tmp_path: Path, fields: dict, named: str) -> None:
    from agentenv.contracts import SpecRefused

    with pytest.raises(SpecRefused) as refused:
        provider(tmp_path).create(SandboxSpec.model_validate(fields))
    assert named in str(refused.value)
    assert provider(tmp_path).list({}) == []
