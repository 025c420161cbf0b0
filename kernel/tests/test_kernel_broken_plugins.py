"""Broken plugins are skipped with a clear, coded problem and a fix; the CLI and every other plugin keep working.

Each case installs real distribution metadata (see `plugin_fixtures`) and runs the `agentenv` dispatcher
outside this process: first on its own (one case plus one good plugin: `plugin check --json` reports exactly
that case's code, exit 1, a fix), then all together, the "zoo", where `--help`, `plugin list`, `env list`,
`plugin show` and `plugin check` still work and every plugin outside the fixtures is exactly as without them.
The per-case and zoo commands share one interpreter each (`run_cli_batch`, a fresh plugin host per command);
`--help` and the zoo's `plugin check --json` run in their own fresh interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from agentenv.plugins import problems as codes
from agentenv_testing.installs import (
    EXCLUDING_KERNEL_RANGE,
    KERNEL_RANGE,
    KERNEL_VERSION,
    CliResult,
    CliRun,
    install_fixture_plugin,
    install_good_plugin,
    run_cli,
    run_cli_batch,
    step_module,
    step_plugin,
)
from packaging.requirements import Requirement

RAISES_ON_IMPORT = 'raise RuntimeError("this module must not be imported: its metadata already rules it out")\n'


def _step_dist(root: Path, dist: str, entry: str, module: str, *steps: str, requires: list[str] | None = None) -> None:
    install_fixture_plugin(
        root,
        dist,
        "1.0.0",
        entry,
        module,
        step_plugin(f"{module}_steps"),
        requires=requires or [KERNEL_RANGE],
        extra_modules={f"{module}_steps": step_module(*steps)},
    )


# ---- the cases -------------------------------------------------------------------------------------------


def install_import_failure(root: Path) -> None:
    install_fixture_plugin(
        root,
        "agentenv-fixture-broken-import",
        "1.0.0",
        "fixture-broken-import",
        "fixture_broken_import",
        "import agentenv_fixture_sdk_that_is_not_installed  # noqa: F401\n",
    )


def install_old_api(root: Path) -> None:
    install_fixture_plugin(
        root,
        "agentenv-fixture-old-api",
        "1.0.0",
        "fixture-old-api",
        "fixture_old_api",
        "from agentenv.env import Env, tool  # noqa: F401  (the layout before the kernel/runtime split)\n",
    )


def install_kernel_range(root: Path) -> None:
    install_fixture_plugin(
        root,
        "agentenv-fixture-future",
        "3.0.0",
        "fixture-future",
        "fixture_future",
        RAISES_ON_IMPORT,
        requires=[EXCLUDING_KERNEL_RANGE],
    )


def install_no_kernel_range(root: Path) -> None:
    dist = "agentenv-fixture-unpinned"
    install_fixture_plugin(root, dist, "1.0.0", "fixture-unpinned", "fixture_unpinned", RAISES_ON_IMPORT, requires=[])


def install_old_kernel_range(root: Path) -> None:
    install_fixture_plugin(
        root,
        "agentenv-fixture-past",
        "1.4.0",
        "fixture-past",
        "fixture_past",
        RAISES_ON_IMPORT,
        requires=["agentenv-kernel<0.1"],
    )


def install_duplicate_contribution(root: Path) -> None:
    """Two distributions whose plugins both register a step named `fixture_same_step`; b builds on a (so a keeps it)."""
    _step_dist(root, "agentenv-fixture-same-a", "fixture-same-a", "fixture_same_a", "fixture_same_step")
    needs = [KERNEL_RANGE, "agentenv-fixture-same-a>=1"]
    _step_dist(root, "agentenv-fixture-same-b", "fixture-same-b", "fixture_same_b", "fixture_same_step", requires=needs)


def install_duplicate_env(root: Path) -> None:
    """A distribution building on the good plugin that registers an env named like its (`fixture_notes`)."""
    install_fixture_plugin(
        root,
        "agentenv-fixture-zz-notes",
        "1.0.0",
        "fixture-zz-notes",
        "fixture_zz_notes",
        """
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_envs():
            from agentenv_runtime import Env

            class OtherNotes(Env):
                name = "fixture_notes"
                schema = "CREATE TABLE other (id INTEGER PRIMARY KEY);"

            return [OtherNotes]
        """,
        requires=[KERNEL_RANGE, "agentenv-fixture-good>=1"],
    )


def install_duplicate_entry_point(root: Path) -> None:
    """Two distributions declaring the same entry-point name, `fixture-twin`; b builds on a (so a keeps it)."""
    _step_dist(root, "agentenv-fixture-twin-a", "fixture-twin", "fixture_twin_a", "fixture_twin_a_step")
    needs = [KERNEL_RANGE, "agentenv-fixture-twin-a>=1"]
    _step_dist(root, "agentenv-fixture-twin-b", "fixture-twin", "fixture_twin_b", "fixture_twin_b_step", requires=needs)


def install_misspelled_hook(root: Path) -> None:
    install_fixture_plugin(
        root,
        "agentenv-fixture-typo",
        "1.0.0",
        "fixture-typo",
        "fixture_typo",
        """
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_stepz():
            return []
        """,
    )


def install_bad_hook_arguments(root: Path) -> None:
    install_fixture_plugin(
        root,
        "agentenv-fixture-badargs",
        "1.0.0",
        "fixture-badargs",
        "fixture_badargs",
        """
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_steps(registry):
            return []
        """,
    )


def install_abstract_class(root: Path) -> None:
    install_fixture_plugin(
        root,
        "agentenv-fixture-abstract",
        "1.0.0",
        "fixture-abstract",
        "fixture_abstract",
        step_plugin("fixture_abstract_steps"),
        extra_modules={"fixture_abstract_steps": step_module("fixture_abstract_step", abstract=True)},
    )


def install_sibling_out_of_range(root: Path) -> None:
    _step_dist(root, "agentenv-fixture-sibling", "fixture-sibling", "fixture_sibling", "fixture_sibling_step")
    install_fixture_plugin(
        root,
        "agentenv-fixture-needs-new-sibling",
        "1.0.0",
        "fixture-needs-new-sibling",
        "fixture_needs_new_sibling",
        RAISES_ON_IMPORT,
        requires=[KERNEL_RANGE, "agentenv-fixture-sibling>=9"],
    )


def install_missing_requirement(root: Path) -> None:
    install_fixture_plugin(
        root,
        "agentenv-fixture-lonely",
        "1.0.0",
        "fixture-lonely",
        "fixture_lonely",
        RAISES_ON_IMPORT,
        requires=[KERNEL_RANGE, "agentenv-fixture-nowhere>=1", "agentenv-fixture-optional>=1; extra == 'extra'"],
    )


def install_hook_failure(root: Path) -> None:
    install_fixture_plugin(
        root,
        "agentenv-fixture-raiser",
        "1.0.0",
        "fixture-raiser",
        "fixture_raiser",
        """
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_steps():
            raise ValueError("the step table is corrupt")
        """,
    )


@dataclass(frozen=True)
class Case:
    id: str
    install: Callable[[Path], None]
    code: str
    plugin: str
    status: str
    message_has: list[str]
    fix_has: list[str]
    ok_plugins: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """Fixture plugins of the case that must stay ok, with what they must still contribute."""


CASES = [
    Case(
        "import-failure",
        install_import_failure,
        codes.IMPORT_FAILED,
        "fixture-broken-import",
        "failed",
        ["fixture_broken_import", "ModuleNotFoundError", "agentenv_fixture_sdk_that_is_not_installed"],
        [
            "agentenv-fixture-broken-import imports 'agentenv_fixture_sdk_that_is_not_installed', which no installed "
            "distribution provides: declare it in its dependencies",
            "AGENTENV_DISABLE_PLUGINS=",
        ],
    ),
    Case(
        "old-api",
        install_old_api,
        codes.IMPORT_FAILED,
        "fixture-old-api",
        "failed",
        ["fixture_old_api", "No module named 'agentenv.env'"],
        [
            f"agentenv.env is not in agentenv-kernel {KERNEL_VERSION} (an older agentenv API); import Env, tool, "
            "ToolError, Artifact from agentenv_runtime and declare agentenv-runtime>=0.1,<0.2",
        ],
    ),
    Case(
        "kernel-range",
        install_kernel_range,
        codes.KERNEL_RANGE,
        "fixture-future",
        "incompatible",
        [
            f"requires agentenv-kernel{Requirement(EXCLUDING_KERNEL_RANGE).specifier}",
            f"agentenv-kernel {KERNEL_VERSION} is installed",
        ],
        [  # never another kernel; a release of the plugin made for this one (earlier: it asks a later kernel)
            "agentenv plugin add 'agentenv-fixture-future<3.0.0'",
            "or remove it: agentenv plugin remove agentenv-fixture-future",
            f"its author declares agentenv-kernel>={KERNEL_VERSION.rsplit('.', 1)[0]}",
        ],
    ),
    Case(
        "kernel-range-older",
        install_old_kernel_range,
        codes.KERNEL_RANGE,
        "fixture-past",
        "incompatible",
        ["requires agentenv-kernel<0.1", f"agentenv-kernel {KERNEL_VERSION} is installed"],
        ["agentenv plugin add --upgrade 'agentenv-fixture-past>1.4.0'", "agentenv plugin remove agentenv-fixture-past"],
    ),
    Case(
        "no-kernel-range",
        install_no_kernel_range,
        codes.NO_KERNEL_RANGE,
        "fixture-unpinned",
        "incompatible",
        ["agentenv-fixture-unpinned 1.0.0 declares no agentenv-kernel range"],
        [f"declare 'agentenv-kernel>={KERNEL_VERSION.rsplit('.', 1)[0]}"],
    ),
    Case(
        "duplicate-contribution",
        install_duplicate_contribution,
        codes.DUPLICATE_NAME,
        "fixture-same-b",
        "skipped",
        ["'fixture_same_step'", "agentenv-fixture-same-a", "agentenv-fixture-same-b"],
        ["rename the step in agentenv-fixture-same-b", "AGENTENV_DISABLE_PLUGINS=fixture-same-b"],
        {"fixture-same-a": {"steps": ["fixture_same_step"]}},
    ),
    Case(
        "duplicate-env",
        install_duplicate_env,
        codes.DUPLICATE_NAME,
        "fixture-zz-notes",
        "skipped",
        ["env 'fixture_notes'", "agentenv-fixture-good"],
        ["rename the env in agentenv-fixture-zz-notes"],
    ),
    Case(
        "duplicate-entry-point",
        install_duplicate_entry_point,
        codes.DUPLICATE_NAME,
        "fixture-twin",
        "skipped",
        ["'fixture-twin'", "agentenv-fixture-twin-a", "agentenv-fixture-twin-b"],
        ["rename the entry point in agentenv-fixture-twin-b"],
        {"fixture-twin": {"steps": ["fixture_twin_a_step"]}},
    ),
    Case(
        "misspelled-hook",
        install_misspelled_hook,
        codes.INVALID_HOOK,
        "fixture-typo",
        "failed",
        ["fixture_typo.agentenv_register_stepz"],
        ["rename it to agentenv_register_steps"],
    ),
    Case(
        "bad-hook-arguments",
        install_bad_hook_arguments,
        codes.INVALID_HOOK,
        "fixture-badargs",
        "failed",
        ["registry"],
        ["agentenv.hookspecs"],
    ),
    Case(
        "abstract-class",
        install_abstract_class,
        codes.INVALID_CONTRIBUTION,
        "fixture-abstract",
        "failed",
        ["'fixture_abstract_step'", "abstract methods: execute"],
        ["agentenv-fixture-abstract"],
    ),
    Case(
        "sibling-out-of-range",
        install_sibling_out_of_range,
        codes.REQUIREMENT_RANGE,
        "fixture-needs-new-sibling",
        "incompatible",
        ["agentenv-fixture-sibling>=9", "agentenv-fixture-sibling 1.0.0 is installed"],
        ["agentenv plugin add 'agentenv-fixture-sibling>=9'"],
        {"fixture-sibling": {"steps": ["fixture_sibling_step"]}},
    ),
    Case(
        "missing-requirement",
        install_missing_requirement,
        codes.MISSING_REQUIREMENT,
        "fixture-lonely",
        "incompatible",
        ["agentenv-fixture-nowhere>=1", "not installed"],
        ["agentenv plugin add 'agentenv-fixture-nowhere>=1'"],
    ),
    Case(
        "hook-failure",
        install_hook_failure,
        codes.HOOK_FAILED,
        "fixture-raiser",
        "failed",
        ["agentenv_register_steps", "ValueError", "the step table is corrupt"],
        ["AGENTENV_DISABLE_PLUGINS=fixture-raiser"],
    ),
]
CASE_IDS = [case.id for case in CASES]


def test_every_problem_code_has_a_case() -> None:
    declared = {value for name, value in vars(codes).items() if name.isupper() and isinstance(value, str)}
    assert declared == {case.code for case in CASES}


# ---- one case at a time ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CliResult]:
    """Per case: `plugin check --json` with only that case and the good plugin added."""
    runs = {}
    for case in CASES:
        root = tmp_path_factory.mktemp(case.id)
        install_good_plugin(root)
        case.install(root)
        runs[case.id] = CliRun(["plugin", "check", "--json"], root)
    return run_cli_batch(runs)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_check_reports_the_case_alone(case: Case, alone: dict[str, CliResult]) -> None:
    check = alone[case.id]
    assert check.returncode == 1, check
    report = check.json()
    assert report["ok"] is False
    mine = [p for p in report["problems"] if p["plugin"].startswith("fixture-")]
    assert len(mine) == 1, check
    problem = mine[0]
    assert problem["code"] == case.code, check
    assert problem["plugin"] == case.plugin, check
    for text in case.message_has:
        assert text in problem["message"], check
    assert "\n" not in problem["message"], "one line per problem, then its fix line"
    assert problem["fix"].strip() and "\n" not in problem["fix"], check
    for text in case.fix_has:
        assert text in problem["fix"], check


# ---- all cases at once -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("zoo")
    install_good_plugin(root)
    for case in CASES:
        case.install(root)
    return root


@pytest.fixture(scope="module")
def zoo_runs(zoo: Path) -> dict[str, CliResult]:
    """The zoo's commands, run in one interpreter with a fresh host each (plus a baseline without the zoo)."""
    return run_cli_batch(
        {
            "baseline list": CliRun(["plugin", "list", "--json"]),
            "list": CliRun(["plugin", "list", "--json"], zoo),
            "list table": CliRun(["plugin", "list"], zoo),
            "check": CliRun(["plugin", "check"], zoo),
            "env list": CliRun(["env", "list", "--json"], zoo),
            "show": CliRun(["plugin", "show", "fixture-typo"], zoo),
        }
    )


def test_check_reports_every_case_together(zoo: Path) -> None:
    """In a fresh interpreter, as a person would run it."""
    result = run_cli("plugin", "check", "--json", paths=[zoo])
    assert result.returncode == 1, result
    found = {(p["plugin"], p["code"]) for p in result.json()["problems"] if p["plugin"].startswith("fixture-")}
    assert found == {(case.plugin, case.code) for case in CASES}, result


def test_help_still_works(zoo: Path) -> None:
    result = run_cli("--help", paths=[zoo])
    assert result.returncode == 0, result
    assert "Commands:" in result.stdout and "plugin" in result.stdout
    assert "Traceback" not in result.stderr


def test_check_prints_a_fix_line_per_problem(zoo_runs: dict[str, CliResult]) -> None:
    result = zoo_runs["check"]
    assert result.returncode == 1, result
    lines = result.stdout.splitlines()
    for case in CASES:
        (at,) = [i for i, line in enumerate(lines) if line.startswith(f"{case.plugin}: [{case.code}] ")]
        assert lines[at + 1].startswith("  fix: ") and len(lines[at + 1]) > len("  fix: "), result
    assert lines[-1].endswith(" problem(s).")


def test_list_shows_every_other_plugin_ok(zoo_runs: dict[str, CliResult]) -> None:
    baseline, result = zoo_runs["baseline list"], zoo_runs["list"]
    assert baseline.returncode == 0, baseline
    assert result.returncode == 0, result
    plugins = result.json()
    # Plugins installed outside the fixtures (the kernel, workspace plugins) are exactly as without them.
    before = {p["distribution"]: (p["status"], p["contributes"]) for p in baseline.json()}
    after = {p["distribution"]: (p["status"], p["contributes"]) for p in plugins if p["distribution"] in before}
    assert after == before
    assert before["agentenv-runtime"][0] == "ok"
    # Every broken fixture has its status and problem; the good fixtures are ok and contribute.
    broken = {p["name"]: p for p in plugins if p["problems"] and p["distribution"].startswith("agentenv-fixture-")}
    assert sorted(broken) == sorted(case.plugin for case in CASES), result
    for case in CASES:
        assert broken[case.plugin]["status"] == case.status, result
        assert broken[case.plugin]["problems"][0]["code"] == case.code
        assert not any(broken[case.plugin]["contributes"].values()), f"{case.id}: a broken plugin contributes nothing"
    ok = {p["name"]: p for p in plugins if p["status"] == "ok"}
    assert ok["fixture-good"]["contributes"] == {"envs": ["fixture_notes"]}, result
    for case in CASES:
        for name, contributes in case.ok_plugins.items():
            assert name in ok, f"{name} should still be ok\n{result}"
            assert ok[name]["contributes"] == contributes, f"{case.id}: {name}\n{result}"


def test_list_table_points_at_check(zoo_runs: dict[str, CliResult]) -> None:
    result = zoo_runs["list table"]
    assert result.returncode == 0, result
    assert "fixture-good" in result.stdout
    assert "run `agentenv plugin check` for fixes" in result.stderr


def test_env_list_still_lists_envs(zoo_runs: dict[str, CliResult]) -> None:
    result = zoo_runs["env list"]
    assert result.returncode == 0, result
    envs = {row["name"]: row for row in result.json()}
    assert envs["fixture_notes"]["distribution"] == "agentenv-fixture-good"
    assert envs["fixture_notes"]["tools"] == ["add_note"]


def test_show_names_the_problem_and_fix(zoo_runs: dict[str, CliResult]) -> None:
    result = zoo_runs["show"]
    assert result.returncode == 0, result
    assert "status:       failed" in result.stdout
    assert "problem [invalid-hook]" in result.stdout
    assert "fix: rename it to agentenv_register_steps" in result.stdout


# ---- every problem of a plugin at once ----------------------------------------------------------------------

MANY_MISTAKES = """
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_stepz():
    return []


def agentenv_register_enviroments():
    return []


@hookimpl
def agentenv_register_steps():
    from fixture_many_steps import Step0
    return [Step0, "not a step", 42]


@hookimpl
def agentenv_register_trigger_kinds():
    raise ValueError("the trigger table is corrupt")


@hookimpl
def agentenv_register_envs():
    return {"not": "a list"}
"""


def test_every_problem_of_a_plugin_is_reported_in_one_pass(tmp_path: Path) -> None:
    """Two misspelled hooks, an abstract step and two things that are no steps, a hook that raises and one that
    returns a dict: an author used to see the first, fix it, and find the next; all six come in one check."""
    install_fixture_plugin(
        tmp_path, "agentenv-fixture-many", "1.0.0", "fixture-many", "fixture_many", MANY_MISTAKES,
        extra_modules={"fixture_many_steps": step_module("fixture_many_step", abstract=True)},
    )  # fmt: skip
    check = run_cli("plugin", "check", "--json", paths=[tmp_path])
    assert check.returncode == 1, check
    mine = [p for p in check.json()["problems"] if p["plugin"] == "fixture-many"]
    found = sorted((p["code"], p["message"].split(": ", 1)[-1][:60]) for p in mine)
    assert [code for code, _ in found] == sorted(
        [codes.INVALID_HOOK, codes.INVALID_HOOK, codes.INVALID_CONTRIBUTION, codes.INVALID_CONTRIBUTION,
         codes.INVALID_CONTRIBUTION, codes.HOOK_FAILED, codes.INVALID_HOOK]
    ), found  # fmt: skip
    text = "\n".join(p["message"] for p in mine)
    for part in ("agentenv_register_stepz", "agentenv_register_enviroments", "abstract methods: execute",
                 "'not a step'", "42", "the trigger table is corrupt", "returned dict, not a list"):  # fmt: skip
        assert part in text, text
    listed = run_cli("plugin", "list", "--json", paths=[tmp_path]).json()
    assert next(p for p in listed if p["name"] == "fixture-many")["contributes"] == {}, "it registers nothing"
