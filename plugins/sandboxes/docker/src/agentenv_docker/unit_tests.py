"""`run_container_unit_tests_verifier`: run a test command in a container deployed earlier and score it.

    {"id": "tests", "type": "run_container_unit_tests_verifier", "sandbox": "box",
     "command": "python3 -m unittest discover -s tests", "timeout": 300}

The score is 1.0 when the command exits 0, else 0.0 — or, with `reward_file`, the number the tests wrote
there (plain text `0.75`, or JSON `{"reward": 0.75}`), clamped to 0..1. `files` are written into the
container first (test files the agent never saw). Works with any sandbox that runs commands; the
containers come from `deploy_sandbox` (provider `docker`) or `run_docker_container`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agentenv.contracts import Sandbox, Step, StepContext, StepFailed
from pydantic import BaseModel, ConfigDict, Field


class UnitTestsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sandbox: str = Field(description="The deploy_sandbox or run_docker_container step whose container runs the tests.")
    command: str | list[str] = Field(description="Test command: a string runs with `sh -c`, a list as argv.")
    timeout: float = Field(600.0, gt=0, description="Seconds the tests may run; past it they are killed (score 0).")
    reward_file: str | None = Field(
        None, description="Path in the container of the reward the tests write (a number, or JSON {reward})."
    )
    files: dict[str, str] = Field(default_factory=dict, description="Files written into the container first.")
    output_chars: int = Field(4000, ge=0, description="How much of the end of stdout/stderr to keep in the output.")


class RunContainerUnitTestsVerifier(Step[UnitTestsSettings]):
    name = "run_container_unit_tests_verifier"
    description = "Run a test command in a container deployed earlier; score from its exit code or a reward file."
    Settings = UnitTestsSettings
    verifier = True

    def preflight(self, settings: UnitTestsSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = []
        if settings.sandbox not in step_ids:
            problems.append(
                (
                    "sandbox",
                    f"no step {settings.sandbox!r} in this task; name the deploy_sandbox or "
                    f"run_docker_container step (steps: {', '.join(step_ids)})",
                )
            )
        if not settings.command:
            problems.append(("command", "give the test command"))
        return problems

    async def execute(self, settings: UnitTestsSettings, ctx: StepContext) -> dict[str, Any]:
        try:
            box = ctx.resource(settings.sandbox, Sandbox)
        except StepFailed as exc:
            raise StepFailed(
                f"field `sandbox`: {exc} (name a deploy_sandbox (provider docker) or run_docker_container step)"
            ) from None
        for path, content in settings.files.items():
            await asyncio.to_thread(box.put_file, path, content.encode())
        if settings.reward_file is not None:  # a reward left from an earlier run must not count
            await asyncio.to_thread(box.exec, ["rm", "-f", settings.reward_file], timeout=30)
        argv = ["sh", "-c", settings.command] if isinstance(settings.command, str) else list(settings.command)
        ctx.log(f"{ctx.step_id}: running {settings.command!r} in {getattr(box, 'id', settings.sandbox)}")
        done = await asyncio.to_thread(box.exec, argv, timeout=settings.timeout)
        timed_out = done.exit_code == 124
        passed = done.exit_code == 0
        if settings.reward_file is None:
            score = 1.0 if passed else 0.0
            detail = "timed out" if timed_out else f"exit code {done.exit_code}"
            row = {"criterion": "tests pass", "passed": passed, "score": score, "weight": 1.0, "detail": detail}
        else:
            score, detail = await asyncio.to_thread(read_reward, box, settings.reward_file)
            row = {"criterion": "reward", "passed": score >= 1.0, "score": score, "weight": 1.0, "detail": detail}
        keep = settings.output_chars
        return {
            "score": score,
            "rows": [row],
            "exit_code": done.exit_code,
            "timed_out": timed_out,
            "stdout": done.stdout[-keep:] if keep else "",
            "stderr": done.stderr[-keep:] if keep else "",
        }


def read_reward(box: Any, path: str) -> tuple[float, str]:
    """(score 0..1, how it was read); a missing or unreadable reward scores 0."""
    try:
        raw = box.get_file(path).decode("utf-8", errors="replace").strip()
    except (FileNotFoundError, IsADirectoryError):
        return 0.0, f"no reward file {path} (the tests did not write one)"
    try:
        value = json.loads(raw)
        if isinstance(value, dict):
            value = value.get("reward", value.get("score"))
        reward = float(value)
    except (ValueError, TypeError):
        return 0.0, f'reward file {path} holds {raw[:80]!r}, not a number or {{"reward": number}}'
    clamped = min(1.0, max(0.0, reward))
    note = "" if clamped == reward else f" (clamped from {reward:g})"
    return clamped, f"reward {clamped:g} from {path}{note}"
