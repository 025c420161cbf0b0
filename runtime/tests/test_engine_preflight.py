"""Preflight: a task that cannot run is refused before anything runs, every problem naming file, step and field."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentenv.cli.main import _plugin_commands, kernel_commands
from agentenv_runtime.engine.engine import preflight
from agentenv_runtime.engine.task import TaskError, read_task
from agentenv_testing.installs import CliResult
from agentenv_testing.tasks import write_task
from engine_helpers import engine_host, make_step, runner_for, setup_cli, task_file
from pydantic import BaseModel, ConfigDict, Field

Agentenv = Callable[..., CliResult]


class Typed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = Field(ge=0)
    label: str


async def _nothing(settings: Any, ctx: Any) -> dict[str, Any]:
    raise AssertionError("preflight must not run anything")


class Picky(make_step("picky", _nothing, settings=Typed)):  # type: ignore[misc]
    def preflight(self, settings: BaseModel, step_ids: list[str]) -> list[tuple[str, str]]:
        assert isinstance(settings, Typed)
        return [] if settings.label in step_ids else [("label", f"no step {settings.label!r}; name one of {step_ids}")]


def _error(tmp_path: Path, steps: list[dict[str, Any]], *step_types: Any) -> tuple[Path, str]:
    host = engine_host(*step_types)
    with pytest.raises(TaskError) as caught:
        task = task_file(tmp_path, steps)
        runner_for(host, tmp_path).prepare(task)
    return tmp_path / "tasks" / "t.json", str(caught.value)


@pytest.mark.parametrize("step_type", ["deploy_env", "rubrics_verifier", "run_docker_container"])
def test_unknown_step_type_names_no_distribution_of_its_own(tmp_path: Path, step_type: str) -> None:
    """Which plugin brings a step type is the plugins' metadata to say (a bundle's [requires]), not the runtime's."""
    path, message = _error(tmp_path, [{"id": "first", "type": step_type}])
    assert message.startswith(f"{path}: step 'first': field `type`: unknown step type {step_type!r}; fix: ")
    assert "agentenv-" not in message and "see `agentenv steps list`" in message


def test_unknown_third_party_step_type_names_a_fix_that_exists(tmp_path: Path) -> None:
    path, message = _error(tmp_path, [{"id": "x", "type": "frobnicate"}], Picky)
    assert message.startswith(f"{path}: step 'x': field `type`: unknown step type 'frobnicate'; fix: ")
    named = re.findall(r"agentenv ([a-z-]+)", message.split("fix: ", 1)[1])
    missing = [name for name in named if name not in {*kernel_commands(), *_plugin_commands()}]
    assert not missing, f"the fix names commands that do not exist ({missing}): {message}"
    assert "picky" in message, f"the fix should list the installed step types: {message}"


def test_bad_fields_are_all_reported_with_file_step_and_field(tmp_path: Path) -> None:
    path, message = _error(
        tmp_path,
        [
            {"id": "one", "type": "picky", "count": "many", "label": "one"},
            {"id": "two", "type": "picky", "count": -1, "label": 5, "colour": "red"},
            {"id": "three", "type": "picky", "count": 1, "label": "nowhere"},
            {"id": "four", "type": "nope"},
        ],
        Picky,
    )
    lines = message.splitlines()
    assert len(lines) == 6, message
    assert lines[0].startswith(f"{path}: step 'one' (picky): field `count`: Input should be a valid integer")
    assert lines[1].startswith(f"{path}: step 'two' (picky): field `count`: Input should be greater than or equal to 0")
    assert lines[2].startswith(f"{path}: step 'two' (picky): field `label`: Input should be a valid string")
    assert lines[3].startswith(f"{path}: step 'two' (picky): field `colour`: Extra inputs are not permitted")
    assert lines[4] == f"{path}: step 'three' (picky): field `label`: no step 'nowhere'; name one of " + str(
        ["one", "two", "three", "four"]
    )
    assert lines[5].startswith(f"{path}: step 'four': field `type`: unknown step type 'nope'")


def test_preflight_accepts_a_good_task(tmp_path: Path) -> None:
    host = engine_host(Picky)
    task = task_file(tmp_path, [{"id": "a", "type": "picky", "count": 2, "label": "a"}])
    planned = preflight(task, host)
    assert list(planned) == ["a"]
    assert planned["a"].settings == Typed(count=2, label="a")


class Noted(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str
    note: str = ""


class NamesAStep(make_step("noted", _nothing, settings=Noted)):  # type: ignore[misc]
    """A step type of no plugin: `label` names a step (its preflight says so), `note` is free text."""

    def preflight(self, settings: BaseModel, step_ids: list[str]) -> list[tuple[str, str]]:
        assert isinstance(settings, Noted)
        return [] if settings.label in step_ids else [("label", f"no step {settings.label!r}")]


def test_a_field_naming_a_step_that_does_not_run_first_is_refused(tmp_path: Path) -> None:
    """Any step type's reference fields are found through its own preflight; text that merely equals a step
    id (`note`) is not a reference."""
    path, message = _error(
        tmp_path,
        [
            {"id": "early", "type": "noted", "label": "late", "note": "late"},
            {"id": "apart", "type": "noted", "label": "early", "depends_on": []},
            {"id": "fine", "type": "noted", "label": "early", "note": "late", "depends_on": ["apart", "early"]},
            {"id": "late", "type": "noted", "label": "fine", "note": "{{ late.x }}"},
        ],
        NamesAStep,
    )
    assert message.splitlines() == [
        f"{path}: step 'early' (noted): field `label`: step 'late' is declared after this one and does not run "
        "before it; fix: declare step 'late' before step 'early'",
        f"{path}: step 'apart' (noted): field `label`: step 'early' does not run before this one (this step's "
        "`depends_on` leaves it out, so the two may run at once); fix: add 'early' to `depends_on`",
    ]


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (
            [{"id": "a", "type": "x"}, {"id": "a", "type": "x"}],
            ["step 'a': field `id`: duplicate step id"],
        ),
        (
            [{"id": "a", "type": "x"}, {"id": "b", "type": "x", "depends_on": ["a", "ghost"]}],
            ["step 'b': field `depends_on`: no step 'ghost' (steps: a, b)"],
        ),
        (
            [
                {"id": "a", "type": "x", "depends_on": ["c"]},
                {"id": "b", "type": "x", "depends_on": ["a"]},
                {"id": "c", "type": "x", "depends_on": ["b"]},
            ],
            ["field `depends_on`: steps form a cycle: a → c → b → a"],
        ),
        (
            [
                {"id": "a", "type": "x"},
                {"id": "b", "type": "x", "depends_on": [], "retry": {"from": "a", "times": 2}},
            ],
            ["step 'b': field `retry.from`: 'a' is not this step or one it depends on"],
        ),
        (
            [{"id": "a", "type": "x"}, {"id": "b", "type": "x", "retry": {"from": "zz"}}],
            ["step 'b': field `retry.from`: 'zz' is not this step or one it depends on"],
        ),
        (
            [
                {"id": "a", "type": "x"},
                {"id": "a", "type": "x", "depends_on": ["nope"]},
            ],
            ["step 'a': field `id`: duplicate step id", "step 'a': field `depends_on`: no step 'nope' (steps: a, a)"],
        ),
    ],
    ids=["duplicate", "unknown-dependency", "cycle", "retry-not-ancestor", "retry-unknown", "several-at-once"],
)
def test_graph_problems(tmp_path: Path, steps: list[dict[str, Any]], expected: list[str]) -> None:
    path = write_task({"name": "t", "steps": steps}, tmp_path)
    with pytest.raises(TaskError) as caught:
        read_task(path)
    assert str(caught.value).splitlines() == [f"{path}: {line}" for line in expected]


@pytest.mark.parametrize(
    ("step", "field"),
    [
        ({"id": "s", "type": "x", "fail_task_on_error": "maybe"}, "fail_task_on_error"),
        ({"id": "s", "type": "x", "depends_on": "a"}, "depends_on"),
        ({"id": "s", "type": "x", "retry": {"from": "s", "times": 0}}, "retry.times"),
        ({"id": "s", "type": "x", "retry": {"from": "s", "tries": 2}}, "retry.tries"),
        ({"id": "bad id!", "type": "x"}, "id"),
        ({"id": "s"}, "type"),
    ],
)
def test_common_field_errors_name_file_step_and_field(tmp_path: Path, step: dict[str, Any], field: str) -> None:
    path = write_task({"name": "t", "steps": [{"id": "ok", "type": "x"}, step]}, tmp_path)
    with pytest.raises(TaskError) as caught:
        read_task(path)
    assert str(caught.value).startswith(f"{path}: step {step['id']!r} (steps[1]): field `{field}`: "), caught.value


def test_task_level_errors(tmp_path: Path) -> None:
    path = write_task({"name": "t", "steps": [], "pass_threshold": 2}, tmp_path)
    with pytest.raises(TaskError) as caught:
        read_task(path)
    assert sorted(str(caught.value).splitlines()) == sorted(
        [
            f"{path}: field `steps`: List should have at least 1 item after validation, not 0",
            f"{path}: field `pass_threshold`: Input should be less than or equal to 1",
        ]
    )
    broken = tmp_path / "broken.toml"
    broken.write_text("name = ")
    with pytest.raises(TaskError, match=re.escape(f"{broken}: not valid TOML")):
        read_task(broken)
    with pytest.raises(TaskError, match=re.escape(f"{tmp_path / 'missing.toml'}: cannot read task file")):
        read_task(tmp_path / "missing.toml")


# ---- agentenv run --dry-run -------------------------------------------------------------------------------


@pytest.fixture
def cli_setup(on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(on_path, tmp_path, monkeypatch)
    return tmp_path


def test_dry_run_checks_everything_and_runs_nothing(cli_setup: Path, agentenv: Agentenv) -> None:
    good = write_task(
        {
            "name": "good",
            "steps": [
                {"id": "deploy", "type": "fixture_deploy"},
                {"id": "mark", "type": "fixture_mark", "world": "deploy"},
            ],
        },
        cli_setup / "t",
    )
    result = agentenv("run", str(good), "--dry-run")
    assert result.returncode == 0, result
    assert result.stdout == "good: 2 steps ok (fixture_deploy, fixture_mark)\n"
    listed = agentenv("runs", "list", "--json")
    assert listed.returncode == 0 and listed.json() == [], listed  # nothing ran, nothing was recorded

    bad = write_task(
        {
            "name": "bad",
            "steps": [
                {"id": "deploy", "type": "deploy_env", "envs": ["slack"]},
                {"id": "mark", "type": "fixture_mark", "times": "twice"},
            ],
        },
        cli_setup / "t",
    )
    result = agentenv("run", str(bad), "--dry-run")
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith(f"error: {bad}: step 'deploy': field `type`: unknown step type 'deploy_env'; fix: ")
    assert any(
        line.startswith(f"{bad}: step 'mark' (fixture_mark): field `world`: Field required") for line in lines
    ), lines
    assert any(line.startswith(f"{bad}: step 'mark' (fixture_mark): field `times`: Input should be") for line in lines)

    cyclic = write_task(
        {"name": "cyclic", "steps": [{"id": "a", "type": "fixture_deploy", "depends_on": ["a"]}]}, cli_setup / "t"
    )
    result = agentenv("run", str(cyclic), "--dry-run")
    assert result.returncode == 2
    assert result.stderr == f"error: {cyclic}: field `depends_on`: steps form a cycle: a → a\n"


class Crashes(make_step("crashes", _nothing, settings=Noted)):  # type: ignore[misc]
    """A third-party step type whose own checks have a bug: its preflight raises, its needs_model too."""

    def preflight(self, settings: BaseModel, step_ids: list[str]) -> list[tuple[str, str]]:
        raise KeyError("label")

    def needs_model(self, settings: BaseModel) -> tuple[str, str] | None:
        raise RuntimeError("boom")


def test_a_step_type_whose_checks_raise_is_a_problem_of_its_plugin_not_a_crash(tmp_path: Path) -> None:
    """The run is refused with one line per failing check, naming the step, the type and its plugin, beside the
    task's other problems (a traceback used to end the command)."""
    path, message = _error(
        tmp_path,
        [{"id": "one", "type": "crashes", "label": "x"}, {"id": "two", "type": "picky", "count": -1, "label": "two"}],
        Crashes,
        Picky,
    )
    lines = message.splitlines()
    assert len(lines) == 3, message
    where = f"{path}: step 'one' (crashes): "
    assert lines[0] == (
        f"{where}its preflight raised KeyError: 'label' (a bug in agentenv-engine-tests, which registers step type "
        "'crashes'; fix it there, or report it to its authors)"
    )
    assert lines[1].startswith(f"{where}its needs_model raised RuntimeError: boom (a bug in agentenv-engine-tests")
    assert lines[2].startswith(f"{path}: step 'two' (picky): field `count`")
