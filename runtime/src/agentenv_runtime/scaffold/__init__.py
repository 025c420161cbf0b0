"""`agentenv plugin new`: write a plugin distribution that works as generated, for each contribution kind.

The files are templates beside this module (`common/` for every kind, one folder per kind), filled with
`string.Template` (`${name}` placeholders leave Python's braces alone). The generated distribution declares the
kernel and runtime ranges that include the running versions, registers its one example contribution by
`ClassRef`, and tests it with the `agentenv-testing` kit for its kind, so `pytest` and `agentenv plugin check`
pass before the author changes a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from importlib.resources import files
from pathlib import Path
from string import Template

from agentenv import FIRST_PARTY, installed_version, installer

NAME = re.compile(r"^[a-z][a-z0-9_]{1,40}$")


@dataclass(frozen=True)
class Kind:
    impl: str
    """Module (and template) name of the contribution: `env`, `step`, …"""
    suffix: str
    """Appended to the class name: `PhoneEnv`, `PhoneStep`, …"""
    hook: str
    kit: str
    noun: str
    summary: str
    try_it: str
    ref_kind: str = ""
    data: tuple[tuple[str, str], ...] = ()
    """(template, path in the package) of data files, e.g. the env's example artifact."""
    test_needs: tuple[str, ...] = ()
    """First-party distributions the generated tests use beyond the kit (the env's task deploys it with
    `deploy_env`, from agentenv-steps): its `test` extra declares them, so a clean install passes its tests."""


KINDS: dict[str, Kind] = {
    "env": Kind(
        "env", "Env", "agentenv_register_envs", "EnvConformance", "env (a simulated app)",
        "the `{name}` env, a simulated app.", "agentenv env card {name}",
        data=(("example.json", "artifacts/example.json"),), test_needs=("agentenv-steps",),
    ),
    "step": Kind(
        "step", "Step", "agentenv_register_steps", "StepConformance", "step type",
        "the `{name}` step type.", "agentenv steps show {name}",
    ),
    "sandbox": Kind(
        "provider", "Provider", "agentenv_register_sandbox_providers", "SandboxProviderConformance",
        "sandbox provider", "the `{name}` sandbox provider.", "agentenv plugin show {dist}",
    ),
    "store": Kind(
        "store", "Store", "agentenv_register_stores", "ObjectStoreConformance", "object store backend",
        "the `{name}` object store.", "agentenv config show   # with [store] object = \"{name}\"",
        ref_kind=', kind="object"',
    ),
    "trigger": Kind(
        "trigger", "Trigger", "agentenv_register_trigger_kinds", "TriggerKindConformance", "trigger kind",
        "the `{name}` trigger kind for world rules.", "agentenv plugin show {dist}",
    ),
    "agent": Kind(
        "agent", "Agent", "agentenv_register_agent_kinds", "AgentKindConformance", "agent kind",
        "the `{name}` agent kind.", "agentenv run hello --agent {name}",
    ),
}  # fmt: skip


class ScaffoldError(ValueError):
    """A name, kind or folder `plugin new` cannot use; the message says what to give instead."""


def compatible_range(dist: str, fallback: str) -> str:
    """`dist>=X.Y,<X.Y+1` around the installed version of `dist` (`fallback` when it is not installed)."""
    try:
        version = metadata.version(dist)
    except metadata.PackageNotFoundError:
        version = fallback
    major, minor = (int(part) for part in version.split(".")[:2])
    return f"{dist}>={major}.{minor},<{major}.{minor + 1}"


def names(name: str) -> dict[str, str]:
    """The distribution, module and class names of a plugin called `name` (`phone` → `agentenv-phone`, …)."""
    if not NAME.match(name):
        raise ScaffoldError(
            f"NAME {name!r}: use lower-case letters, digits and '_' (2-41 characters, starting with a letter), "
            "e.g. `phone` or `board_game`"
        )
    camel = "".join(part.title() for part in name.split("_"))
    dist = f"agentenv-{name.replace('_', '-')}"
    taken = "a distribution of agentenv itself" if dist in FIRST_PARTY else installed_version(dist) and "installed here"
    if taken:  # installing the new one would replace it, and its names would clash with the original's
        raise ScaffoldError(
            f"NAME {name!r}: {dist} is {taken}; a plugin of that name would replace it. Pick another, e.g. "
            f"`my_{name}` or `{name}_sim`"
        )
    return {"name": name, "dist": dist, "module": f"agentenv_{name}", "camel": camel}


def next_steps(target: Path) -> str:
    """What to run after `plugin new`, with this environment's own installer and tools by path: a uv-made
    environment has no pip, and its `bin/` is often not on PATH (`./dev agentenv plugin new …`)."""
    import shlex
    import sys

    tool, prefix = installer()
    install = [*prefix, "install", *(["--python", sys.executable] if tool == "uv" else []), "-e", ".[test]"]
    python = shlex.quote(sys.executable)
    return (
        f"cd {shlex.quote(str(target))} && {shlex.join(install)} && {python} -m pytest && "
        f"{python} -m agentenv plugin check"
    )


def render(kind_name: str, name: str) -> dict[str, str]:
    """Relative path → content of every file of the new distribution."""
    from agentenv_runtime import __version__ as runtime_version

    if kind_name not in KINDS:
        raise ScaffoldError(f"--kind {kind_name!r}: choose one of {', '.join(KINDS)}")
    kind = KINDS[kind_name]
    n = names(name)
    summary = kind.summary.format(name=name)
    values = {
        **n,
        "kind": kind_name,
        "kind_noun": kind.noun,
        "impl": kind.impl,
        "Class": n["camel"] if n["camel"].endswith(kind.suffix) else n["camel"] + kind.suffix,
        "hook": kind.hook,
        "kit": kind.kit,
        "ref_kind": kind.ref_kind,
        "summary": f"An agentenv plugin: {summary}",
        "summary_lower": summary[0].lower() + summary[1:],
        "try_it": kind.try_it.format(name=name, dist=n["dist"]),
        "kernel_range": compatible_range("agentenv-kernel", runtime_version),
        "runtime_range": compatible_range("agentenv-runtime", runtime_version),
        "test_extra": ", ".join(
            f'"{compatible_range(dist, runtime_version)}"' for dist in ("agentenv-testing", *kind.test_needs)
        ),
    }
    root = files(__name__)
    package = f"src/{n['module']}"
    layout = {
        "pyproject.toml": "common/pyproject.toml.tmpl",
        "README.md": "common/README.md.tmpl",
        "CHANGELOG.md": "common/CHANGELOG.md.tmpl",
        f"{package}/__init__.py": "common/__init__.py.tmpl",
        f"{package}/plugin.py": "common/plugin.py.tmpl",
        f"{package}/{kind.impl}.py": f"{kind_name}/{kind.impl}.py.tmpl",
        f"tests/test_{name}.py": f"{kind_name}/test.py.tmpl",
        **{f"{package}/{target}": f"{kind_name}/{source}.tmpl" for source, target in kind.data},
    }
    rendered = {
        path: Template(root.joinpath(template).read_text(encoding="utf-8")).substitute(values)
        for path, template in layout.items()
    }
    rendered[f"{package}/py.typed"] = ""
    return rendered


def scaffold(kind_name: str, name: str, folder: Path | None = None) -> tuple[Path, list[str]]:
    """Write the new distribution into `folder` (default `./agentenv-NAME`); returns it and the files written."""
    content = render(kind_name, name)
    target = folder if folder is not None else Path.cwd() / names(name)["dist"]
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ScaffoldError(f"--dir {target}: it exists and is not an empty folder; name a new one")
    for relative, text in content.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return target, sorted(content)
