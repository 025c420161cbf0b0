"""What the `e2b` provider sends to E2B and how it maps E2B's answers, through the real SDK and the stand-in."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentenv.contracts import NetworkPolicy, SandboxSpec, SpecRefused
from agentenv_e2b.provider import E2BProvider, E2BSandbox
from agentenv_e2b.settings import MANAGED
from agentenv_e2b_standin import E2BStandIn  # loaded by conftest.py


@pytest.fixture
def provider(standin: E2BStandIn) -> E2BProvider:
    return E2BProvider(standin.settings())


@pytest.fixture
def made(provider: E2BProvider) -> Iterator[list[E2BSandbox]]:
    """Sandboxes a test creates, killed afterwards even when the test fails."""
    sandboxes: list[E2BSandbox] = []
    yield sandboxes
    for sandbox in sandboxes:
        sandbox.teardown()


def _create(provider: E2BProvider, made: list[E2BSandbox], **fields: object) -> E2BSandbox:
    labels = {"agentenv.run": "test-run", **fields.pop("labels", {})}  # type: ignore[dict-item]
    sandbox = provider.create(SandboxSpec(labels=labels, **fields))  # type: ignore[arg-type]
    made.append(sandbox)
    return sandbox


def test_create_sends_template_timeout_envs_and_labels(provider, made, standin):
    sandbox = _create(provider, made, env={"A": "1"}, ttl_seconds=120, labels={"team": "x"}, mode="vm")
    body = standin.created[-1]
    assert body["templateID"] == "base" and body["timeout"] == 120
    assert body["envVars"] == {"A": "1"}
    assert body["metadata"] == {"agentenv.run": "test-run", "team": "x", MANAGED: "true"}
    assert "network" not in body
    assert sandbox.labels["team"] == "x" and sandbox.status() == "running"


def test_default_ttl_setting_is_used(standin, made):
    provider = E2BProvider({**standin.settings(), "default_ttl_seconds": 600})
    _create(provider, made)
    assert standin.created[-1]["timeout"] == 600


def test_allowlist_becomes_allow_out_with_deny_all(provider, made, standin):
    policy = NetworkPolicy(mode="allowlist", allow=["pypi.org", "*.example.com", "10.0.0.0/8"])
    _create(provider, made, network=policy)
    assert standin.created[-1]["network"] == {
        "allowOut": ["pypi.org", "*.example.com", "10.0.0.0/8"],
        "denyOut": ["0.0.0.0/0"],
    }


def test_loopback_denies_all_egress_and_public_traffic(provider, made, standin):
    _create(provider, made, network=NetworkPolicy(mode="loopback"))
    assert standin.created[-1]["network"] == {"denyOut": ["0.0.0.0/0"], "allowPublicTraffic": False}


def test_refusals_name_the_field_and_leave_nothing(provider, standin):
    before = len(standin.created)
    cases = {
        "network.mode='none'": {"network": NetworkPolicy(mode="none")},
        "ports=[8000]": {"network": NetworkPolicy(mode="loopback"), "ports": [8000]},
        "cpu": {"cpu": 2.0},
        "memory_mb": {"memory_mb": 1024},
        "disk_mb": {"disk_mb": 4096},
        "network.allow": {"network": NetworkPolicy(mode="allowlist", allow=["https://pypi.org/simple"])},
    }
    for field, spec in cases.items():
        with pytest.raises(SpecRefused, match=re.escape(field)) as info:
            provider.create(SandboxSpec(**spec))
        if not field.startswith(("network", "ports")):
            assert "template" in str(info.value)
    assert len(standin.created) == before


def test_unknown_template_is_refused_naming_image(provider, standin):
    with pytest.raises(SpecRefused, match=r"image='python:3\.11-slim'"):
        provider.create(SandboxSpec(image="python:3.11-slim", labels={"agentenv.run": "nope"}))
    assert provider.list({"agentenv.run": "nope"}) == []


def test_exec_timeout_kills_the_command_and_reports_124(provider, made, standin):
    sandbox = _create(provider, made)
    result = sandbox.exec(["sh", "-c", "echo started; sleep 30"], timeout=1)
    assert result.exit_code == 124
    assert result.stdout == "started\n"
    assert "timed out after 1s" in result.stderr
    assert standin.signals and standin.signals[-1][:1] == (sandbox.id,) and standin.signals[-1][2] == "SIGKILL"
    assert sandbox.exec(["echo", "still usable"]).stdout == "still usable\n"


def test_exec_quotes_arguments_and_reports_missing_commands(provider, made):
    sandbox = _create(provider, made)
    assert sandbox.exec(["printf", "%s|", "a b", "$HOME", "'q'"]).stdout == "a b|$HOME|'q'|"
    assert sandbox.exec(["definitely-not-a-command-xyz"]).exit_code == 127
    with pytest.raises(ValueError, match="non-empty list"):
        sandbox.exec([])


def test_missing_file_raises_file_not_found(provider, made):
    sandbox = _create(provider, made)
    with pytest.raises(FileNotFoundError, match=r"nothing\.txt"):
        sandbox.get_file("nothing.txt")


def test_absolute_paths_and_workdir_setting(standin, made):
    provider = E2BProvider({**standin.settings(), "workdir": "/srv/app"})
    sandbox = _create(provider, made)
    assert sandbox.exec(["pwd"]).stdout.endswith("/srv/app\n")  # made by create
    sandbox.put_file("rel.txt", b"relative")
    sandbox.put_file("/home/user/abs.txt", b"absolute")
    assert sandbox.get_file("/srv/app/rel.txt") == b"relative"
    assert sandbox.get_file("/home/user/abs.txt") == b"absolute"


def test_spec_command_keeps_running_in_the_background(provider, made):
    sandbox = _create(provider, made, command=["sh", "-c", "sleep 0.2; echo up > started.txt; sleep 30"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            assert sandbox.get_file("started.txt") == b"up\n"
            break
        except FileNotFoundError:
            time.sleep(0.1)
    else:
        raise AssertionError("the spec's command never ran")


def test_listed_sandbox_connects_on_first_use_and_tears_down(provider, made, standin):
    from e2b.exceptions import SandboxNotRunningException

    sandbox = _create(provider, made, labels={"agentenv.kit": "listed"})
    sandbox.put_file("hello.txt", b"hi")
    other = E2BProvider(standin.settings())  # e.g. a later process pruning a crashed run
    (listed,) = other.list({"agentenv.kit": "listed"})
    assert listed.id == sandbox.id and listed.labels["agentenv.kit"] == "listed"
    assert listed.exec(["cat", "hello.txt"]).stdout == "hi"
    assert other.prune({"agentenv.kit": "listed"}) == [sandbox.id]
    assert sandbox.status() == "missing" and listed.status() == "missing"
    with pytest.raises(SandboxNotRunningException):  # killed elsewhere: the SDK says so
        sandbox.exec(["true"])
    sandbox.teardown()  # already gone: harmless
    with pytest.raises(RuntimeError, match="torn down"):
        sandbox.exec(["true"])


def test_sandbox_past_its_ttl_is_stopped(provider, made):
    sandbox = _create(provider, made, ttl_seconds=1)
    assert sandbox.status() == "running"
    time.sleep(1.3)  # the stand-in, like E2B, kills a sandbox whose timeout has passed
    assert sandbox.status() == "stopped"


def test_list_only_finds_managed_sandboxes(provider, standin, made):
    from e2b import Sandbox

    params = provider.api_params()
    foreign = Sandbox.create("base", metadata={"agentenv.run": "foreign"}, **params)
    try:
        assert provider.list({"agentenv.run": "foreign"}) == []
    finally:
        foreign.kill()


def test_available_without_an_api_key(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("E2B_API_KEY", raising=False)
    usable, reason = E2BProvider({}).available()
    assert not usable and "E2B_API_KEY" in reason
    monkeypatch.setenv("E2B_API_KEY", "e2b_x")
    assert E2BProvider({}).available() == (True, "")
    assert E2BProvider({"api_key": "env:MY_E2B_KEY"}).api_key() is None


def test_wrong_api_key_is_reported(standin):
    from e2b.exceptions import AuthenticationException

    provider = E2BProvider({**standin.settings(), "api_key": "wrong"})
    with pytest.raises(AuthenticationException, match="401"):
        provider.create(SandboxSpec())


def test_unknown_setting_is_rejected(tmp_path: Path):
    with pytest.raises(ValueError, match="templat"):
        E2BProvider({"templat": "base"})
