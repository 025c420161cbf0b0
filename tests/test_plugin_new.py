"""`agentenv plugin new` for every kind: the generated distribution builds as a wheel, its own tests pass unedited
against the installed wheel, `plugin check` accepts it, and its code is clean under the workspace's ruff rules.

The wheels are unpacked onto one folder on `PYTHONPATH` (`agentenv_testing.wheels.unpack_wheel`): real
`*.dist-info` metadata and entry points, as an installer leaves them, without a virtual environment per kind.
Marked `slow` (it builds six wheels).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv_runtime.scaffold import KINDS
from agentenv_testing.installs import CliResult, cli_env, run_cli
from agentenv_testing.wheels import build_wheel, unpack_wheel

RUFF_RULES = ["--select", "E,F,W,I,B,UP,SIM,RUF", "--ignore", "B008,RUF012", "--line-length", "120"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Path], Path]:
    """Each kind generated as `gen_<kind>` by the real command, built, and installed onto one site folder."""
    root = tmp_path_factory.mktemp("generated")
    site, wheels = root / "site", root / "wheels"
    projects = {}
    for kind in KINDS:
        project = root / kind
        made = run_cli("plugin", "new", f"gen_{kind}", "--kind", kind, "--dir", str(project))
        assert made.returncode == 0, made
        unpack_wheel(build_wheel(project, wheels), site)
        projects[kind] = project
    return projects, site


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_generated_tests_pass_unedited(generated: tuple[dict[str, Path], Path], kind: str) -> None:
    projects, site = generated
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests"],
        cwd=projects[kind],
        env=cli_env([site]),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    # the one skip allowed: the store kit's fault injection needs a network service, which a folder store is not
    assert " passed" in done.stdout and all("talks to no network service" in line for line in skips), done.stdout


@pytest.mark.slow
def test_plugin_check_accepts_every_generated_plugin(generated: tuple[dict[str, Path], Path]) -> None:
    _, site = generated
    check = run_cli("plugin", "check", "--json", paths=[site])
    assert (check.returncode, check.json()) == (0, {"ok": True, "problems": []}), check
    listed = {p["name"]: p for p in run_cli("plugin", "list", "--json", paths=[site]).json()}
    for kind in KINDS:
        plugin = listed[f"gen_{kind}"]
        assert plugin["status"] == "ok" and plugin["distribution"] == f"agentenv-gen-{kind}", plugin
        contributed = [name for names in plugin["contributes"].values() for name in names]
        assert contributed in ([f"gen_{kind}"], [f"object:gen_{kind}"]), plugin


@pytest.mark.slow
def test_the_generated_code_is_lint_clean(generated: tuple[dict[str, Path], Path]) -> None:
    projects, _ = generated
    ruff = Path(sys.executable).parent / "ruff"
    for kind, project in projects.items():
        done = subprocess.run([str(ruff), "check", *RUFF_RULES, "."], cwd=project, capture_output=True, text=True)
        assert done.returncode == 0, f"{kind}:\n{done.stdout}"
        pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
        assert f'gen_{kind} = "agentenv_gen_{kind}.plugin"' in pyproject


def test_bad_names_kinds_and_folders_are_refused_in_one_line(
    agentenv_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    bad_name = agentenv_cli("plugin", "new", "Phone-App", "--kind", "env", "--dir", str(tmp_path / "a"))
    assert bad_name.returncode == 2 and "NAME 'Phone-App': use lower-case letters" in bad_name.stderr
    bad_kind = agentenv_cli("plugin", "new", "phone", "--kind", "widget", "--dir", str(tmp_path / "b"))
    assert bad_kind.returncode == 2 and "--kind 'widget': choose one of env, step" in bad_kind.stderr
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    taken = agentenv_cli("plugin", "new", "phone", "--kind", "env", "--dir", str(tmp_path / "taken"))
    assert taken.returncode == 2 and "exists and is not an empty folder" in taken.stderr
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["keep.txt"]
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    ours = agentenv_cli("plugin", "new", "slack", "--kind", "env", "--dir", str(tmp_path / "c"))
    assert ours.returncode == 2, ours  # it wrote agentenv-slack, which would replace the Slack env's distribution
    assert "NAME 'slack': agentenv-slack is a distribution of agentenv itself" in ours.stderr
    assert "`my_slack`" in ours.stderr and not (tmp_path / "c").exists()


def test_the_ranges_include_the_running_versions(agentenv_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    from agentenv import __version__ as kernel_version
    from packaging.requirements import Requirement

    made = agentenv_cli("plugin", "new", "phone", "--kind", "env", "--dir", str(tmp_path / "p"))
    assert made.returncode == 0, made
    text = (tmp_path / "p" / "pyproject.toml").read_text(encoding="utf-8")
    kernel = next(line.strip(' ",') for line in text.splitlines() if "agentenv-kernel" in line)
    assert kernel_version in Requirement(kernel).specifier
    assert json.loads((tmp_path / "p" / "src" / "agentenv_phone" / "artifacts" / "example.json").read_text())[
        "env"
    ] == ("phone")


@pytest.mark.slow
def test_the_guides_setuptools_recipe_ships_the_artifacts(tmp_path: Path) -> None:
    """The guide's setuptools block, put into a generated env plugin instead of hatchling, builds a wheel that
    holds the artifacts and the entry point."""
    import zipfile

    guide = (Path(__file__).resolve().parents[1] / "docs" / "authoring.md").read_text(encoding="utf-8")
    recipe = guide.split("With **setuptools**", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    project = tmp_path / "phone"
    assert run_cli("plugin", "new", "phone", "--kind", "env", "--dir", str(project)).returncode == 0
    pyproject = project / "pyproject.toml"
    hatch_part = pyproject.read_text(encoding="utf-8").split("[build-system]", 1)[0]
    pyproject.write_text(hatch_part + recipe, encoding="utf-8")
    wheel = build_wheel(project, tmp_path / "wheels")
    names = zipfile.ZipFile(wheel).namelist()
    assert "agentenv_phone/artifacts/example.json" in names and "agentenv_phone/env.py" in names, names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert 'phone = agentenv_phone.plugin' in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.mark.slow
def test_the_printed_next_step_works_in_a_fresh_uv_venv(workspace_wheels: dict[str, Path], tmp_path: Path) -> None:
    """A newcomer in a uv-made environment (no pip in it, its bin not on PATH) scaffolds an env plugin and runs the
    "Next:" line as printed: it installs the plugin with its test extra (and so only what it declares: its own
    tests needed `deploy_env`, from agentenv-steps, which it did not declare), runs its tests, and checks it."""
    import os
    import shlex

    from agentenv_testing.wheels import pip_source_args
    from wheels import run, uv_venv

    wheels = workspace_wheels["agentenv-kernel"].parent
    scaffolder = [workspace_wheels["agentenv-kernel"], workspace_wheels["agentenv-runtime"]]
    venv = uv_venv(tmp_path / "venv", scaffolder, wheels)
    assert "pip" not in venv.installed() and "agentenv-steps" not in venv.installed()
    made = run([str(venv.agentenv), "plugin", "new", "phone", "--kind", "env"], cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    (line,) = [line for line in made.stdout.splitlines() if line.startswith("Next: ")]
    sources = {"UV_FIND_LINKS": str(wheels)}  # where the unpublished agentenv wheels are (a user's index or dist/)
    if pip_source_args():
        sources |= {"UV_FIND_LINKS": f"{wheels},{os.environ['AGENTENV_WHEELHOUSE']}", "UV_NO_INDEX": "1"}  # uv: commas
    done = run(["sh", "-c", line.removeprefix("Next: ")], cwd=tmp_path, env=sources, timeout=900)
    assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    assert " passed" in done.stdout and "All plugins are compatible." in done.stdout, done.stdout
    assert "agentenv-steps" in venv.installed(), "the test extra brings what the generated tests use"
    assert str(venv.root) in line and shlex.split(line)[2] != "pip", "the venv's own tools, by path"
