"""Conformance kit for sandbox providers: subclass it, provide `make_provider`, and pytest runs the contract.

    from agentenv_testing.sandboxes import SandboxProviderConformance

    class TestDockerProvider(SandboxProviderConformance):
        image = "python:3.11-slim"
        supports_limits = True

        def make_provider(self, tmp_path: Path) -> SandboxProvider:
            return DockerProvider({"network": f"kit-{tmp_path.name}"})

The class attributes say what the provider honours; a spec it does not honour must be refused with
`SpecRefused` whose message names the field. The tests use only `agentenv.contracts.sandbox`: commands go
through `sh`, relative file paths and commands share one working folder, and the port test runs
`serve_command` (stdlib `python3 -m http.server`) inside the sandbox. Every sandbox a test creates is torn
down afterwards, even when the test fails (a subclass overriding `teardown_method` must call super). This
module does not import pytest; test methods take pytest's `tmp_path` fixture by name.
"""

from __future__ import annotations

import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from agentenv.contracts import NetworkPolicy, Sandbox, SandboxProvider, SandboxSpec, SpecRefused

from agentenv_testing.services import free_port


def _refusal(call: Callable[[], object]) -> SpecRefused:
    """The SpecRefused `call` raised; AssertionError when it raised nothing."""
    try:
        call()
    except SpecRefused as exc:
        return exc
    raise AssertionError(f"expected SpecRefused from {call!r}, but the spec was accepted")


def _poll(url: str, seconds: float, *, serving: bool) -> bytes | None:
    """Fetch `url` until it answers (`serving`) or stops answering; the last body, None when not answering."""
    deadline, body = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:  # the server answers (404 …) unless a proxy in front says 5xx
            body = exc.read() if exc.code < 500 else None
        except OSError:  # refused, reset, timed out
            body = None
        if (body is not None) == serving:
            return body
        time.sleep(0.2)
    return body


LIMITS: dict[str, Any] = {"cpu": 1.0, "memory_mb": 256, "disk_mb": 512}


class SandboxProviderConformance:
    """The `SandboxProvider` / `Sandbox` contract: exec, env, files, ports, teardown, labels, refusals."""

    supports_vm: bool = False
    supports_network_allowlist: bool = False
    supports_ports: bool = True
    supports_limits: bool = False
    limits: frozenset[str] | None = None
    """The resource limits it enforces, of cpu, memory_mb and disk_mb (None: all three with `supports_limits`,
    else none); the others must be refused."""
    network_modes: frozenset[str] = frozenset()
    """Which of the `loopback` and `none` network modes it enforces; the others must be refused."""
    image: str | None = None
    mode: str = "container"
    """The mode the kit's sandboxes are made in (`vm` for a provider that offers only VMs)."""
    """Image every test sandbox is created from (None for providers that take none)."""
    serve_command: str = "python3 -m http.server {port} --bind 0.0.0.0 >/dev/null 2>&1 &"
    """Shell command that starts a background HTTP server on `{port}`, serving the working folder."""
    ready_seconds: float = 60.0
    """How long the port test waits for the server to answer, then to go (a limit, not a timing check)."""
    inside_url: str = "http://127.0.0.1:{port}/kit.txt"
    """Where the port test's server answers inside the sandbox (a provider that remaps ports says where)."""
    probe_command: str = (
        "python3 -c \"import sys, time, urllib.request\n"
        "end = time.monotonic() + float(sys.argv[2])\n"
        "while True:\n"
        "    try:\n"
        "        sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=5).read() else 1)\n"
        "    except OSError:\n"
        "        if time.monotonic() > end: sys.exit(3)\n"
        "        time.sleep(0.2)\" {url} {seconds}"
    )
    """Shell command run inside the sandbox when the port test fails, waiting (up to `{seconds}`) for `{url}`: it
    tells a server that never ran apart from a port the host cannot reach. Exit 127 (no python3): no hint."""

    def make_provider(self, tmp_path: Path) -> SandboxProvider:
        """Return the provider under test; override in the subclass."""
        raise NotImplementedError(f"{type(self).__name__} must define make_provider(self, tmp_path)")

    def teardown_method(self, method: object) -> None:
        made: list[Sandbox] = self.__dict__.pop("_made", [])
        for sandbox in made:
            sandbox.teardown()

    def create(self, provider: SandboxProvider, run: str | None = None, **fields: Any) -> Sandbox:
        """A sandbox from `fields` labelled with run id `run` (fresh when None), torn down after the test."""
        labels = {"agentenv.run": run or self.new_run_id(), **fields.pop("labels", {})}
        fields.setdefault("mode", self.mode)
        sandbox = provider.create(SandboxSpec(image=self.image, labels=labels, **fields))
        self.__dict__.setdefault("_made", []).append(sandbox)
        return sandbox

    def new_run_id(self) -> str:
        return f"kit-{secrets.token_hex(6)}"

    def test_create_and_status(self, tmp_path: Path) -> None:
        provider = self.make_provider(tmp_path)
        assert isinstance(provider, SandboxProvider) and provider.name
        usable, reason = provider.available()
        assert usable, f"provider {provider.name!r} is not available here: {reason}"
        assert ("vm" in provider.modes) == self.supports_vm
        run = self.new_run_id()
        sandbox = self.create(provider, run)
        assert isinstance(sandbox, Sandbox)
        assert isinstance(sandbox.id, str) and sandbox.id
        assert sandbox.labels.get("agentenv.run") == run
        assert sandbox.status() == "running"

    def test_exec_output_and_exit_codes(self, tmp_path: Path) -> None:
        sandbox = self.create(self.make_provider(tmp_path))
        ok = sandbox.exec(["echo", "hello"])
        assert (ok.exit_code, ok.stdout) == (0, "hello\n")
        mixed = sandbox.exec(["sh", "-c", "echo out; echo err >&2; exit 3"])
        assert (mixed.exit_code, mixed.stdout, mixed.stderr) == (3, "out\n", "err\n")
        assert sandbox.exec(["false"]).exit_code == 1
        assert sandbox.exec(["sh", "-c", "exit 0"], timeout=60).exit_code == 0

    def test_env_reaches_the_command(self, tmp_path: Path) -> None:
        value = "a b=c 'q' ✓"
        sandbox = self.create(self.make_provider(tmp_path), env={"AGENTENV_KIT_VALUE": value, "KIT_N": "7"})
        result = sandbox.exec(["sh", "-c", 'printf "%s|%s" "$AGENTENV_KIT_VALUE" "$KIT_N"'])
        assert (result.exit_code, result.stdout) == (0, f"{value}|7")

    def test_files_round_trip(self, tmp_path: Path) -> None:
        sandbox = self.create(self.make_provider(tmp_path))
        blob = bytes(range(256)) * 64
        sandbox.put_file("kit/deep/blob.bin", blob)
        sandbox.put_file("empty.bin", b"")
        assert sandbox.get_file("kit/deep/blob.bin") == blob
        assert sandbox.get_file("empty.bin") == b""
        sandbox.put_file("note.txt", b"first")
        sandbox.put_file("note.txt", b"from the kit\n")
        assert sandbox.exec(["cat", "note.txt"]).stdout == "from the kit\n"
        assert sandbox.exec(["sh", "-c", "printf made > made.txt"]).exit_code == 0
        assert sandbox.get_file("made.txt") == b"made"

    def test_port_is_reachable_until_teardown(self, tmp_path: Path) -> None:
        if not self.supports_ports:
            return
        port = free_port()
        sandbox = self.create(self.make_provider(tmp_path), ports=[port])
        sandbox.put_file("kit.txt", b"served by the sandbox")
        started = sandbox.exec(["sh", "-c", self.serve_command.format(port=port)], timeout=60)
        assert started.exit_code == 0, started.stderr
        url = sandbox.url(port).rstrip("/") + "/kit.txt"
        if _poll(url, self.ready_seconds, serving=True) != b"served by the sandbox":
            raise AssertionError(self._port_hint(sandbox, port, url))
        sandbox.teardown()
        assert _poll(url, self.ready_seconds, serving=False) is None, f"{url} still answers after teardown"

    def _port_hint(self, sandbox: Sandbox, port: int, url: str) -> str:
        """Why `url` never answered: the server did not run inside the sandbox, or the host cannot reach it."""
        inside = self.inside_url.format(port=port)
        probe = sandbox.exec(["sh", "-c", self.probe_command.format(url=inside, seconds=5)], timeout=120)
        head = f"{url} (what `Sandbox.url({port})` returned) never answered within ready_seconds={self.ready_seconds}"
        if probe.exit_code == 0:
            return (
                f"{head}, but the server answers inside the sandbox at {inside}: publish the spec's `ports` to the "
                "host and return that address from `url()` (raise `ready_seconds` for a provider with slow tunnels)"
            )
        if probe.exit_code == 127:
            return f"{head}; the kit could not look inside the sandbox (no python3 there: set `probe_command`)"
        return (
            f"{head}, and the server `serve_command` starts did not answer inside the sandbox at {inside} either: a "
            "sandbox must keep what a command starts in the background running until teardown, and the image needs "
            "python3 (or set `serve_command`; a provider that remaps ports sets `inside_url`)"
        )

    def test_teardown_is_final_and_idempotent(self, tmp_path: Path) -> None:
        provider = self.make_provider(tmp_path)
        run = self.new_run_id()
        sandbox = self.create(provider, run)
        sandbox.teardown()
        assert sandbox.status() != "running"
        sandbox.teardown()
        assert sandbox.status() != "running"
        assert all(s.status() != "running" for s in provider.list({"agentenv.run": run}))

    def test_list_finds_sandboxes_by_labels(self, tmp_path: Path) -> None:
        provider = self.make_provider(tmp_path)
        run_a, run_b = self.new_run_id(), self.new_run_id()
        a = self.create(provider, run_a)
        b = self.create(provider, run_b, labels={"agentenv.kit": "b"})

        def ids(labels: dict[str, str]) -> set[str]:
            found = provider.list(labels)
            assert all(isinstance(s, Sandbox) for s in found)
            return {s.id for s in found}

        assert a.id in ids({"agentenv.run": run_a}) and b.id not in ids({"agentenv.run": run_a})
        assert ids({"agentenv.run": run_b, "agentenv.kit": "b"}) == {b.id}
        assert ids({"agentenv.run": run_a, "agentenv.kit": "b"}) == set(), "every label must match"
        assert ids({"agentenv.run": self.new_run_id()}) == set()
        listed = next(s for s in provider.list({"agentenv.run": run_b}) if s.id == b.id)
        assert listed.labels.get("agentenv.kit") == "b"

    def test_refuses_specs_it_cannot_honour(self, tmp_path: Path) -> None:
        provider = self.make_provider(tmp_path)
        cases: list[tuple[str, dict[str, Any]]] = []
        if not self.supports_vm:
            cases.append(("mode", {"mode": "vm"}))
        if not self.supports_network_allowlist:
            cases.append(("network", {"network": NetworkPolicy(mode="allowlist", allow=["example.com"])}))
        enforced = self.limits if self.limits is not None else frozenset(LIMITS if self.supports_limits else ())
        cases += [(field, {field: value}) for field, value in LIMITS.items() if field not in enforced]
        for mode in ("loopback", "none"):
            if mode not in self.network_modes:
                cases.append(("network", {"network": NetworkPolicy(mode=mode)}))
        run = self.new_run_id()
        for field, spec in cases:
            err = _refusal(partial(self.create, provider, run, **spec))
            assert field in str(err), f"refusal of {field} does not name it: {err}"
        assert provider.list({"agentenv.run": run}) == [], "a refused spec must leave nothing behind"
