"""The project is the folder whose `.agentenv/config.toml` is in use (found by walking up, as the config is): relative
store paths are taken against it, so `runs list` from a subfolder sees the project's runs; and commands that only
read (listings, shows, dry runs) never create `.agentenv/data` where they happen to run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv_testing.installs import CliResult

Cli = Callable[..., CliResult]


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_runs_list_from_a_subfolder_sees_the_projects_runs(
    tmp_path: Path, agentenv: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, sub = tmp_path / "project", tmp_path / "project" / "notes" / "day-one"
    sub.mkdir(parents=True)
    (project / ".agentenv").mkdir()
    (project / ".agentenv" / "config.toml").write_text('[plugins.agentenv-store-local.object]\nroot = "blobs"\n')
    monkeypatch.chdir(project)
    ran = agentenv("run", "hello", "--json")
    assert ran.returncode == 0, ran
    run_id = ran.json()["tasks"][0]["run_id"]
    assert (project / ".agentenv" / "data" / "records.sqlite3").is_file()  # the default path, in the project
    assert (project / "blobs" / "runs" / run_id).is_dir()  # a relative path from the config, in the project
    monkeypatch.chdir(sub)
    listed = agentenv("runs", "list", "--json")
    assert [r["id"] for r in listed.json()] == [run_id], listed  # it listed nothing
    assert agentenv("runs", "trajectory", run_id).returncode == 0  # the objects are found from here too
    assert files_under(tmp_path / "project" / "notes") == ["day-one"], "nothing written where the command ran"


@pytest.mark.parametrize(
    "args",
    [("runs", "list"), ("runs", "show", "r1"), ("registry", "list"), ("run", "hello", "--dry-run")],
    ids=lambda args: " ".join(args),
)
def test_read_only_commands_create_nothing(
    args: tuple[str, ...], tmp_path: Path, agentenv: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = agentenv(*args)
    assert "Traceback" not in result.stderr, result
    assert files_under(tmp_path) == [], f"agentenv {' '.join(args)} wrote {files_under(tmp_path)}"
