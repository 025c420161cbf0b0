"""`agentenv plugin show/add/remove` and the dispatcher's handling of unknown commands.

Most tests run the dispatcher in-process (the `agentenv` fixture) for speed; the `*_subprocess` tests run the
same commands in a fresh interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from agentenv.cli.plugin_cmd import dependents
from agentenv.plugins.host import PluginHost
from agentenv_testing.installs import (
    KERNEL_RANGE,
    KERNEL_VERSION,
    CliResult,
    install_fixture_plugin,
    install_good_plugin,
    run_cli,
)
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

Agentenv = Callable[..., CliResult]


def install_family(root: Path) -> Path:
    """A base plugin, two plugins that require it (spelled differently), and the good env plugin."""
    install_good_plugin(root)
    install_fixture_plugin(root, "agentenv-fixture-base", "0.3.0", "fixture-base", "fixture_base", "")
    install_fixture_plugin(
        root,
        "agentenv-fixture-user",
        "1.2.0",
        "fixture-user",
        "fixture_user",
        "",
        requires=[KERNEL_RANGE, "agentenv-fixture-base>=0.3,<0.4"],
    )
    install_fixture_plugin(
        root,
        "agentenv_Fixture.Other",
        "2.0.0",
        "fixture-other",
        "fixture_other",
        "",
        requires=[KERNEL_RANGE, "Agentenv_Fixture_Base"],  # any spelling of the name counts
    )
    return root


@pytest.fixture
def family(on_path: Path) -> Path:
    return install_family(on_path)


REFUSAL = "agentenv-fixture-base is required by agentenv-fixture-user, agentenv_Fixture.Other"


def test_remove_refuses_while_another_plugin_requires_it_subprocess(tmp_path: Path) -> None:
    result = run_cli("plugin", "remove", "fixture-base", paths=[install_family(tmp_path)])
    assert result.returncode == 1, result
    assert f"error: {REFUSAL}; remove those first or pass --force" in result.stderr
    assert "$ " not in result.stderr, "no installer was run"


@pytest.mark.parametrize("name", ["fixture-base", "agentenv-fixture-base"])
def test_remove_refuses_by_plugin_or_distribution_name(family: Path, agentenv: Agentenv, name: str) -> None:
    result = agentenv("plugin", "remove", name)
    assert result.returncode == 1, result
    assert REFUSAL in result.stderr
    assert "$ " not in result.stderr


def test_remove_refuses_for_disabled_dependents_too(
    family: Path, agentenv: Agentenv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTENV_DISABLE_PLUGINS", "fixture-user,fixture-other")
    result = agentenv("plugin", "remove", "fixture-base")
    assert result.returncode == 1, result
    assert REFUSAL in result.stderr


def test_remove_unknown_and_kernel(family: Path, agentenv: Agentenv) -> None:
    unknown = agentenv("plugin", "remove", "fixture-nope")
    assert unknown.returncode == 1
    assert "no plugin or distribution named 'fixture-nope'" in unknown.stderr
    kernel = agentenv("plugin", "remove", "agentenv-kernel")
    assert kernel.returncode == 1
    assert "agentenv-kernel is not a plugin" in kernel.stderr


def test_dependents(family: Path) -> None:
    host = PluginHost(environ={})
    assert dependents(host, "agentenv-fixture-base") == ["agentenv-fixture-user", "agentenv_Fixture.Other"]
    assert dependents(host, "agentenv-fixture-user") == []
    assert "agentenv-fixture-base" in dependents(host, "agentenv-kernel")


def test_add_refuses_a_bad_spec_subprocess(tmp_path: Path) -> None:
    result = run_cli("plugin", "add", "not a spec!!", cwd=tmp_path)
    assert result.returncode == 1, result
    assert "error: 'not a spec!!' is not a requirement spec" in result.stderr
    assert "quote it, e.g. 'agentenv-slack>=0.1,<0.2'" in result.stderr
    assert "$ " not in result.stderr, "no installer was run"


@pytest.mark.parametrize("spec", ["agentenv-slack>>1", "agentenv slack", "agentenv-slack[", "==1.0"])
def test_add_refuses_bad_specs_before_installing(
    spec: str, agentenv: Agentenv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = agentenv("plugin", "add", "agentenv-fine>=1", spec)
    assert result.returncode == 1, result
    assert f"{spec!r} is not a requirement spec" in result.stderr
    assert "$ " not in result.stderr, "nothing is installed when any spec is bad"


def test_add_without_specs_shows_usage(agentenv: Agentenv) -> None:
    result = agentenv("plugin", "add")
    assert result.returncode == 2
    assert "Missing argument" in result.stderr


def test_show_json_subprocess(tmp_path: Path) -> None:
    result = run_cli("plugin", "show", "fixture-user", "--json", paths=[install_family(tmp_path)])
    assert result.returncode == 0, result
    shown = result.json()
    assert SpecifierSet(shown.pop("kernel_range")) == Requirement(KERNEL_RANGE).specifier
    assert shown == {
        "name": "fixture-user",
        "distribution": "agentenv-fixture-user",
        "version": "1.2.0",
        "module": "fixture_user",
        "requires": [KERNEL_RANGE, "agentenv-fixture-base>=0.3,<0.4"],
        "status": "ok",
        "contributes": {},
        "problems": [],
    }


def test_show_by_distribution_with_contributions(family: Path, agentenv: Agentenv) -> None:
    result = agentenv("plugin", "show", "agentenv-fixture-good", "--json")
    assert result.returncode == 0, result
    shown = result.json()
    assert (shown["name"], shown["contributes"]) == ("fixture-good", {"envs": ["fixture_notes"]})
    text = agentenv("plugin", "show", "fixture-good")
    assert "fixture-good  (agentenv-fixture-good 1.0.0)" in text.stdout
    assert "envs: fixture_notes" in text.stdout


def test_show_unknown_lists_installed(family: Path, agentenv: Agentenv) -> None:
    result = agentenv("plugin", "show", "fixture-nope", "--json")
    assert result.returncode == 1
    assert "no plugin or distribution named 'fixture-nope'" in result.stderr
    assert "fixture-good" in result.stderr and "runtime" in result.stderr


def test_the_kernel_is_no_plugin_and_the_runtime_registers_like_one(agentenv: Agentenv) -> None:
    assert agentenv("plugin", "show", "kernel", "--json").returncode == 1
    result = agentenv("plugin", "show", "runtime", "--json")
    assert result.returncode == 0
    shown = result.json()
    assert (shown["distribution"], shown["status"]) == ("agentenv-runtime", "ok")
    assert SpecifierSet(shown["kernel_range"]).contains(KERNEL_VERSION)
    assert shown["contributes"]["trigger_kinds"] == ["time", "tool_call", "state", "persona"]
    assert {"run", "runs", "env", "steps", "sandbox", "task"} <= set(shown["contributes"]["cli_commands"])


def test_unknown_command_suggests_the_closest(agentenv: Agentenv) -> None:
    result = agentenv("plugn", "list")
    assert result.returncode == 2
    assert "no such command 'plugn'. Did you mean 'plugin'?" in result.stderr


def test_version_subprocess() -> None:
    result = run_cli("--version")
    assert (result.returncode, result.stdout) == (0, f"agentenv {KERNEL_VERSION}\n")


def test_plugin_without_subcommand_shows_its_help(agentenv: Agentenv) -> None:
    result = agentenv("plugin")
    shown = result.stdout + result.stderr
    assert all(word in shown for word in ("list", "show", "check", "add", "remove"))


def test_add_names_every_installed_sibling_so_the_resolver_keeps_them_fitting(
    family: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentenv.cli.plugin_cmd import siblings
    from agentenv.plugins.host import reset_host

    reset_host()
    monkeypatch.setenv("AGENTENV_NO_CACHE", "1")
    bare = siblings({"agentenv-fixture-user"}, pin=False)
    assert f"agentenv-kernel=={KERNEL_VERSION}" in bare, "the kernel never moves unless named"
    assert "agentenv-fixture-base" in bare and "agentenv-fixture-user" not in bare
    pinned = siblings({"agentenv-fixture-user"}, pin=True)
    assert "agentenv-fixture-base==0.3.0" in pinned, "an upgrade of one plugin holds every sibling where it is"
    assert not [s for s in siblings({"agentenv-kernel"}, pin=False) if s.startswith("agentenv-kernel")]
    reset_host()


def test_add_reads_the_name_of_a_wheel_or_a_project_folder(tmp_path: Path) -> None:
    from agentenv.cli.plugin_cmd import spec_name

    assert spec_name("dist/agentenv_slack-0.2.0-py3-none-any.whl") == "agentenv-slack"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "Agentenv_Phone"\nversion = "1"\n')
    assert spec_name(str(tmp_path)) == "agentenv-phone"
    assert spec_name("agentenv-email>=0.1,<0.2") == "agentenv-email"
