"""Start-up stays light: `--version` imports nothing heavy, `--help` imports plugin entry modules but none of
their classes (nor pydantic or typer), and `plugin list` imports no plugin's heavy SDK."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from agentenv.cli.main import main
from agentenv.contracts import kinds
from agentenv.plugins.host import PluginHost
from agentenv_testing.installs import cli_env, install_fixture_plugin, install_good_plugin, run_python

HEAVY_SDKS = ("docker", "boto3", "botocore", "mcp", "a2a", "modal", "e2b", "google.cloud", "fastapi", "openai")
FRAMEWORKS = ("pydantic", "pydantic_core", "typer", "click")

# Prints the modules a CLI invocation imported whose name (or a parent package's) is in argv[2:].
PROBE = """
import contextlib, io, json, sys
from agentenv.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(json.loads(sys.argv[1]))
watched = set(sys.argv[2:])
hits = sorted(m for m in sys.modules if any(m == w or m.startswith(w + ".") for w in watched))
print(json.dumps({"code": code, "modules": hits}))
"""

FAKE_SDK = """
import os
from pathlib import Path

Path(os.environ["FIXTURE_SDK_MARKER"]).write_text("imported")
CLIENT = "fake heavy client"
"""

HEAVY_PLUGIN = """
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_sandbox_providers():
    from fixture_heavy_provider import HeavyProvider

    return [HeavyProvider]


@hookimpl
def agentenv_register_cli_commands():
    return []
"""

HEAVY_PROVIDER = """
from agentenv.contracts import SandboxProvider


class HeavyProvider(SandboxProvider):
    name = "fixture-heavy"
    description = "Needs a (fake) heavy SDK, imported only when a sandbox is made."

    def create(self, spec):
        import fixture_heavy_sdk

        return fixture_heavy_sdk.CLIENT

    def list(self, labels):
        return []
"""

CLI_PLUGIN = """
from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_cli_commands():
    from agentenv.contracts.cli import CliCommand

    return [CliCommand("fixture-hello", "Say hello from a plugin.", "fixture_cli_impl:app")]
"""

CLI_IMPL = """
import typer

app = typer.Typer()


@app.command()
def hello(name: str = "world") -> None:
    print(f"hello {name}")
"""


def probe(args: list[str], watched: tuple[str, ...], paths: list[Path], **env: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), *watched],
        capture_output=True,
        text=True,
        env=cli_env(paths, **env),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


@pytest.fixture(scope="module")
def heavy_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A good env plugin and a plugin whose provider needs a fake heavy SDK (which records its import)."""
    root = tmp_path_factory.mktemp("heavy")
    install_good_plugin(root)
    install_fixture_plugin(
        root,
        "agentenv-fixture-heavy",
        "1.0.0",
        "fixture-heavy",
        "fixture_heavy_plugin",
        HEAVY_PLUGIN,
        extra_modules={"fixture_heavy_provider": HEAVY_PROVIDER, "fixture_heavy_sdk": FAKE_SDK},
    )
    return root


def test_version_imports_nothing_heavy(heavy_site: Path) -> None:
    watched = (*FRAMEWORKS, "pluggy", "packaging", "agentenv.plugins", "fixture_good_plugin")
    result = probe(["--version"], watched, [heavy_site])
    assert result == {"code": 0, "modules": []}


def test_help_imports_entry_modules_but_no_classes(heavy_site: Path, tmp_path: Path) -> None:
    marker = tmp_path / "sdk-imported"
    watched = (*FRAMEWORKS, *HEAVY_SDKS, "fixture_good_plugin", "fixture_good_env", "fixture_heavy_plugin")
    watched += ("fixture_heavy_provider", "fixture_heavy_sdk")
    result = probe(["--help"], watched, [heavy_site], FIXTURE_SDK_MARKER=str(marker))
    assert result["code"] == 0
    assert result["modules"] == ["fixture_good_plugin", "fixture_heavy_plugin"]
    assert not marker.exists()


def test_help_with_a_cli_command_plugin_imports_no_pydantic_or_typer(tmp_path: Path) -> None:
    """A plugin adding a sub-command: `--help` lists it without importing pydantic, typer or its target."""
    install_fixture_plugin(
        tmp_path,
        "agentenv-fixture-cli",
        "1.0.0",
        "fixture-cli",
        "fixture_cli_plugin",
        CLI_PLUGIN,
        extra_modules={"fixture_cli_impl": CLI_IMPL},
    )
    out = run_python(
        """
        import contextlib, io, sys
        from agentenv.cli.main import main
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(["--help"])
        print("fixture-hello" in buf.getvalue())
        print(sorted({m.split(".")[0] for m in sys.modules} & {"pydantic", "typer", "click", "fixture_cli_impl"}))
        """,
        paths=[tmp_path],
    )
    assert out.splitlines() == ["True", "[]"]
    ran = subprocess.run(
        [sys.executable, "-m", "agentenv", "fixture-hello", "--name", "kernel"],
        capture_output=True,
        text=True,
        env=cli_env([tmp_path]),
        timeout=60,
    )
    assert (ran.returncode, ran.stdout) == (0, "hello kernel\n"), ran.stderr


def test_help_import_trace_has_no_framework(heavy_site: Path) -> None:
    """The same through `python -X importtime -m agentenv --help`, the way a person would measure it.

    (The trace omits modules loaded by `importlib.import_module`, such as plugin entry modules, but lists
    everything they import with an import statement.)"""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentenv", "--help"],
        capture_output=True,
        text=True,
        env=cli_env([heavy_site], FIXTURE_SDK_MARKER=str(heavy_site / "marker")),
        timeout=60,
    )
    assert proc.returncode == 0
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "agentenv.cli.main" in imported, "sanity: the trace lists what was imported"
    roots = {name.split(".")[0] for name in imported}
    assert roots.isdisjoint({*FRAMEWORKS, "docker", "boto3", "mcp", "a2a", "modal", "e2b", "fastapi", "openai"})
    assert "fixture_heavy_provider" not in imported


def test_plugin_list_imports_no_heavy_sdk(heavy_site: Path, tmp_path: Path) -> None:
    marker = tmp_path / "sdk-imported"
    result = probe(
        ["plugin", "list", "--json"],
        (*HEAVY_SDKS, "fixture_heavy_plugin", "fixture_heavy_provider", "fixture_heavy_sdk"),
        [heavy_site],
        FIXTURE_SDK_MARKER=str(marker),
    )
    assert result["code"] == 0
    # The provider class was imported and validated; the SDK it uses was not.
    assert result["modules"] == ["fixture_heavy_plugin", "fixture_heavy_provider"]
    assert not marker.exists()


def test_using_the_class_is_what_imports_the_sdk(
    on_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process counterpart: loading every registry leaves the SDK alone; creating a sandbox imports it."""
    marker = tmp_path / "sdk-imported"
    monkeypatch.setenv("FIXTURE_SDK_MARKER", str(marker))
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-heavy",
        "1.0.0",
        "fixture-heavy",
        "fixture_heavy_plugin",
        HEAVY_PLUGIN,
        extra_modules={"fixture_heavy_provider": HEAVY_PROVIDER, "fixture_heavy_sdk": FAKE_SDK},
    )
    host = PluginHost(environ={}).load()
    provider = host.get(kinds.SANDBOX_PROVIDERS, "fixture-heavy")
    assert "fixture_heavy_sdk" not in sys.modules and not marker.exists()
    assert provider().create(None) == "fake heavy client"
    assert "fixture_heavy_sdk" in sys.modules and marker.exists()


def test_workspace_plugins_keep_heavy_sdks_out_of_plugin_list() -> None:
    """Whatever is installed next to the kernel: listing plugins imports none of the heavy SDKs."""
    result = probe(["plugin", "list", "--json"], HEAVY_SDKS, [])
    assert result == {"code": 0, "modules": []}


def test_workspace_help_imports_no_pathlib() -> None:
    """`pathlib` (with the `urllib.parse` and `ipaddress` it imports) was a tenth of `agentenv --help`: the kernel's
    cache and contribution checks use `os.path`, and the bundle plugins import it only in their hooks."""
    result = probe(["--help"], ("pathlib", "urllib", "ipaddress"), [])
    assert result == {"code": 0, "modules": []}


def test_in_process_help_prints_root_help() -> None:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["--help"]) == 0
    assert buf.getvalue().startswith("Usage: agentenv")
