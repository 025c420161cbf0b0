"""`verify_sandbox`: probes inside a deployed sandbox — files, folders, file contents, commands.

Every probe goes through the sandbox's own interface (`exec` and `get_file`), so it sees exactly what
the agent's sandbox holds, whatever the provider (inline, process, docker, a remote VM). Paths are the
sandbox's paths (relative ones are relative to the sandbox's working directory).
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from typing import Any, ClassVar

from agentenv.contracts import ExecResult, Sandbox, Step, StepContext, StepFailed
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentenv_steps.verifiers.results import Row, Weighted, duplicate_names, make_row, verdict

PROBES = ("file_exists", "dir_exists", "file_matches", "command")


class SandboxCheck(Weighted):
    model_config = ConfigDict(extra="forbid")

    file_exists: str | None = Field(None, description="This path is a regular file in the sandbox.")
    dir_exists: str | None = Field(None, description="This path is a directory in the sandbox.")
    file_matches: str | None = Field(None, description="This file's text matches `regex`.")
    regex: str | None = Field(None, description="Regular expression (re.search, multiline) for `file_matches`.")
    command: list[str] | str | None = Field(None, description="argv list, or a string run with `sh -c`.")
    expect_exit: int = Field(0, description="Exit code `command` must return.")
    timeout: float = Field(60.0, gt=0, description="Seconds `command` may run.")

    @model_validator(mode="after")
    def _one_probe(self) -> SandboxCheck:
        given = [p for p in PROBES if getattr(self, p) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(PROBES)} (got {', '.join(given) or 'none'})")
        if (self.file_matches is None) != (self.regex is None):
            raise ValueError("`file_matches` and `regex` go together: the file, and what its text must match")
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"`regex` is not a valid regular expression: {exc}") from exc
        if isinstance(self.command, list) and not self.command:
            raise ValueError("`command` is an empty argv list; give the program and its arguments")
        for field in ("expect_exit", "timeout"):
            if field in self.model_fields_set and self.command is None:
                raise ValueError(f"`{field}` belongs with `command`")
        return self

    @property
    def probe(self) -> str:
        return next(p for p in PROBES if getattr(self, p) is not None)

    def argv(self) -> list[str]:
        return ["sh", "-c", self.command] if isinstance(self.command, str) else list(self.command or [])

    def label(self) -> str:
        if self.name:
            return self.name
        if self.command is not None:
            shown = self.command if isinstance(self.command, str) else " ".join(self.command)
            return f"command {shown!r} exits {self.expect_exit}"
        if self.file_matches is not None:
            return f"{self.file_matches} matches {self.regex!r}"
        return f"{self.probe.replace('_exists', '')} {getattr(self, self.probe)} exists"


class VerifySandboxSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sandbox: str = Field(description="Id of the step that deployed the sandbox (deploy_sandbox).")
    checks: list[SandboxCheck] = Field(description="Probes: file_exists, dir_exists, file_matches + regex, command.")


def as_sandbox(found: Any, step_id: str) -> Sandbox:
    """The Sandbox a step created (or the `sandbox` of an agent or env deployed in one)."""
    if isinstance(found, Sandbox):
        return found
    inner = getattr(found, "sandbox", None)
    if isinstance(inner, Sandbox):
        return inner
    raise StepFailed(
        f"field `sandbox`: step {step_id!r} made a {type(found).__name__}, not a sandbox; name a deploy_sandbox step"
    )


class VerifySandbox(Step[VerifySandboxSettings]):
    """Probe a sandbox: files and folders exist, a file matches a regex, a command exits as expected."""

    name = "verify_sandbox"
    description = "Probes in a sandbox: file exists, dir exists, file matches a regex, a command exits as expected."
    Settings = VerifySandboxSettings
    verifier: ClassVar[bool] = True

    def preflight(self, settings: VerifySandboxSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = []
        if settings.sandbox not in step_ids:
            problems.append(("sandbox", f"no step {settings.sandbox!r} in this task; name the deploy_sandbox step"))
        if not settings.checks:
            problems.append(("checks", 'the list is empty; add a probe, e.g. {file_exists = "out/report.md"}'))
        if dupes := duplicate_names([c.label() for c in settings.checks]):
            problems.append(("checks", f"criterion names repeat ({', '.join(dupes)}); give each check its own `name`"))
        return problems

    async def execute(self, settings: VerifySandboxSettings, ctx: StepContext) -> dict[str, Any]:
        sandbox = as_sandbox(ctx.resource(settings.sandbox, object), settings.sandbox)
        rows = [await asyncio.to_thread(self._probe, sandbox, check) for check in settings.checks]
        return verdict(rows, sandbox=settings.sandbox)

    @staticmethod
    def _probe(sandbox: Sandbox, check: SandboxCheck) -> Row:
        label = check.label()
        if check.probe in ("file_exists", "dir_exists"):
            path = str(getattr(check, check.probe))
            flag = "-f" if check.probe == "file_exists" else "-d"
            outcome = _exec(sandbox, ["test", flag, path], 30.0, label)
            kind = "file" if flag == "-f" else "directory"
            passed = outcome.exit_code == 0
            return make_row(
                label,
                passed,
                weight=check.weight,
                detail=f"{path} {'is' if passed else 'is not'} a {kind} in the sandbox",
            )
        if check.probe == "file_matches":
            path = str(check.file_matches)
            try:
                text = sandbox.get_file(path).decode("utf-8", errors="replace")
            except Exception as exc:  # a missing file is a failed criterion, not a broken step
                return make_row(
                    label, False, weight=check.weight, detail=f"cannot read {path}: {type(exc).__name__}: {exc}"
                )
            passed = re.search(check.regex or "", text, re.MULTILINE) is not None
            return make_row(
                label,
                passed,
                weight=check.weight,
                detail=f"{path} ({len(text)} chars) {'matches' if passed else 'does not match'} {check.regex!r}",
            )
        outcome = _exec(sandbox, check.argv(), check.timeout, label)
        passed = outcome.exit_code == check.expect_exit
        tail = (outcome.stderr or outcome.stdout).strip()[-300:]
        return make_row(
            label,
            passed,
            weight=check.weight,
            detail=f"exit {outcome.exit_code} (expected {check.expect_exit})" + (f": {tail}" if tail else ""),
        )


def _exec(sandbox: Sandbox, argv: list[str], timeout: float, label: str) -> ExecResult:
    """Run in the sandbox; a sandbox that cannot run anything fails the step (it is not the agent's fault)."""
    try:
        return sandbox.exec(argv, timeout=timeout)
    except (TimeoutError, subprocess.TimeoutExpired):  # the probed program hung: a failed criterion
        return ExecResult(exit_code=-1, stderr=f"timed out after {timeout:g}s")
    except Exception as exc:
        raise StepFailed(
            f"check {label!r}: the sandbox could not run {argv!r}: {type(exc).__name__}: {exc}; is it still running?"
        ) from exc
