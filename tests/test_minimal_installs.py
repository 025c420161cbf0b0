"""Real, minimal installs as a user makes them: `python -m venv`, then `pip install` of only the named wheels
(no workspace, no editable installs), and what they promise works there:

- the kernel and one sandbox provider (`agentenv-docker`, with the local providers it declares), no runtime:
  `plugin check` passes, `--help` works;
- `pip install agentenv-kernel agentenv-slack`: the env is listed, carded and answers tools in a world;
- the kernel, the runtime and a bundle distribution (`agentenv-hello`): its declarations bring the rest;
- the kernel and `agentenv-support-desk` alone: `agentenv run support-refund` scores 1.0;
- a sibling released at an incompatible version: `plugin add --upgrade` keeps every plugin fitting, and after
  a blind `pip install --upgrade` breaks the set, following `plugin check`'s first fix once repairs it;
- every wheel carries its license text, a license field, URLs, classifiers and the `agentenv-plugin` keyword.

Dependencies come from `AGENTENV_WHEELHOUSE` when it is set (see `wheels.py`). Marked `slow`:
`pytest -m slow tests/test_minimal_installs.py`.
"""

from __future__ import annotations

import email.parser
import json
import shlex
import shutil
import zipfile
from pathlib import Path

import pytest
from wheels import Venv, build_wheel, pip_venv, projects, source_args

Wheels = dict[str, Path]


def install(tmp: Path, wheels: Wheels, *names: str) -> Venv:
    """A fresh venv with `pip install NAMES…`; our other wheels stand in for the index holding the siblings."""
    return pip_venv(tmp / "venv", [wheels[name] for name in names], find_links=next(iter(wheels.values())).parent)


def plugin_check(venv: Venv, cwd: Path) -> dict[str, object]:
    report = venv.run("agentenv", "plugin", "check", "--json", cwd=cwd)
    parsed: dict[str, object] = json.loads(report.stdout)
    assert report.returncode == (0 if parsed["ok"] else 1), report.stderr
    return parsed


@pytest.mark.slow
def test_kernel_and_docker_without_the_runtime(tmp_path: Path, workspace_wheels: Wheels) -> None:
    venv = install(tmp_path, workspace_wheels, "agentenv-kernel", "agentenv-docker")
    assert "agentenv-runtime" not in venv.installed(), "the docker provider must not need the runtime"
    assert plugin_check(venv, tmp_path) == {"ok": True, "problems": []}
    listing = venv.run("agentenv", "plugin", "list", "--json", cwd=tmp_path)
    plugins = {p["name"]: p for p in json.loads(listing.stdout)}
    # docker declares agentenv-sandbox-local: its api says whether the process that made a sandbox still runs
    assert set(plugins) == {"docker", "sandbox-local"} and plugins["docker"]["status"] == "ok"
    assert plugins["docker"]["contributes"]["sandbox_providers"] == ["docker"]
    help_ = venv.run("agentenv", "--help", cwd=tmp_path)
    assert help_.returncode == 0 and "plugin" in help_.stdout and " run " not in help_.stdout
    missing = venv.run("agentenv", "run", "hello", cwd=tmp_path)
    assert missing.returncode == 2 and "no such command 'run'" in missing.stderr


@pytest.mark.slow
def test_kernel_and_slack(tmp_path: Path, workspace_wheels: Wheels) -> None:
    venv = install(tmp_path, workspace_wheels, "agentenv-kernel", "agentenv-slack")
    ours = {name for name in venv.installed() if name.startswith("agentenv-")}
    assert ours == {"agentenv-kernel", "agentenv-runtime", "agentenv-store-local", "agentenv-slack"}
    assert plugin_check(venv, tmp_path) == {"ok": True, "problems": []}
    assert "slack" in venv.run("agentenv", "env", "list", cwd=tmp_path).stdout
    card = json.loads(venv.run("agentenv", "env", "card", "slack", "--json", cwd=tmp_path).stdout)
    assert len(card["capabilities"]["tools"]) == 18
    code = ("from agentenv_runtime import build_world\nw = build_world('slack', artifacts=['acme'])\n"
            "print(w.call('post_message', {'channel': '#support', 'text': 'hi'}).to_dict()['ok'])")  # fmt: skip
    assert venv.run("python", "-c", code, cwd=tmp_path).stdout.strip() == "True"
    no_bundle = venv.run("agentenv", "run", cwd=tmp_path)
    assert "No bundles installed. Add some: agentenv plugin add agentenv-hello" in no_bundle.stdout


@pytest.mark.slow
def test_kernel_runtime_and_a_bundle_distribution_run_it(tmp_path: Path, workspace_wheels: Wheels) -> None:
    venv = install(tmp_path, workspace_wheels, "agentenv-kernel", "agentenv-runtime", "agentenv-hello")
    assert not {"agentenv-email", "agentenv-gateway", "agentenv-docker"} & venv.installed()
    assert plugin_check(venv, tmp_path) == {"ok": True, "problems": []}
    listing = venv.run("agentenv", "run", cwd=tmp_path).stdout
    assert any(line.startswith("hello ") and " ready " in line for line in listing.splitlines()), listing
    hello = venv.run("agentenv", "run", "hello", "--json", cwd=tmp_path)
    assert hello.returncode == 0, hello.stdout + hello.stderr
    assert json.loads(hello.stdout)["tasks"][0]["status"] == "succeeded"


@pytest.mark.slow
def test_kernel_and_support_desk_scores_one(tmp_path: Path, workspace_wheels: Wheels) -> None:
    venv = install(tmp_path, workspace_wheels, "agentenv-kernel", "agentenv-support-desk")
    assert plugin_check(venv, tmp_path) == {"ok": True, "problems": []}
    result = venv.run("agentenv", "run", "support-refund", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    (task,) = json.loads(result.stdout)["tasks"]
    assert (task["status"], task["score"]) == ("succeeded", 1.0)
    listed = venv.run("agentenv", "runs", "list", "--json", cwd=tmp_path)
    assert [r["id"] for r in json.loads(listed.stdout)] == [task["run_id"]], "the run was recorded by store-local"


def rebuilt(project: Path, tmp: Path, version: str, requires: dict[str, str] | None = None) -> Path:
    """A wheel of `project` released as `version`, optionally with other ranges on its siblings."""
    copy = tmp / f"{project.name}-{version}"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info"))
    (init,) = [p for p in (copy / "src").glob("*/__init__.py") if '__version__ = "' in p.read_text()]
    text = init.read_text()
    old = text.split('__version__ = "')[1].split('"')[0]
    init.write_text(text.replace(f'__version__ = "{old}"', f'__version__ = "{version}"'))
    pyproject = (copy / "pyproject.toml").read_text()
    for dist, spec in (requires or {}).items():
        start = pyproject.index(f'"{dist}')
        end = pyproject.index('"', start + 1)
        pyproject = pyproject[:start] + f'"{dist}{spec}' + pyproject[end:]
    (copy / "pyproject.toml").write_text(pyproject)
    out = tmp / "rebuilt"
    out.mkdir(exist_ok=True)
    return build_wheel(copy, out)


@pytest.mark.slow
def test_an_incompatible_sibling_release_never_breaks_the_install(tmp_path: Path, workspace_wheels: Wheels) -> None:
    folders = projects()
    index = tmp_path / "index"  # a local package index: this release's wheels and the next ones of two plugins
    index.mkdir()
    for name in ("agentenv-kernel", "agentenv-runtime", "agentenv-store-local", "agentenv-slack", "agentenv-email"):
        shutil.copy(workspace_wheels[name], index)
    shutil.copy(rebuilt(folders["agentenv-runtime"], tmp_path, "0.2.0"), index)
    shutil.copy(rebuilt(folders["agentenv-slack"], tmp_path, "0.2.0", {"agentenv-runtime": ">=0.2,<0.3"}), index)
    first = [index / workspace_wheels[n].name for n in ("agentenv-kernel", "agentenv-slack", "agentenv-email")]
    venv = pip_venv(tmp_path / "venv", first, find_links=index)
    venv.extra_env = {"PIP_FIND_LINKS": " ".join([str(index), *source_args()[2:]]), "PIP_NO_INDEX": "1"}

    def versions() -> dict[str, str]:
        listed = json.loads(venv.run("python", "-m", "pip", "list", "--format", "json").stdout)
        return {row["name"].lower(): row["version"] for row in listed if row["name"].startswith("agentenv")}

    before = versions()
    assert before["agentenv-slack"] == "0.1.0" and before["agentenv-runtime"] == "0.1.0"

    upgrade = venv.run("agentenv", "plugin", "add", "--upgrade", "agentenv-slack", cwd=tmp_path)
    assert upgrade.returncode == 0, upgrade.stdout + upgrade.stderr
    assert "agentenv-email==0.1.0" in upgrade.stderr, "the installer was told to hold every sibling"
    assert versions() == before, "slack 0.2 needs runtime 0.2, which email cannot use: nothing moves"
    assert plugin_check(venv, tmp_path)["ok"] is True

    blind = venv.run("python", "-m", "pip", "install", "--upgrade", "agentenv-slack", cwd=tmp_path)
    assert blind.returncode == 0, blind.stderr
    assert versions()["agentenv-runtime"] == "0.2.0", "a plain pip upgrade drags the runtime along"
    broken = plugin_check(venv, tmp_path)
    assert broken["ok"] is False
    problems = broken["problems"]
    assert isinstance(problems, list) and problems
    fix = problems[0]["fix"]
    assert fix.startswith("agentenv plugin add ") and "agentenv-kernel" not in fix, fix
    followed = venv.run(*shlex.split(fix), cwd=tmp_path)
    assert followed.returncode == 0, followed.stdout + followed.stderr
    assert plugin_check(venv, tmp_path) == {"ok": True, "problems": []}, "one fix, followed once, repairs the set"
    assert {"agentenv-email", "agentenv-slack"} <= set(versions())


def wheel_metadata(wheel: Path) -> tuple[email.message.Message, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(archive.read(meta).decode()), names


@pytest.mark.slow
def test_every_wheel_carries_release_metadata(workspace_wheels: Wheels) -> None:
    for dist, wheel in workspace_wheels.items():
        meta, names = wheel_metadata(wheel)
        assert meta.get("License-Expression") or meta.get("License"), f"{dist}: no license field"
        assert any("/licenses/" in n or n.endswith(".dist-info/LICENSE") for n in names), f"{dist}: no license file"
        urls = meta.get_all("Project-URL") or []
        assert any(u.startswith("Source") for u in urls) and any(u.startswith("Issues") for u in urls), dist
        assert meta.get_all("Classifier"), f"{dist}: no classifiers"
        if dist != "agentenv-kernel":  # the kernel is what plugins plug into, not one of them
            assert "agentenv-plugin" in (meta.get("Keywords") or "").split(","), f"{dist}: no agentenv-plugin keyword"
        assert meta.get("Requires-Python", "").startswith(">=3.11"), dist


@pytest.mark.slow
def test_sandbox_docker_from_a_wheel_install(tmp_path: Path, workspace_wheels: Wheels, docker_engine: None) -> None:
    """No source folder anywhere: the world image gets the installed distributions packed again."""
    names = ("agentenv-kernel", "agentenv-support-desk", "agentenv-docker", "agentenv-gateway")
    venv = install(tmp_path, workspace_wheels, *names)
    result = venv.run("agentenv", "run", "support-refund", "--sandbox", "docker", "--json", cwd=tmp_path, timeout=900)
    (task,) = json.loads(result.stdout)["tasks"]
    steps = json.loads(venv.run("agentenv", "runs", "show", task["run_id"], "--json", cwd=tmp_path).stdout)["steps"]
    errors = {s["id"]: s.get("error") for s in steps if s.get("error")}
    assert (result.returncode, task["status"], task["score"]) == (0, "succeeded", 1.0), (errors, result.stderr)
    desk = next(s for s in steps if s["id"] == "desk")["output"]
    assert desk["sandbox"] == "docker" and desk["image"].startswith("agentenv/world:")
