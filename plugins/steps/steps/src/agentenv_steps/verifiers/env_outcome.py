"""`env_outcome_verifier`: grade the end state of a deployed world.

Three ways to say what a good outcome is (give exactly one):
- `checks`: SQL queries on an app's state, each with an expected first value (or truthy);
- `script`: a Python file in the bundle defining `verify(world)`;
- `function`: an importable `module:function` with the same signature.

`verify(world)` returns `{criterion: bool}` or a list of `{criterion, passed, weight?, score?, detail?}`
(it may be async). Rows come out one per criterion; the score is the weighted fraction passed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from agentenv.contracts import Step, StepContext, StepFailed
from agentenv_runtime import World
from pydantic import BaseModel, ConfigDict, Field

from agentenv_steps.verifiers.results import Row, Weighted, duplicate_names, make_row, verdict
from agentenv_steps.verifiers.state import first_value, sql_holds


class SqlCheck(Weighted):
    """One SQL criterion on an app's state."""

    model_config = ConfigDict(extra="forbid")

    env: str | None = Field(None, description="App in the world whose state `sql` reads (optional with one app).")
    sql: str = Field(min_length=1, description="A read-only query; its first value is compared.")
    equals: Any = Field(None, description="Expected first value; absent = the value must be truthy.")

    def label(self) -> str:
        return self.name or f"{self.env + ': ' if self.env else ''}{' '.join(self.sql.split())[:80]}"


class EnvOutcomeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="Id of the deploy_env step whose world is graded.")
    checks: list[SqlCheck] | None = Field(None, description="SQL criteria: `{name, env, sql, equals, weight}`.")
    script: str | None = Field(None, description="Python file (relative to the bundle) defining `verify(world)`.")
    function: str | None = Field(None, description="`module:function` taking the world, instead of a script.")


class EnvOutcomeVerifier(Step[EnvOutcomeSettings]):
    """Run SQL checks, a verifier script or a function against the live world; one row per criterion."""

    name = "env_outcome_verifier"
    description = "Grade the world's end state: SQL checks, a bundle script's verify(world), or module:function."
    Settings = EnvOutcomeSettings
    verifier: ClassVar[bool] = True

    def preflight(self, settings: EnvOutcomeSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = []
        if settings.env not in step_ids:
            problems.append(
                ("env", f"no step {settings.env!r} in this task; name the deploy_env step whose world to grade")
            )
        given = [f for f in ("checks", "script", "function") if getattr(settings, f) is not None]
        if len(given) != 1:
            problems.append(
                (
                    given[1] if len(given) > 1 else "checks",
                    "give exactly one of `checks` (SQL), `script` (a .py file) or `function` (module:function)",
                )
            )
        if settings.checks is not None and not settings.checks:
            problems.append(("checks", "the list is empty; add at least one `{name, env, sql}` check"))
        if settings.checks and (dupes := duplicate_names([c.label() for c in settings.checks])):
            problems.append(("checks", f"criterion names repeat ({', '.join(dupes)}); give each check its own `name`"))
        if settings.function is not None and ":" not in settings.function:
            problems.append(
                ("function", f"{settings.function!r} is not `module:function` (e.g. mybundle.checks:verify)")
            )
        if settings.script is not None and not settings.script.endswith(".py"):
            problems.append(("script", f"{settings.script!r} is not a Python file; give the path of a .py file"))
        return problems

    async def execute(self, settings: EnvOutcomeSettings, ctx: StepContext) -> dict[str, Any]:
        world = ctx.resource(settings.env, World)
        if settings.checks:
            rows = [self._sql_row(world, i, check) for i, check in enumerate(settings.checks)]
            return verdict(rows, env=settings.env)
        if settings.script is not None:
            func, where = load_script(ctx.resolve_path(settings.script)), f"field `script` ({settings.script})"
        else:
            func, where = load_function(settings.function or ""), f"field `function` ({settings.function})"
        rows = rows_from_result(await call_verify(func, world, where), where)
        return verdict(rows, env=settings.env)

    @staticmethod
    def _sql_row(world: World, index: int, check: SqlCheck) -> Row:
        value = first_value(world, check.env, check.sql, f"checks[{index}] ({check.label()})")
        has_equals = "equals" in check.model_fields_set
        passed = sql_holds(value, check.equals, has_equals)
        wanted = f"expected {check.equals!r}" if has_equals else "expected a truthy value"
        return make_row(check.label(), passed, weight=check.weight, detail=f"got {value!r}, {wanted}")


def load_script(path: Path) -> Callable[..., Any]:
    """`verify` from a Python file, loaded under a name unique to its path (two bundles never clash)."""
    if not path.is_file():
        raise StepFailed(
            f"field `script`: {path} does not exist; the path is relative to the bundle folder "
            "(or the task file's folder)"
        )
    module_name = "agentenv_verifier_script_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise StepFailed(f"field `script`: cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise StepFailed(f"field `script`: importing {path} failed: {type(exc).__name__}: {exc}") from exc
    func = getattr(module, "verify", None)
    if not callable(func):
        raise StepFailed(
            f"field `script`: {path} defines no `verify(world)` function; add one that returns "
            "{criterion: bool} or a list of {criterion, passed, weight}"
        )
    return func  # type: ignore[no-any-return]


def load_function(target: str) -> Callable[..., Any]:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise StepFailed(f"field `function`: cannot import {module_name!r}: {type(exc).__name__}: {exc}") from exc
    func = getattr(module, attr, None)
    if not callable(func):
        raise StepFailed(f"field `function`: {module_name} has no function {attr!r}")
    return func  # type: ignore[no-any-return]


async def call_verify(func: Callable[..., Any], world: World, where: str) -> Any:
    """Call the user's verifier (sync or async); its crash fails the step, never passes it."""
    try:
        result = func(world)
        if inspect.isawaitable(result):
            result = await result
    except StepFailed:
        raise
    except Exception as exc:
        raise StepFailed(f"{where}: verify(world) raised {type(exc).__name__}: {exc}") from exc
    return result


def rows_from_result(result: Any, where: str) -> list[Row]:
    """Rows from `{criterion: bool}` or `[{criterion|name, passed, weight?, score?, detail?}]`, strictly."""
    shape = "return {criterion: bool} or a list of {criterion, passed, weight?, score?, detail?}"
    rows: list[Row] = []
    if isinstance(result, dict):
        for criterion, passed in result.items():
            if not isinstance(passed, bool):
                raise StepFailed(f"{where}: criterion {criterion!r} is {passed!r}, not true/false; {shape}")
            rows.append(make_row(str(criterion), passed))
    elif isinstance(result, list):
        for i, item in enumerate(result):
            rows.append(_row_from_item(item, f"{where}: item {i}", shape))
    else:
        raise StepFailed(f"{where}: verify(world) returned {type(result).__name__}; {shape}")
    if not rows:
        raise StepFailed(f"{where}: verify(world) returned no criteria; {shape}")
    if dupes := duplicate_names([r["criterion"] for r in rows]):
        raise StepFailed(f"{where}: criterion names repeat ({', '.join(dupes)}); give each its own name")
    return rows


def _row_from_item(item: Any, where: str, shape: str) -> Row:
    if not isinstance(item, dict):
        raise StepFailed(f"{where} is {type(item).__name__}; {shape}")
    criterion = item.get("criterion", item.get("name"))
    passed = item.get("passed")
    if not isinstance(criterion, str) or not criterion:
        raise StepFailed(f"{where} has no `criterion` name; {shape}")
    if not isinstance(passed, bool):
        raise StepFailed(f"{where} ({criterion}): `passed` is {passed!r}, not true/false; {shape}")
    weight, score = item.get("weight", 1.0), item.get("score")
    if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
        raise StepFailed(f"{where} ({criterion}): `weight` must be a positive number, not {weight!r}")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1):
        raise StepFailed(f"{where} ({criterion}): `score` must be a number from 0 to 1, not {score!r}")
    return make_row(criterion, passed, weight=weight, detail=str(item.get("detail", "")), score=score)
