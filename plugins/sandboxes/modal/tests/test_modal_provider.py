"""What the providers ask of Modal (as the stand-in records it), and behaviour beyond the shared kit."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from agentenv.contracts import NetworkPolicy, SandboxSpec, SpecRefused
from agentenv_modal.provider import PROVIDER_TAG, ModalProvider, ModalSandbox, ModalVmProvider
from modal_proto import api_pb2
from standin.server import ModalStandin


@pytest.fixture
def made(modal_standin: ModalStandin) -> Iterator[list[ModalSandbox]]:
    """Sandboxes a test creates, torn down afterwards."""
    sandboxes: list[ModalSandbox] = []
    yield sandboxes
    for sandbox in sandboxes:
        sandbox.teardown()
    assert modal_standin.state.unimplemented == [], "the SDK called RPCs the stand-in does not implement"


def _run() -> dict[str, str]:
    return {"agentenv.run": f"test-{secrets.token_hex(4)}"}


def _create(made: list[ModalSandbox], provider: ModalProvider, **fields: Any) -> ModalSandbox:
    sandbox = provider.create(SandboxSpec(labels=fields.pop("labels", _run()), **fields))
    made.append(sandbox)
    return sandbox


def _until(check: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def test_spec_maps_onto_sandbox_create(modal_standin: ModalStandin, made: list[ModalSandbox]) -> None:
    labels = {**_run(), "team": "evals"}
    sandbox = _create(
        made,
        ModalProvider({}),
        image="python:3.11-slim",
        command=["sleep", "60"],
        env={"API_KEY": "s3cret"},
        cpu=0.5,
        memory_mb=256,
        ports=[8080],
        ttl_seconds=120,
        network=NetworkPolicy(mode="allowlist", allow=["10.1.2.3", "192.168.0.0/16", "PyPI.org", "*.github.com"]),
        labels=labels,
    )
    assert sandbox.labels == labels
    request = modal_standin.state.creates[-1]
    definition = request.definition
    assert list(definition.entrypoint_args) == ["sleep", "60"]
    assert definition.workdir == "/root"
    assert definition.timeout_secs == 120
    assert (definition.resources.milli_cpu, definition.resources.milli_cpu_max) == (500, 500)
    assert (definition.resources.memory_mb, definition.resources.memory_mb_max) == (256, 256)
    assert [(p.port, p.unencrypted) for p in definition.open_ports.ports] == [(8080, False)]
    access = definition.network_access
    assert access.network_access_type == api_pb2.NetworkAccess.NetworkAccessType.ALLOWLIST
    assert list(access.allowed_cidrs) == ["10.1.2.3/32", "192.168.0.0/16"]
    assert list(access.allowed_domains) == ["pypi.org", "*.github.com"]
    assert not definition.HasField("runtime") or definition.runtime == ""
    assert {t.tag_name: t.tag_value for t in request.tags} == {**labels, PROVIDER_TAG: "modal"}
    sent_env = {k: v for s in request.secret_sources for k, v in s.env.contents.items()}
    assert sent_env == {"API_KEY": "s3cret"}
    assert "s3cret" not in str(modal_standin.state.images[-1])
    image = modal_standin.state.images[-1].image
    assert any("FROM python:3.11-slim" in c for c in image.dockerfile_commands)
    assert sandbox.url(8080) == "https://127.0.0.1:8080"  # encrypted tunnel (the default)


def test_modal_vm_asks_for_the_vm_runtime(modal_standin: ModalStandin, made: list[ModalSandbox]) -> None:
    sandbox = _create(made, ModalVmProvider({}), mode="vm")
    request = modal_standin.state.creates[-1]
    assert request.definition.runtime == "vm"
    assert {t.tag_name: t.tag_value for t in request.tags}[PROVIDER_TAG] == "modal-vm"
    assert sandbox.exec(["echo", "in a vm"]).stdout == "in a vm\n"


def test_defaults_without_image_ttl_or_network(modal_standin: ModalStandin, made: list[ModalSandbox]) -> None:
    _create(made, ModalProvider({"default_ttl_seconds": 900}))
    definition = modal_standin.state.creates[-1].definition
    assert definition.timeout_secs == 900
    assert definition.network_access.network_access_type == api_pb2.NetworkAccess.NetworkAccessType.OPEN
    assert list(definition.entrypoint_args) == ["sleep", "900"]  # not the image's CMD
    image = modal_standin.state.images[-1].image
    assert any("-slim-" in c for c in image.dockerfile_commands), image.dockerfile_commands  # debian_slim


def test_empty_allowlist_blocks_egress_but_keeps_tunnels(modal_standin: ModalStandin, made: list[ModalSandbox]) -> None:
    _create(made, ModalProvider({}), network=NetworkPolicy(mode="allowlist", allow=[]), ports=[9000])
    definition = modal_standin.state.creates[-1].definition
    access = definition.network_access
    assert access.network_access_type == api_pb2.NetworkAccess.NetworkAccessType.ALLOWLIST
    assert list(access.allowed_cidrs) == [] and list(access.allowed_domains) == []
    assert [p.port for p in definition.open_ports.ports] == [9000]


def test_loopback_blocks_the_network(modal_standin: ModalStandin, made: list[ModalSandbox]) -> None:
    _create(made, ModalProvider({}), network=NetworkPolicy(mode="loopback"))
    definition = modal_standin.state.creates[-1].definition
    assert definition.network_access.network_access_type == api_pb2.NetworkAccess.NetworkAccessType.BLOCKED
    assert list(definition.open_ports.ports) == []


@pytest.mark.parametrize(
    ("provider", "fields", "named"),
    [
        (ModalProvider, {"network": NetworkPolicy(mode="none")}, "network.mode='none'"),
        (ModalProvider, {"network": NetworkPolicy(mode="loopback"), "ports": [9000]}, "ports=[9000]"),
        (ModalProvider, {"mode": "vm"}, "mode='vm'"),
        (ModalProvider, {"disk_mb": 512}, "disk_mb"),
        (ModalVmProvider, {"disk_mb": 512}, "disk_mb"),
        (ModalProvider, {"network": NetworkPolicy(mode="allowlist", allow=["example.com:443"])}, "network.allow"),
        (ModalProvider, {"network": NetworkPolicy(mode="allowlist", allow=["https://x.org/a"])}, "network.allow"),
        (ModalProvider, {"labels": {PROVIDER_TAG: "mine"}}, PROVIDER_TAG),
        (ModalProvider, {"env": {"BAD-NAME": "1"}}, "env['BAD-NAME']"),
        (ModalProvider, {"cpu": 0.0}, "CPU request"),  # refused by the SDK itself
    ],
)
def test_refusals_name_the_field_and_create_nothing(
    modal_standin: ModalStandin, provider: type[ModalProvider], fields: dict[str, Any], named: str
) -> None:
    before = len(modal_standin.state.creates)
    with pytest.raises(SpecRefused) as refused:
        provider({}).create(SandboxSpec(labels=fields.pop("labels", _run()), **fields))
    assert named in str(refused.value)
    assert len(modal_standin.state.creates) == before


def test_exec_timeout_reports_124(made: list[ModalSandbox]) -> None:
    sandbox = _create(made, ModalProvider({}))
    result = sandbox.exec(["sh", "-c", "echo begun; sleep 30"], timeout=1)
    assert result.exit_code == 124
    assert result.stdout == "begun\n"
    assert "timed out" in result.stderr
    assert sandbox.exec(["echo", "still usable"]).stdout == "still usable\n"


def test_exec_edge_cases(made: list[ModalSandbox]) -> None:
    sandbox = _create(made, ModalProvider({}))
    assert sandbox.exec(["definitely-not-a-command-xyz"]).exit_code == 127
    assert sandbox.exec(["sh", "-c", "pwd"]).stdout.rstrip().endswith("/root")
    binary = sandbox.exec(["sh", "-c", "printf '\\377\\376ok'"])
    assert binary.stdout.endswith("ok") and "\ufffd" in binary.stdout
    with pytest.raises(ValueError, match="non-empty list"):
        sandbox.exec([])


def test_files_by_absolute_and_relative_paths(made: list[ModalSandbox]) -> None:
    sandbox = _create(made, ModalProvider({}))
    sandbox.put_file("/root/abs.txt", b"absolute")
    assert sandbox.get_file("abs.txt") == b"absolute"
    sandbox.put_file("/tmp/elsewhere/x.bin", b"\x00\x01")
    assert sandbox.get_file("/tmp/elsewhere/x.bin") == b"\x00\x01"
    with pytest.raises(FileNotFoundError, match=r"nope\.txt"):
        sandbox.get_file("nope.txt")
    with pytest.raises(ValueError, match=r"'\.\.'"):
        sandbox.put_file("../escape.txt", b"x")
    with pytest.raises(ValueError, match="names a folder"):
        sandbox.get_file(".")


def test_entrypoint_command_runs_and_its_exit_stops_the_sandbox(made: list[ModalSandbox]) -> None:
    provider = ModalProvider({})
    server = _create(made, provider, command=["sh", "-c", "echo up > started.txt; sleep 60"])
    assert _until(lambda: server.exec(["cat", "started.txt"]).stdout == "up\n")
    assert server.status() == "running"
    quick = _create(made, provider, command=["true"])
    assert _until(lambda: quick.status() != "running")
    assert quick.status() == "stopped"


def test_ttl_expiry_is_stopped_not_missing(made: list[ModalSandbox]) -> None:
    sandbox = _create(made, ModalProvider({}), ttl_seconds=2)
    assert sandbox.exec(["true"]).exit_code == 0
    assert _until(lambda: sandbox.status() != "running")
    assert sandbox.status() == "stopped"
    with pytest.raises(RuntimeError, match=r"is stopped \(past its ttl"):
        sandbox.exec(["true"])
    with pytest.raises(RuntimeError, match="is stopped"):
        sandbox.get_file("a.txt")


def test_teardown_then_use_is_a_clear_error(made: list[ModalSandbox]) -> None:
    sandbox = _create(made, ModalProvider({}))
    sandbox.teardown()
    assert sandbox.status() == "missing"
    with pytest.raises(RuntimeError, match="torn down"):
        sandbox.exec(["true"])
    with pytest.raises(RuntimeError, match="torn down"):
        sandbox.put_file("a.txt", b"")


def test_url_of_an_undeclared_port_is_refused(made: list[ModalSandbox]) -> None:
    sandbox = _create(made, ModalProvider({"tunnels": "unencrypted"}), ports=[8123])
    assert sandbox.url(8123) == "http://127.0.0.1:8123"
    with pytest.raises(ValueError, match="port 9999 has no tunnel"):
        sandbox.url(9999)


def test_list_is_per_provider_and_prune_removes_leftovers(made: list[ModalSandbox]) -> None:
    labels = _run()
    container = _create(made, ModalProvider({}), labels=labels)
    vm = _create(made, ModalVmProvider({}), labels=labels)
    assert [s.id for s in ModalProvider({}).list(labels)] == [container.id]
    assert [s.id for s in ModalVmProvider({}).list(labels)] == [vm.id]
    listed = ModalProvider({}).list(labels)[0]
    assert listed.labels == labels and PROVIDER_TAG not in listed.labels
    assert ModalProvider({}).prune(labels) == [container.id]
    assert container.status() == "missing"
    assert ModalProvider({}).list(labels) == []
    assert [s.id for s in ModalVmProvider({}).list(labels)] == [vm.id]


def test_sandboxes_of_another_app_are_not_listed(made: list[ModalSandbox]) -> None:
    labels = _run()
    _create(made, ModalProvider({"app_name": "agentenv-other"}), labels=labels)
    assert ModalProvider({}).list(labels) == []
    assert len(ModalProvider({"app_name": "agentenv-other"}).list(labels)) == 1


def test_available_needs_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODAL_TOKEN_ID", "")
    monkeypatch.setenv("MODAL_TOKEN_SECRET", "")
    usable, reason = ModalProvider({}).available()
    assert not usable and "MODAL_TOKEN_ID" in reason
    monkeypatch.setenv("MODAL_TOKEN_ID", "ak-x")
    monkeypatch.setenv("MODAL_TOKEN_SECRET", "as-x")
    assert ModalProvider({}).available() == (True, "")


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="absolute path"):
        ModalProvider({"workdir": "relative"})
    with pytest.raises(ValueError, match="extra"):
        ModalProvider({"no_such_setting": 1})
