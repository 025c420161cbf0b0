"""Bundles: a folder with `bundle.toml`, `tasks/`, `agents/`, `artifacts/`, `envs/` and `evals/`.

`bundle.toml` names the plugins the bundle needs with version ranges; they are checked before anything
runs, and a missing or out-of-range plugin is refused with the exact command that fixes it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from agentenv.engine.task import TaskError
from agentenv.plugins.compat import installed_version
from agentenv.plugins.host import PluginHost

TASK_SUFFIXES = (".toml", ".json")


@dataclass
class Bundle:
    name: str
    path: Path
    description: str = ""
    requires: dict[str, str] = field(default_factory=dict)
    default_tasks: list[str] = field(default_factory=list)

    def task_files(self) -> dict[str, Path]:
        folder = self.path / "tasks"
        files = sorted(p for p in folder.glob("*") if p.suffix in TASK_SUFFIXES) if folder.is_dir() else []
        return {p.stem: p for p in files}

    def requirement_problems(self, host: PluginHost | None = None) -> list[str]:
        """One message per plugin that is missing or out of range, each with its fix.

        Versions of plugins come from the host's (cached) discovery; other distributions are looked up."""
        problems = []
        known = {info.dist: info.version for info in host.infos} if host is not None else {}
        for dist, spec in self.requires.items():
            have = known[dist] if dist in known else installed_version(dist)
            if have is None:
                problems.append(
                    f"bundle {self.name!r} needs {dist}{spec}, which is not installed; "
                    f"fix: agentenv plugin add '{dist}{spec}'"
                )
            elif not SpecifierSet(spec).contains(Version(have), prereleases=True):
                problems.append(
                    f"bundle {self.name!r} needs {dist}{spec}, but {dist} {have} is installed; "
                    f"fix: agentenv plugin add '{dist}{spec}'"
                )
        return problems


def read_bundle(path: Path) -> Bundle:
    manifest = path / "bundle.toml"
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskError(f"{manifest}: cannot read bundle manifest ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{manifest}: invalid TOML: {exc}") from exc
    requires = data.get("requires", {})
    if not isinstance(requires, dict):
        raise TaskError(f'{manifest}: field `requires` must be a table of distribution = "version range"')
    for dist, spec in requires.items():
        try:
            SpecifierSet(spec)
        except (InvalidSpecifier, TypeError) as exc:
            raise TaskError(
                f'{manifest}: field `requires.{dist}`: {spec!r} is not a version range (e.g. ">=0.1,<0.2")'
            ) from exc
    return Bundle(
        name=str(data.get("name", path.name)),
        path=path,
        description=str(data.get("description", "")),
        requires=dict(requires),
        default_tasks=list(data.get("tasks", [])),
    )


def find_bundle(target: str, host: PluginHost) -> Bundle:
    """A bundle by folder path, or by the name an installed plugin registered it under."""
    path = Path(target)
    if (path / "bundle.toml").is_file():
        return read_bundle(path.resolve())
    installed = host.registry("bundles")
    if target in installed:
        return read_bundle(Path(installed[target].obj.path))
    known = ", ".join(sorted(installed)) or "none installed"
    raise TaskError(f"no bundle {target!r}: not a folder with bundle.toml, nor an installed bundle ({known})")
