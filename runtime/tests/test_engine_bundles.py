"""`agentenv run` on bundles: requirements and pins are checked first and refused with the exact fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv_testing.installs import KERNEL_VERSION, CliResult, run_python
from agentenv_testing.tasks import write_task
from engine_helpers import FIXTURE_BUNDLE, FIXTURE_DIST, FIXTURE_VERSION, setup_cli, write_bundle

Agentenv = Callable[..., CliResult]


@pytest.fixture
def cli(on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(on_path, tmp_path, monkeypatch)
    return tmp_path


@pytest.mark.parametrize(
    ("requires", "expected"),
    [
        (
            {"agentenv-kernel": ">=99"},
            [
                f"bundle 'b' needs agentenv-kernel>=99, but agentenv-kernel {KERNEL_VERSION} is installed; "
                "fix: agentenv plugin add 'agentenv-kernel>=99'"
            ],
        ),
        (
            {"agentenv-nonexistent": ">=0.1"},
            [
                "bundle 'b' needs agentenv-nonexistent>=0.1, which is not installed; "
                "fix: agentenv plugin add 'agentenv-nonexistent>=0.1'"
            ],
        ),
        (
            {FIXTURE_DIST: ">=1.0,<2", "agentenv-nonexistent": ">=0.1", "agentenv-kernel": ">=99"},
            [
                "bundle 'b' needs agentenv-nonexistent>=0.1, which is not installed; "
                "fix: agentenv plugin add 'agentenv-nonexistent>=0.1'",
                f"bundle 'b' needs agentenv-kernel>=99, but agentenv-kernel {KERNEL_VERSION} is installed; "
                "fix: agentenv plugin add 'agentenv-kernel>=99'",
            ],
        ),
    ],
    ids=["kernel-too-old", "not-installed", "all-problems-at-once"],
)
def test_bundle_requirements_are_refused_with_the_fix(
    cli: Path, agentenv: Agentenv, requires: dict[str, str], expected: list[str]
) -> None:
    folder = write_bundle(cli / "b", requires)
    for args in (("run", str(folder)), ("run", str(folder), "--dry-run")):
        result = agentenv(*args)
        assert result.returncode == 2, result
        assert result.stderr == "error: " + "\n".join(expected) + "\n"
        assert result.stdout == ""
    assert agentenv("runs", "list", "--json").json() == []


def test_bundle_with_its_requirements_met_runs(cli: Path, agentenv: Agentenv) -> None:
    folder = write_bundle(cli / "b", {FIXTURE_DIST: ">=1.0,<2", "agentenv-kernel": f">={KERNEL_VERSION}"})
    result = agentenv("run", str(folder), "--json")
    assert result.returncode == 0, result
    assert [t["name"] for t in result.json()["tasks"]] == ["first", "second"]
    record = agentenv("runs", "show", result.json()["tasks"][0]["run_id"], "--json").json()
    assert record["bundle"] == "b"


@pytest.mark.parametrize(
    ("pins", "problem"),
    [
        ({FIXTURE_DIST: ">=2"}, f"{FIXTURE_DIST} {FIXTURE_VERSION} is installed"),
        ({"agentenv-nonexistent": ">=0.1"}, "agentenv-nonexistent is not installed"),
    ],
)
def test_task_pins_out_of_range_are_refused(cli: Path, agentenv: Agentenv, pins: dict[str, str], problem: str) -> None:
    steps = [{"id": "s", "type": "fixture_score", "score": 1}]
    path = write_task({"name": "pinned", "pins": {"plugins": pins}, "steps": steps}, cli / "t")
    ((dist, spec),) = pins.items()
    result = agentenv("run", str(path))
    assert result.returncode == 2, result
    assert result.stderr == (
        f"error: {path}: field `pins.plugins.{dist}`: the task pins {dist}{spec}, but {problem}; "
        f"fix: agentenv plugin add '{dist}{spec}'\n"
    )
    ok = write_task({"name": "ok", "pins": {"plugins": {FIXTURE_DIST: "==1.0.0"}}, "steps": steps}, cli / "t")
    assert agentenv("run", str(ok)).returncode == 0


def test_task_pin_that_is_not_a_range_names_file_and_field(cli: Path, agentenv: Agentenv) -> None:
    steps = [{"id": "s", "type": "fixture_score", "score": 1}]
    path = write_task({"name": "pinned", "pins": {"plugins": {FIXTURE_DIST: "about one"}}, "steps": steps}, cli / "t")
    result = agentenv("run", str(path))
    assert result.returncode == 2, result
    assert result.stderr == (
        f"error: {path}: field `pins.plugins.{FIXTURE_DIST}`: 'about one' is not a version range "
        '(e.g. ">=0.1,<0.2")\n'
    )


def test_a_rerun_of_an_unchanged_bundle_checks_ranges_from_the_cache(tmp_path: Path) -> None:
    probe = """
        import contextlib, io, sys
        from agentenv.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(["run", "hello", "--dry-run"]) == 0
        print("packaging" in sys.modules)
    """
    env = {"AGENTENV_CACHE_DIR": str(tmp_path / "cache")}
    assert run_python(probe, env=env).split() == ["True"], "the first run checks with packaging"
    assert run_python(probe, env=env).split() == ["False"], "the second reads the verdict from the cache"


def test_run_without_argument_lists_installed_bundles(cli: Path, agentenv: Agentenv) -> None:
    result = agentenv("run")
    assert result.returncode == 0, result
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows[0] == ["BUNDLE", "DISTRIBUTION", "STATUS", "DESCRIPTION"]
    assert [FIXTURE_BUNDLE, FIXTURE_DIST, "ready", "Two", "tiny", "tasks", "(engine", "tests)."] in rows
    assert "agentenv run NAME" in result.stdout


def test_run_without_argument_and_no_bundles(cli: Path, agentenv: Agentenv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTENV_PLUGINS", "runtime")
    result = agentenv("run")
    assert result.returncode == 0
    assert result.stdout.startswith("No bundles installed.")


def test_task_option_selects_tasks_of_an_installed_bundle(cli: Path, agentenv: Agentenv) -> None:
    every = agentenv("run", FIXTURE_BUNDLE, "--json")
    assert every.returncode == 0, every
    assert [t["name"] for t in every.json()["tasks"]] == ["first", "second"]

    one = agentenv("run", FIXTURE_BUNDLE, "--task", "second", "--json")
    assert one.returncode == 0, one
    assert [t["name"] for t in one.json()["tasks"]] == ["second"]

    both = agentenv("run", FIXTURE_BUNDLE, "-t", "second", "-t", "first", "--json")
    assert [t["name"] for t in both.json()["tasks"]] == ["second", "first"]

    unknown = agentenv("run", FIXTURE_BUNDLE, "--task", "zzz")
    assert unknown.returncode == 2
    assert unknown.stderr == f"error: bundle {FIXTURE_BUNDLE!r} has no task 'zzz' (tasks: first, second)\n"


def test_bundle_default_tasks_and_tasks_by_name(cli: Path, agentenv: Agentenv) -> None:
    tasks = {
        "file-a": {"name": "alpha", "steps": [{"id": "s", "type": "fixture_score", "score": 1}]},
        "file-b": {"name": "beta", "steps": [{"id": "s", "type": "fixture_score", "score": 1}]},
    }
    folder = write_bundle(cli / "named", {}, tasks)
    (folder / "bundle.toml").write_text('name = "named"\ntasks = ["file-b"]\n')
    default = agentenv("run", str(folder), "--json")
    assert [t["name"] for t in default.json()["tasks"]] == ["beta"]
    by_name = agentenv("run", str(folder), "--task", "alpha", "--json")
    assert by_name.returncode == 0, by_name
    assert [t["name"] for t in by_name.json()["tasks"]] == ["alpha"]


def test_unknown_bundle_lists_installed_ones(cli: Path, agentenv: Agentenv) -> None:
    result = agentenv("run", "no-such-bundle")
    assert result.returncode == 2
    assert result.stderr == (
        "error: no bundle 'no-such-bundle': not a folder with bundle.toml or tasks/, nor an installed bundle "
        f"({FIXTURE_BUNDLE})\n"
    )


def test_bad_bundle_manifest(cli: Path, agentenv: Agentenv) -> None:
    folder = cli / "broken"
    folder.mkdir()
    (folder / "bundle.toml").write_text('[requires]\nagentenv-kernel = "about one"\n')
    result = agentenv("run", str(folder))
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {folder / 'bundle.toml'}: field `requires.agentenv-kernel`: 'about one' is not a version range "
        '(e.g. ">=0.1,<0.2")\n'
    )
    assert json.loads(agentenv("runs", "list", "--json").stdout) == []
