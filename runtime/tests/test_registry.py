"""`agentenv registry push|pull|list` and `agentenv run registry://NAME@VERSION`, from two machines (config dirs
with their own caches) that share the same stores."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime.registry import RegistryError, pack, split_ref

Cli = Callable[..., tuple[int, Any, str]]


def machine(root: Path, shared: Path) -> Cli:
    """A config dir whose stores are the shared folder's, with its own registry cache."""
    (root / ".agentenv").mkdir(parents=True)
    (root / ".agentenv" / "config.toml").write_text(
        f'[plugins.agentenv-store-local.document]\npath = "{shared / "records.sqlite3"}"\n'
        f'[plugins.agentenv-store-local.object]\nroot = "{shared / "objects"}"\n'
    )

    def run(*args: str) -> tuple[int, Any, str]:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "AGENTENV_CACHE": str(root / "cache")}
        done = subprocess.run(
            [sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, cwd=root, env=env, timeout=300
        )
        data = json.loads(done.stdout) if "--json" in args and done.returncode == 0 else done.stdout
        return done.returncode, data, done.stderr

    return run


@pytest.fixture
def machines(tmp_path: Path) -> tuple[Cli, Cli]:
    return machine(tmp_path / "laptop", tmp_path / "shared"), machine(tmp_path / "cluster", tmp_path / "shared")


def test_push_on_one_machine_pull_and_run_on_another(machines: tuple[Cli, Cli], tmp_path: Path) -> None:
    laptop, cluster = machines
    code, pushed, stderr = laptop("registry", "push", "bundle", "support-refund", "--version", "1.0.0", "--json")
    assert code == 0, stderr
    assert pushed["new"] is True and pushed["name"] == "support-refund"
    code, again, _ = laptop("registry", "push", "bundle", "support-refund", "--version", "1.0.0", "--json")
    assert code == 0 and again["new"] is False and again["digest"] == pushed["digest"]

    code, listed, stderr = cluster("registry", "list", "--json")
    assert code == 0, stderr
    assert [(e["kind"], e["name"], e["version"], e["digest"]) for e in listed] == [
        ("bundle", "support-refund", "1.0.0", pushed["digest"])
    ]

    by_version = tmp_path / "by-version"
    by_hash = tmp_path / "by-hash"
    code, pulled, stderr = cluster(
        "registry", "pull", "bundle", "support-refund@1.0.0", "--out", str(by_version), "--json"
    )
    assert code == 0, stderr
    assert pulled["path"] == str(by_version) and pulled["digest"] == pushed["digest"]
    code, _, stderr = cluster("registry", "pull", "bundle", f"support-refund@{pushed['digest']}", "--out", str(by_hash))
    assert code == 0, stderr
    assert pack(by_version) == pack(by_hash)
    assert (by_version / "bundle.toml").is_file() and (by_version / "tasks" / "resolve-refund.toml").is_file()

    code, result, stderr = cluster("run", "registry://support-refund@1.0.0", "--json")
    assert code == 0, stderr
    assert result["tasks"][0]["score"] == 1.0
    cached = tmp_path / "cluster" / "cache" / "registry" / "sha256" / pushed["digest"][7:]
    assert (cached / "bundle.toml").is_file(), "run registry:// unpacks into the cache by content hash"


def test_versions_are_immutable(machines: tuple[Cli, Cli], tmp_path: Path) -> None:
    laptop, _ = machines
    bundle = tmp_path / "mine"
    shutil.copytree(Path(__file__).parent / "fixtures" / "registry-bundle", bundle)
    code, first, stderr = laptop("registry", "push", "bundle", str(bundle), "--json")
    assert code == 0, stderr
    assert first["version"] == "0.3.0" and first["name"] == "registry-demo"
    (bundle / "tasks" / "extra.toml").write_text('name = "extra"\n')
    code, _, stderr = laptop("registry", "push", "bundle", str(bundle))
    assert code == 1
    assert "already in the registry with other content" in stderr and "push a new version" in stderr
    assert "Traceback" not in stderr
    code, second, stderr = laptop("registry", "push", "bundle", str(bundle), "--version", "0.4.0", "--json")
    assert code == 0 and second["digest"] != first["digest"]


def test_other_kinds_round_trip(machines: tuple[Cli, Cli], tmp_path: Path) -> None:
    laptop, cluster = machines
    task = Path(__file__).parent / "fixtures" / "registry-bundle" / "tasks" / "demo.toml"
    code, pushed, stderr = laptop("registry", "push", "task", str(task), "--version", "1", "--json")
    assert code == 0, stderr
    assert pushed["name"] == "demo"
    code, pulled, stderr = cluster("registry", "pull", "task", "demo@1", "--json")
    assert code == 0, stderr
    assert (Path(pulled["path"]) / "demo.toml").read_bytes() == task.read_bytes()
    code, listed, _ = cluster("registry", "list", "task", "--json")
    assert [e["name"] for e in listed] == ["demo"]


def test_missing_items_and_bad_refs_are_one_line_errors(machines: tuple[Cli, Cli]) -> None:
    laptop, _ = machines
    code, _, stderr = laptop("registry", "pull", "bundle", "nope@1.0")
    assert code == 1 and "no bundle 'nope@1.0' in the registry" in stderr and "Traceback" not in stderr
    code, _, stderr = laptop("registry", "pull", "bundle", "nope")
    assert code == 1 and "NAME@VERSION" in stderr
    code, _, stderr = laptop("registry", "pull", "widget", "x@1")
    assert code == 1 and "unknown registry kind 'widget'" in stderr
    code, _, stderr = laptop("run", "registry://nope@2")
    assert code != 0 and "no bundle 'nope@2' in the registry" in stderr and "Traceback" not in stderr


def test_pack_is_reproducible(tmp_path: Path) -> None:
    source = Path(__file__).parent / "fixtures" / "registry-bundle"
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)  # new inodes and times, same files
    (copy / "__pycache__").mkdir()
    (copy / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert pack(source) == pack(copy)
    (copy / "tasks" / "demo.toml").write_text("changed\n")
    assert pack(source) != pack(copy)


def test_split_ref() -> None:
    assert split_ref("a@1.0") == ("a", "1.0")
    assert split_ref("a@sha256:" + "0" * 64) == ("a", "sha256:" + "0" * 64)
    with pytest.raises(RegistryError, match="NAME@VERSION"):
        split_ref("a")
