"""Install throw-away plugin distributions for tests, the way an installer would, and run the CLI on them.

`install_fixture_plugin` writes a module plus a `<dist>-<version>.dist-info/` folder (METADATA,
entry_points.txt, RECORD) into a directory. With that directory on `PYTHONPATH` (or `sys.path`),
`importlib.metadata` finds the distribution exactly like a pip-installed one, so the kernel's
discovery, requirement checks and loading run for real, in a fraction of the time a wheel install takes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv import __version__ as KERNEL_VERSION
from agentenv_runtime import __version__ as RUNTIME_VERSION

_major, _minor = (int(part) for part in KERNEL_VERSION.split(".")[:2])
KERNEL_RANGE = f"agentenv-kernel>={_major}.{_minor},<{_major}.{_minor + 1}"
"""A kernel range that includes the installed kernel, the default requirement of fixture plugins."""

_rt_major, _rt_minor = (int(part) for part in RUNTIME_VERSION.split(".")[:2])
RUNTIME_RANGE = f"agentenv-runtime>={_rt_major}.{_rt_minor},<{_rt_major}.{_rt_minor + 1}"
"""The runtime range of fixture plugins whose contributions are runtime classes (envs, steps)."""

EXCLUDING_KERNEL_RANGE = f"agentenv-kernel>={_major + 1}.0,<{_major + 2}.0"
"""A kernel range that excludes the installed kernel."""

AGENTENV_VARS = ("AGENTENV_PLUGINS", "AGENTENV_DISABLE_PLUGINS", "AGENTENV_CONFIG")


def dist_info_dirname(dist: str, version: str) -> str:
    """The folder name an installer gives a distribution's metadata (PEP 427 escaping of the name)."""
    return f"{dist.replace('-', '_').replace('.', '_')}-{version}.dist-info"


def install_fixture_plugin(
    root: Path,
    dist: str,
    version: str,
    entry_name: str | None,
    module_name: str,
    source: str,
    requires: Sequence[str] = (KERNEL_RANGE,),
    extra_modules: Mapping[str, str] | None = None,
    metadata: Sequence[str] = (),
) -> Path:
    """Install a fixture distribution into `root` and return `root`.

    `module_name` (a plain module, `a.b` makes package `a`) gets `source`; `entry_name`, when given,
    names the entry point `entry_name = module_name` in the `agentenv.plugins` group. `extra_modules`
    maps further module names to sources (contributed classes, fake heavy SDKs, …); `metadata` adds lines to
    METADATA as they are (`Project-URL: Homepage, https://…`).
    """
    root.mkdir(parents=True, exist_ok=True)
    for name, text in {module_name: source, **(extra_modules or {})}.items():
        _write_module(root, name, text)
    meta = root / dist_info_dirname(dist, version)
    meta.mkdir()
    lines = ["Metadata-Version: 2.1", f"Name: {dist}", f"Version: {version}"]
    lines += [f"Requires-Dist: {req}" for req in requires] + list(metadata)
    (meta / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if entry_name is not None:
        (meta / "entry_points.txt").write_text(f"[agentenv.plugins]\n{entry_name} = {module_name}\n", encoding="utf-8")
    (meta / "RECORD").write_text("", encoding="utf-8")
    (meta / "INSTALLER").write_text("agentenv-tests\n", encoding="utf-8")
    return root


def _write_module(root: Path, name: str, text: str) -> None:
    parts = name.split(".")
    folder = root
    for package in parts[:-1]:
        folder = folder / package
        folder.mkdir(exist_ok=True)
        init = folder / "__init__.py"
        if not init.exists():
            init.write_text("", encoding="utf-8")
    (folder / f"{parts[-1]}.py").write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


# ---- running the CLI ---------------------------------------------------------------------------------


@dataclass
class CliResult:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def __repr__(self) -> str:
        head = f"agentenv {' '.join(self.args)} → exit {self.returncode}"
        return f"{head}\n--stdout--\n{self.stdout}\n--stderr--\n{self.stderr}"


def cli_env(paths: Iterable[Path] = (), **extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: fixture dirs first on PYTHONPATH, no inherited agentenv vars."""
    env = {k: v for k, v in os.environ.items() if k not in AGENTENV_VARS}
    pythonpath = [str(p) for p in paths]
    if env.get("PYTHONPATH"):
        pythonpath.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def run_cli(
    *args: str,
    paths: Iterable[Path] = (),
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> CliResult:
    """`python -m agentenv ARGS` in a subprocess with the fixture dirs `paths` installed."""
    full_env = cli_env(paths, **dict(env or {}))
    proc = subprocess.run(
        [sys.executable, "-m", "agentenv", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
    )
    return CliResult(list(args), proc.returncode, proc.stdout, proc.stderr)


_BATCH = """
import contextlib, importlib, io, json, os, sys
from agentenv.cli.main import main
from agentenv.plugins.compat import installed_version
from agentenv.plugins.host import reset_host

results = {}
for key, (args, root, env) in json.loads(sys.argv[1]).items():
    if root:
        sys.path.insert(0, root)
    importlib.invalidate_caches()
    installed_version.cache_clear()
    reset_host()
    saved = dict(os.environ)
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    os.environ.clear()
    os.environ.update(saved)
    if root:
        sys.path.remove(root)
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(root):
                del sys.modules[name]
    results[key] = [code, out.getvalue(), err.getvalue()]
print(json.dumps(results))
"""


@dataclass(frozen=True)
class CliRun:
    """One command of a batch: its arguments, the fixture dir to install (or None) and extra env vars."""

    args: Sequence[str]
    root: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)


def run_cli_batch(runs: Mapping[str, CliRun]) -> dict[str, CliResult]:
    """Several `agentenv` commands in one fresh interpreter (much cheaper than one interpreter each).

    Each run gets a fresh plugin host and requirement cache, only its own fixture dir on `sys.path` (its
    modules are forgotten afterwards, so the next run imports them again) and its own env vars; the
    dispatcher `agentenv.cli.main.main` runs exactly as the console script calls it.
    """
    payload = {key: [list(run.args), str(run.root) if run.root else "", dict(run.env)] for key, run in runs.items()}
    proc = subprocess.run(
        [sys.executable, "-c", _BATCH, json.dumps(payload)], capture_output=True, text=True, env=cli_env(), timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return {
        key: CliResult(list(runs[key].args), code, out, err)
        for key, (code, out, err) in json.loads(proc.stdout).items()
    }


def run_python(code: str, *, paths: Iterable[Path] = (), env: Mapping[str, str] | None = None) -> str:
    """Run `python -c code` with the fixture dirs installed; its stdout (fails loudly on a non-zero exit)."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=cli_env(paths, **dict(env or {})),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# ---- plugin sources ------------------------------------------------------------------------------------

GOOD_ENV_MODULES = {
    "fixture_good_env": """
        from agentenv_runtime import Env, tool


        class NotesEnv(Env):
            name = "fixture_notes"
            description = "A one-table notes app used by the kernel's plugin tests."
            schema = "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);"

            @tool
            def add_note(self, text: str) -> dict:
                '''Add a note.

                Args:
                    text: What to write.
                '''
                cur = self.db.execute("INSERT INTO notes (text) VALUES (?)", (text,))
                return {"id": cur.lastrowid}
    """,
}

GOOD_PLUGIN = """
    from agentenv.hookspecs import hookimpl


    @hookimpl
    def agentenv_register_envs():
        from fixture_good_env import NotesEnv

        return [NotesEnv]
"""


def install_good_plugin(root: Path) -> Path:
    """`agentenv-fixture-good` 1.0.0, plugin `fixture-good`: one env, `fixture_notes`."""
    return install_fixture_plugin(
        root,
        "agentenv-fixture-good",
        "1.0.0",
        "fixture-good",
        "fixture_good_plugin",
        GOOD_PLUGIN,
        [KERNEL_RANGE, RUNTIME_RANGE],
        extra_modules=GOOD_ENV_MODULES,
    )


def env_plugin(name: str, target: str) -> str:
    """An entry module registering one env, `name`, by `ClassRef` to `target` ("module:Class")."""
    return (
        "from agentenv.contracts import ClassRef\nfrom agentenv.hookspecs import hookimpl\n\n\n@hookimpl\n"
        f"def agentenv_register_envs():\n    return [ClassRef({name!r}, {target!r})]\n"
    )


def install_env_plugin(root: Path, env: str, source: str, class_name: str) -> Path:
    """A distribution `agentenv-<env>` (`_` as `-`) whose plugin registers env `env` by `ClassRef`: the class
    `class_name` of module `<env>_env`, whose text is `source`; it declares the kernel and runtime ranges."""
    slug = env.replace("_", "-")
    plugin = env_plugin(env, f"{env}_env:{class_name}")
    return install_fixture_plugin(root, f"agentenv-{slug}", "1.0.0", slug, f"{env}_plugin", plugin,
                                  [KERNEL_RANGE, RUNTIME_RANGE], extra_modules={f"{env}_env": source})  # fmt: skip


def step_plugin(step_module: str) -> str:
    """An entry module registering the step classes that `step_module` exports as STEPS."""
    return f"""
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_steps():
            from {step_module} import STEPS

            return STEPS
    """


def step_module(*names: str, abstract: bool = False) -> str:
    """A module defining one Step subclass per name (abstract ones lack `execute`), listed in STEPS."""
    classes = []
    for index, name in enumerate(names):
        body = (
            "    pass\n"
            if abstract
            else "    async def execute(self, settings, ctx):\n        return {'step': self.name}\n"
        )
        classes.append(f"class Step{index}(Step):\n    name = {name!r}\n{body}")
    listed = ", ".join(f"Step{i}" for i in range(len(names)))
    return "from agentenv.contracts import Step\n\n\n" + "\n\n".join(classes) + f"\n\nSTEPS = [{listed}]\n"


def load_file_module(path: Path, name: str) -> Any:
    """Import a Python file that is not on `sys.path` (a bundle's script, a repository's generator) as `name`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, f"{path} is not a Python module"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
