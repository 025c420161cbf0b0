"""Bundles: a folder with `bundle.toml`, `tasks/`, `agents/`, `artifacts/`, `envs/` and `evals/`.

`bundle.toml` names the plugins the bundle needs with version ranges; they are checked before anything
runs, and a missing or out-of-range plugin is refused with the exact command that fixes it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv import PluginHost
from agentenv.contracts import kinds
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentenv_runtime.engine.ranges import turned_off, unmet_ranges
from agentenv_runtime.engine.task import TaskError

TASK_SUFFIXES = (".toml", ".json")


class BundleManifest(BaseModel):
    """`bundle.toml`: what `agentenv bundle schema` prints and `read_bundle` checks (other keys are kept for tools)."""

    model_config = ConfigDict(extra="allow", strict=True, title="agentenv bundle.toml")

    name: str | None = Field(None, description="The bundle's name (default: its folder's).")
    description: str = Field("", description="One line on what the bundle's tasks are about.")
    tasks: list[str] = Field(default_factory=list, description="Tasks `agentenv run BUNDLE` runs (default: all).")
    requires: dict[str, str] = Field(
        default_factory=dict, description='Plugins the bundle needs: distribution = "version range", checked first.'
    )
    splits: dict[str, list[str]] = Field(
        default_factory=dict, description="Named task sets: `agentenv run BUNDLE --split NAME`."
    )


@dataclass
class Bundle:
    name: str
    path: Path
    description: str = ""
    requires: dict[str, str] = field(default_factory=dict)
    default_tasks: list[str] = field(default_factory=list)
    splits: dict[str, list[str]] = field(default_factory=dict)
    """Named task sets (`[splits]` in bundle.toml): `agentenv run BUNDLE --split NAME`."""

    def task_files(self) -> dict[str, Path]:
        folder = self.path / "tasks"
        files = sorted(p for p in folder.glob("*") if p.suffix in TASK_SUFFIXES) if folder.is_dir() else []
        return {p.stem: p for p in files}

    def requirement_problems(self, host: PluginHost | None = None) -> list[str]:
        """One message per plugin that is missing or out of range, each with its fix."""
        return [f"{message}; fix: {fix}" for message, fix in self.unmet(host)]

    def unmet(self, host: PluginHost | None = None) -> list[tuple[str, str]]:
        """(message, fix) per plugin of `requires` that is missing, out of range, or installed but not in use
        (disabled, or skipped as broken: it contributes nothing, whatever its version)."""
        where = f"{self.path / 'bundle.toml'}: field `requires"
        unmet = unmet_ranges(self.requires, host, where)  # a range that does not parse: TaskError
        needs = [
            (
                f"bundle {self.name!r} needs {dist}{spec}, "
                + (f"but {dist} {have} is installed" if have else "which is not installed"),
                f"agentenv plugin add '{dist}{spec}'",
            )
            for dist, spec, have in unmet
        ]
        off = turned_off(self.requires, host, but={dist for dist, _, _ in unmet})
        return needs + [(f"bundle {self.name!r} needs {d}{self.requires[d]}; {why}", fix) for d, why, fix in off]


def read_bundle(path: Path) -> Bundle:
    manifest = path / "bundle.toml"
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskError(f"{manifest}: cannot read bundle manifest ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise TaskError(f"{manifest}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise TaskError(f"{manifest}: invalid TOML: {exc or 'nested too deep'}") from None
    try:
        spec = BundleManifest.model_validate(data)
    except ValidationError as exc:
        problems = (_manifest_problem(manifest, err) for err in exc.errors(include_url=False))
        raise TaskError("\n".join(dict.fromkeys(problems))) from None
    return Bundle(
        name=spec.name or path.name,
        path=path,
        description=spec.description,
        requires=dict(spec.requires),
        default_tasks=list(spec.tasks),
        splits=dict(spec.splits),
    )


_FIXES = {
    "name": "must be text, the bundle's name",
    "description": "must be text",
    "tasks": 'must be a list of task names, e.g. tasks = ["resolve-refund"]',
    "requires": 'must be a table of distribution = "version range"',
    "splits": 'must be a table of name = list of task names, e.g. train = ["0"]',
}


def _manifest_problem(manifest: Path, err: Any) -> str:
    """One bundle.toml mistake, as `FILE: field `F`: fix`."""
    loc = [str(part) for part in err["loc"]]
    if loc[0] == "requires" and len(loc) == 2:  # ranges themselves are checked (with `packaging`) before a run
        return f'{manifest}: field `requires.{loc[1]}`: {err["input"]!r} is not a version range (e.g. ">=0.1,<0.2")'
    return f"{manifest}: field `{loc[0]}` {_FIXES.get(loc[0], err['msg'])}"


def find_bundle(target: str, host: PluginHost) -> Bundle:
    """A bundle by folder path, or by the name an installed plugin registered it under."""
    path = Path(target)
    if is_file(path / "bundle.toml"):
        return read_bundle(path.resolve())
    if is_dir(path / "tasks"):  # a bundle of the reference implementation: no bundle.toml, nothing to check
        return Bundle(name=path.resolve().name, path=path.resolve())
    installed = host.registry(kinds.BUNDLES)
    if target in installed:
        return read_bundle(Path(installed[target].obj.path))
    known = ", ".join(sorted(installed)) or "none installed"
    raise TaskError(f"no bundle {target!r}: not a folder with bundle.toml or tasks/, nor an installed bundle ({known})")


def bundle_of_task_file(path: Path, host: PluginHost) -> Bundle | None:
    """The bundle whose `tasks/` folder holds task file `path` (its relative paths are that bundle's), or None."""
    return find_bundle(str(path.parent.parent), host) if path.parent.name == "tasks" else None


def is_file(path: Path) -> bool:
    """`path.is_file()`, False for a name the OS refuses (too long, say) instead of raising."""
    return _answers(path.is_file)


def is_dir(path: Path) -> bool:
    """`path.is_dir()`, False for a name the OS refuses."""
    return _answers(path.is_dir)


def _answers(check: Callable[[], bool]) -> bool:
    try:
        return check()
    except (OSError, ValueError):
        return False
