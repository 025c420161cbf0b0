"""`agentenv run hf://ORG/REPO[@REV][/PATH]` with huggingface_hub against a local stand-in of the Hub's HTTP API
(no network): cached by commit, revisions and sub-folders honoured, bundles checked like any other."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentenv_testing.standins import HubStandIn

FIXTURE = Path(__file__).parent / "fixtures" / "registry-bundle"


def tree(folder: Path, under: str = "") -> dict[str, bytes]:
    return {under + p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def hub() -> Iterator[HubStandIn]:
    with HubStandIn() as standin:
        yield standin


def agentenv(cwd: Path, hub: HubStandIn, *args: str) -> tuple[int, Any, str]:
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / ".agentenv").mkdir(exist_ok=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(cwd),
        "AGENTENV_CACHE": str(cwd / "cache"),
        "HF_ENDPOINT": hub.url,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_XET": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )
    data = json.loads(done.stdout) if "--json" in args and done.returncode in (0, 1) and done.stdout else done.stdout
    return done.returncode, data, done.stderr


def test_run_a_bundle_from_the_hub_cached_by_commit(tmp_path: Path, hub: HubStandIn) -> None:
    commit = hub.publish("acme/demo-bundle", tree(FIXTURE))
    code, result, stderr = agentenv(tmp_path, hub, "run", "hf://acme/demo-bundle", "--json")
    assert code == 0, stderr
    assert result["tasks"][0]["status"] == "succeeded"
    snapshot = tmp_path / "cache" / "hf" / "model" / "acme" / "demo-bundle" / commit
    assert (snapshot / "bundle.toml").is_file(), "downloaded into the cache under its commit"

    asked = len(hub.requests)
    code, _, stderr = agentenv(tmp_path, hub, "run", f"hf://acme/demo-bundle@{commit}", "--json")
    assert code == 0, stderr
    assert len(hub.requests) == asked, "a commit already downloaded is not asked for again"


def test_revisions_and_sub_folders(tmp_path: Path, hub: HubStandIn) -> None:
    first = hub.publish("datasets-org/bundles", tree(FIXTURE, "bundles/demo/"), repo_type="dataset")
    broken = tree(FIXTURE, "bundles/demo/")
    broken["bundles/demo/bundle.toml"] = broken["bundles/demo/bundle.toml"].replace(
        b'agentenv-slack = ">=0.1,<0.2"', b'agentenv-slack = ">=9,<10"'
    )
    hub.publish("datasets-org/bundles", broken, repo_type="dataset")  # main moves on; `first` still names v1

    code, _, stderr = agentenv(tmp_path, hub, "run", "hf://datasets/datasets-org/bundles/bundles/demo", "--json")
    assert code != 0
    assert "needs agentenv-slack>=9,<10" in stderr and "agentenv plugin add" in stderr, "checked like any bundle"
    code, result, stderr = agentenv(
        tmp_path, hub, "run", f"hf://datasets/datasets-org/bundles@{first}/bundles/demo", "--json"
    )
    assert code == 0, stderr
    assert result["tasks"][0]["status"] == "succeeded"


def test_hub_errors_are_one_line(tmp_path: Path, hub: HubStandIn) -> None:
    hub.publish("acme/demo-bundle", tree(FIXTURE))
    for uri, expected in [
        ("hf://acme/missing", "no model repo 'acme/missing'"),
        ("hf://acme/demo-bundle@nope", "has no revision 'nope'"),
        ("hf://acme/demo-bundle/not/here", "no bundle.toml at not/here"),
        ("hf://just-one-part", "write hf://ORG/REPO"),
        ("hf://../../etc@x/..", "'..' is not a Hub name"),  # a HFValidationError traceback before
        ("hf://acme/demo-bundle/../..", "the path '../..' must name a folder inside the repo"),
    ]:
        code, _, stderr = agentenv(tmp_path, hub, "run", uri)
        assert code != 0, uri
        assert expected in stderr, (uri, stderr)
        assert "Traceback" not in stderr


def test_an_unreachable_hub_is_one_line_with_the_fix(tmp_path: Path) -> None:
    with HubStandIn() as gone:
        pass  # its port is closed now: the Hub cannot be reached, as with no network
    code, _, stderr = agentenv(tmp_path, gone, "run", "hf://acme/demo-bundle")
    assert code != 0
    assert "cannot reach the Hub (ConnectError" in stderr and "HF_HUB_OFFLINE=1" in stderr, stderr
    assert "Traceback" not in stderr
