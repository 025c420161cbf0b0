"""The plugin's registration and lightness, and the base-image helpers that need no engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentenv import PluginHost
from agentenv.contracts import kinds
from agentenv_docker.base_image import host_mirror, host_suite, main
from agentenv_docker.settings import build_command, is_local_base


def test_plugin_registers_provider_step_and_command() -> None:
    host = PluginHost().load()
    info = host.find("docker")
    assert info is not None and info.status == "ok", info
    from agentenv_docker.provider import DockerProvider
    from agentenv_docker.step import RunDockerContainer

    assert host.get(kinds.SANDBOX_PROVIDERS, "docker") is DockerProvider
    assert host.get(kinds.STEPS, "run_docker_container") is RunDockerContainer
    assert "docker" in host.registry(kinds.CLI_COMMANDS)


def test_loading_the_plugin_does_not_import_the_docker_sdk() -> None:
    code = (
        "import sys\n"
        "import agentenv_docker.plugin as p\n"
        "p.agentenv_register_sandbox_providers(); p.agentenv_register_steps(); p.agentenv_register_cli_commands()\n"
        "from agentenv_docker.provider import DockerProvider\n"
        "DockerProvider({})\n"
        "print('docker' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_settings_refuse_unknown_keys() -> None:
    from agentenv_docker.settings import DockerSettings

    try:
        DockerSettings.load({"base_imag": "x"})
    except ValueError as exc:
        assert "base_imag" in str(exc)
    else:
        raise AssertionError("a misspelt setting was accepted")


def test_host_mirror_reads_one_line_and_deb822_sources(tmp_path: Path) -> None:
    one_line = tmp_path / "sources.list"
    one_line.write_text("# deb http://old/debian bookworm main\ndeb http://mirror.example/debian/ bookworm main\n")
    deb822 = tmp_path / "debian.sources"
    deb822.write_text(
        "Types: deb\nURIs: http://deb.example.org/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: https://deb.example.org/debian\nSuites: bookworm\n"
    )
    assert host_mirror([one_line]) == "http://mirror.example/debian"
    assert host_mirror([deb822]) == "https://deb.example.org/debian"
    assert host_mirror([tmp_path / "absent"]) == "http://deb.debian.org/debian"


def test_host_suite_from_os_release(tmp_path: Path) -> None:
    release = tmp_path / "os-release"
    release.write_text('NAME="Debian GNU/Linux"\nVERSION_CODENAME=trixie\n')
    assert host_suite(release) == "trixie"
    assert host_suite(tmp_path / "absent") == "bookworm"


def test_local_base_names_and_build_command() -> None:
    assert is_local_base("agentenv/base:py3.11-bookworm") and is_local_base("agentenv/base:other")
    assert not is_local_base("python:3.12-slim") and not is_local_base("agentenv/base-x:1")
    assert build_command("agentenv/base:py3.11-bookworm") == "python -m agentenv_docker.base_image"
    assert build_command("agentenv/base:x") == "python -m agentenv_docker.base_image --tag agentenv/base:x"


def test_module_entry_point_has_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentenv_docker.base_image", "--help"], capture_output=True, text=True, check=True
    )
    assert "--tag" in done.stdout and "--mirror" in done.stdout
    assert callable(main)
