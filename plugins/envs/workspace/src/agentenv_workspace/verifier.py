"""`tests_verifier`: grade a workspace by running tests in it after the agent is done.

The tests run in a *grading fork* of the agent's workspace: the hidden test files (a folder of the bundle) are
copied into that fork only, so the agent never had them in its tree and its sandbox could not reach them by
path (see `sandbox`); the fork is thrown away afterwards, so grading leaves the agent's end state as it was.

What the score comes from (`results`):
- `exit`: the command's exit status (0 = pass);
- `junit`: a JUnit XML report the command writes; score 1 only if every test passed;
- `reward`: a reward file (Harbor's convention: a number in `/logs/verifier/reward.txt`), score = the number;
- with `fail_to_pass` / `pass_to_pass` (SWE-bench style, needs `junit`): score 1 only if every listed test
  passes; the fraction of listed tests in the right state is reported beside it as `partial_credit`.
"""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any, ClassVar, Literal

from agentenv.contracts import Step, StepContext, StepFailed
from agentenv_runtime import World
from agentenv_steps.api import Row, make_row, verdict
from pydantic import BaseModel, ConfigDict, Field

from agentenv_workspace import sandbox
from agentenv_workspace.env import WorkspaceEnv

OUTPUT_TAIL = 4000


class CodeTestsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="Id of the deploy_env step whose workspace is graded.")
    workspace: str = Field("workspace", description="Name of the workspace env in that world.")
    command: str = Field(min_length=1, description="The test command, run with `sh -c` in the workspace.")
    hidden: list[str] = Field(
        default_factory=list, description="Bundle folders of hidden test files, copied in for grading only."
    )
    hidden_to: str = Field(".", description="Where in the workspace the hidden files go.")
    hidden_mount: str | None = Field(
        None,
        pattern=r"^/[A-Za-z0-9._/-]+$",
        description="Show the hidden folders read-only at this absolute path instead of copying them into the tree "
        "(Harbor's /tests; needs bubblewrap).",
    )
    environment: dict[str, str] = Field(default_factory=dict, description="Variables for the test command.")
    results: Literal["exit", "junit", "reward"] = Field(
        "exit", description="Score from the exit status, JUnit or a reward file."
    )
    junit: str = Field("report.xml", description="The JUnit XML report's path (workspace-relative, or under /logs).")
    reward: str = Field(
        "/logs/verifier/reward.txt", description="The reward file's path (under /logs, or workspace-relative)."
    )
    fail_to_pass: list[str] = Field(default_factory=list, description="Tests that must pass after the fix (SWE).")
    pass_to_pass: list[str] = Field(default_factory=list, description="Tests that must keep passing (SWE).")
    timeout: float = Field(600.0, gt=0, description="Seconds the test command may run.")


class CodeTestsVerifier(Step[CodeTestsSettings]):
    """Run tests in a grading fork of the workspace, hidden tests copied in; one row, partial credit beside it."""

    name = "tests_verifier"
    description = "Grade a workspace by its tests: exit status, JUnit XML, a reward file, or SWE fail/pass lists."
    Settings = CodeTestsSettings
    verifier: ClassVar[bool] = True

    def preflight(self, settings: CodeTestsSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = []
        if settings.env not in step_ids:
            problems.append(("env", f"no step {settings.env!r} in this task; name the deploy_env step to grade"))
        if (settings.fail_to_pass or settings.pass_to_pass) and settings.results != "junit":
            problems.append(("results", 'fail_to_pass / pass_to_pass need per-test results: set results = "junit"'))
        return problems

    async def execute(self, settings: CodeTestsSettings, ctx: StepContext) -> dict[str, Any]:
        world = ctx.resource(settings.env, World)
        try:
            agent_tree = world.env(settings.workspace)
        except Exception as exc:
            raise StepFailed(f"field `workspace`: {exc}") from None
        if not isinstance(agent_tree, WorkspaceEnv):
            raise StepFailed(f"field `workspace`: env {settings.workspace!r} is not a workspace env")
        hidden = [ctx.resolve_path(folder) for folder in settings.hidden]
        for index, folder in enumerate(hidden):
            if not folder.is_dir():
                raise StepFailed(
                    f"field `hidden[{index}]`: {folder} is not a folder; the path is relative to the bundle"
                )
        grader = agent_tree.fork()
        try:
            return grade(grader, settings, hidden)
        finally:
            grader.close()


def grade(grader: WorkspaceEnv, settings: CodeTestsSettings, hidden: list[Path]) -> dict[str, Any]:
    """Copy the hidden tests into `grader`, run the command, and score what it left behind."""
    binds: dict[str, Path] = {}
    if settings.hidden_mount is not None:
        if not grader.isolated():
            raise StepFailed("field `hidden_mount`: needs bubblewrap (isolation = bwrap); install it or drop the field")
        if len(hidden) > 1:
            raise StepFailed("field `hidden_mount`: give one `hidden` folder to mount")
        binds = {settings.hidden_mount: hidden[0]} if hidden else {}
    else:
        for folder in hidden:
            shutil.copytree(folder, grader.resolve(settings.hidden_to, "hidden_to"), dirs_exist_ok=True)
            grader.mark_changed()  # the tree changed outside the tools
    outcome = grader.run_command(
        settings.command, timeout=settings.timeout, binds=binds, environment=settings.environment
    )
    extra: dict[str, Any] = {"exit_code": outcome.exit_code, "timed_out": outcome.timed_out,
                             "output": outcome.output[-OUTPUT_TAIL:]}  # fmt: skip
    if settings.results == "exit":
        rows = [
            make_row("tests pass (exit status 0)", outcome.exit_code == 0, detail=f"exit status {outcome.exit_code}")
        ]
        return verdict(rows, **extra)
    if settings.results == "reward":
        row, reward = _reward_row(_output_path(grader, settings.reward))
        return verdict([row], reward=reward, **extra)
    cases = read_junit(_output_path(grader, settings.junit))
    if settings.fail_to_pass or settings.pass_to_pass:
        rows, swe = _swe_rows(cases, settings)
        return verdict(rows, **swe, **extra)
    passed = sum(cases.values())
    total = len(cases)
    row = make_row("all tests pass", total > 0 and passed == total, detail=f"{passed} of {total} tests passed")
    return verdict([row], partial_credit=passed / total if total else 0.0, tests=cases, **extra)


def _output_path(grader: WorkspaceEnv, path: str) -> Path:
    if path == sandbox.LOGS_POINT or path.startswith(sandbox.LOGS_POINT + "/"):
        return grader.logs / path[len(sandbox.LOGS_POINT) :].lstrip("/")
    return grader.resolve(path)


def _reward_row(path: Path) -> tuple[Row, float]:
    try:
        text = path.read_text().strip()
    except OSError:
        return make_row("reward", False, score=0.0, detail=f"the tests wrote no reward file ({path.name})"), 0.0
    try:
        reward = float(text.split()[0]) if text else 0.0
    except ValueError:
        return make_row("reward", False, score=0.0, detail=f"reward file holds {text[:80]!r}, not a number"), 0.0
    score = min(max(reward, 0.0), 1.0)
    return make_row("reward", reward >= 1.0, score=score, detail=f"reward {reward}"), reward


def read_junit(path: Path) -> dict[str, bool]:
    """Test id → passed, from a JUnit XML report (pytest's, unittest-xml's, or any `<testcase>` list).

    Each case is keyed `classname.name`; a case with a `failure`, `error` or `skipped` child did not pass.
    A missing or unreadable report means no test ran."""
    try:
        tree = ElementTree.parse(path)
    except (OSError, ElementTree.ParseError):
        return {}
    cases = {}
    for case in tree.iter("testcase"):
        name = case.get("name", "")
        classname = case.get("classname", "")
        key = f"{classname}.{name}" if classname else name
        cases[key] = not any(child.tag in ("failure", "error", "skipped") for child in case)
    return cases


def names_case(listed: str, key: str) -> bool:
    """Whether a listed test id names a JUnit case: `pkg.mod.Class.test`, `Class.test`, `test`, or pytest's
    `path/to/mod.py::Class::test` form all name `pkg.mod.Class.test`."""
    dotted = listed.replace(".py::", ".").replace("::", ".").replace("/", ".")
    return key == dotted or key.endswith("." + dotted)


def _swe_rows(cases: dict[str, bool], settings: CodeTestsSettings) -> tuple[list[Row], dict[str, Any]]:
    states: dict[str, str] = {}
    right = 0
    listed = [(t, "fail_to_pass") for t in settings.fail_to_pass] + [(t, "pass_to_pass") for t in settings.pass_to_pass]
    for test, group in listed:
        found = [ok for key, ok in cases.items() if names_case(test, key)]
        state = "not run" if not found else "passed" if all(found) else "failed"
        states[f"{group}: {test}"] = state
        right += state == "passed"
    resolved = right == len(listed)
    wrong = [name for name, state in states.items() if state != "passed"]
    detail = "every listed test passes" if resolved else f"not passing: {', '.join(wrong)[:500]}"
    rows = [make_row("resolved (fail_to_pass and pass_to_pass)", resolved, detail=detail)]
    return rows, {"partial_credit": right / len(listed), "tests": states}
