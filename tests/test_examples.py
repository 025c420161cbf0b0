"""The `examples/` plugins installed as an outside user would: each example's wheel alone into a fresh virtual
environment, with pip finding only the first-party wheels it declares. There `plugin check` passes, every graded
task of its bundles scores 1.0 with the reference solver and below 1 with the wrong one, and the example's own
tests (its `test` extra: agentenv-testing and pytest) pass against the installed wheel.

Marked `slow` (it builds wheels and virtual environments): `pytest -m slow tests/test_examples.py`. Offline in CI
through `AGENTENV_WHEELHOUSE` (see `agentenv_testing.wheels`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentenv_testing.wheels import build_wheel, fresh_venv, installed, pip_install, run
from first_party import ROOT, projects

FIRST_PARTY = projects(
    "agentenv-kernel", "agentenv-runtime", "agentenv-store-local", "agentenv-steps", "agentenv-agents",
    "agentenv-slack", "agentenv-testing",
)  # fmt: skip
CORE = {"agentenv-kernel", "agentenv-runtime", "agentenv-store-local", "agentenv-steps", "agentenv-agents"}
EXAMPLES = {
    # example → (the agentenv distributions its install must bring, its bundles, [(bundle, task, wrong agent)])
    "agentenv-game": (CORE | {"agentenv-game"}, ["connect-four"], [("connect-four", "beat-the-bot", "wrong_solver")]),
    "agentenv-mobile": (
        CORE | {"agentenv-slack", "agentenv-mobile"},
        ["phone-day", "phone-and-slack"],
        [
            ("phone-day", "reschedule-dentist", "dentist_wrong"),
            ("phone-day", "quiet-evening", "quiet_wrong"),
            ("phone-and-slack", "dentist-to-slack", "wrong_solver"),
        ],
    ),
}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every first-party wheel the examples may declare, in one find-links folder."""
    folder = tmp_path_factory.mktemp("dist")
    for project in FIRST_PARTY.values():
        build_wheel(project, folder)
    return folder


def run_json(agentenv: Path, *args: str, cwd: Path) -> tuple[int, dict[str, object], str]:
    done = run([str(agentenv), *args, "--json"], cwd=cwd)
    try:
        return done.returncode, json.loads(done.stdout), done.stderr
    except json.JSONDecodeError:
        raise AssertionError(f"agentenv {' '.join(args)}: not JSON\n{done.stdout}\n{done.stderr}") from None


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_an_example_installs_alone_and_runs(tmp_path: Path, dist: Path, example: str) -> None:
    expected, bundles, wrong_runs = EXAMPLES[example]
    wheel = build_wheel(ROOT / "examples" / example, dist)
    bin_dir = fresh_venv(tmp_path, [wheel], find_links=[dist])
    agentenv = bin_dir / "agentenv"
    assert {name for name in installed(bin_dir / "python") if name.startswith("agentenv")} == expected

    code, check, stderr = run_json(agentenv, "plugin", "check", cwd=tmp_path)
    assert (code, check) == (0, {"ok": True, "problems": []}), stderr

    for bundle in bundles:
        code, solved, stderr = run_json(agentenv, "run", bundle, cwd=tmp_path)
        assert code == 0 and solved["passed"] is True, (solved, stderr)
        graded = [task for task in solved["tasks"] if task["score"] is not None]  # type: ignore[union-attr]
        assert graded and all(task["score"] == 1.0 for task in graded), solved
    for bundle, task, agent in wrong_runs:
        code, wrong, stderr = run_json(agentenv, "run", bundle, "--task", task, "--agent", agent, cwd=tmp_path)
        assert code == 1, (wrong, stderr)
        assert [t["score"] < 1.0 for t in wrong["tasks"]] == [True], wrong  # type: ignore[union-attr]

    pip_install(bin_dir, [f"{example}[test]"], find_links=[dist])
    tests = run(
        [str(bin_dir / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=ROOT / "examples" / example,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
