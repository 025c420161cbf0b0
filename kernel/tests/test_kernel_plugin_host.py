"""The plugin host in-process: metadata-only discovery, per-kind lazy loading, duplicates, typed registries."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from agentenv.contracts import kinds
from agentenv.plugins import problems as codes
from agentenv.plugins.discovery import discover
from agentenv.plugins.host import PluginHost
from agentenv.plugins.info import PluginInfo
from agentenv_testing.installs import (
    EXCLUDING_KERNEL_RANGE,
    KERNEL_RANGE,
    install_fixture_plugin,
    install_good_plugin,
    step_module,
    step_plugin,
)
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

BOMB = 'raise RuntimeError("imported although it should not have been")\n'


def _by_dist(host: PluginHost, dist: str):  # type: ignore[no-untyped-def]
    (info,) = [i for i in host.infos if i.dist == dist]
    return info


def _steps(root: Path, dist: str, entry: str, module: str, *steps: str) -> None:
    install_fixture_plugin(
        root,
        dist,
        "1.0.0",
        entry,
        module,
        step_plugin(f"{module}_steps"),
        extra_modules={f"{module}_steps": step_module(*steps)},
    )


def test_discovery_reads_metadata_only(on_path: Path) -> None:
    install_fixture_plugin(on_path, "agentenv-fixture-meta", "2.5.0", "fixture-meta", "fixture_meta_bomb", BOMB)
    infos = {i.name: i for i in discover({})}
    info = infos["fixture-meta"]
    assert (info.dist, info.version, info.module, info.status) == (
        "agentenv-fixture-meta",
        "2.5.0",
        "fixture_meta_bomb",
        "ok",
    )
    assert SpecifierSet(info.kernel_range) == Requirement(KERNEL_RANGE).specifier
    assert "kernel" not in infos, "the kernel registers nothing through the hooks: it is no plugin"
    assert [i.dist for i in discover({})] == sorted(i.dist for i in discover({})), "listed by distribution"
    PluginHost(environ={})  # requirement checks read metadata too
    assert "fixture_meta_bomb" not in sys.modules


def test_incompatible_plugins_are_never_imported(on_path: Path) -> None:
    install_fixture_plugin(
        on_path, "agentenv-fixture-old", "1.0.0", "fixture-old", "fixture_old_bomb", BOMB, [EXCLUDING_KERNEL_RANGE]
    )
    host = PluginHost(environ={}).load()
    info = _by_dist(host, "agentenv-fixture-old")
    assert info.status == "incompatible"
    assert [p.code for p in info.problems] == [codes.KERNEL_RANGE]
    assert "fixture_old_bomb" not in sys.modules


def test_extra_only_requirements_are_not_required(on_path: Path) -> None:
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-extras",
        "1.0.0",
        "fixture-extras",
        "fixture_extras",
        "",
        [KERNEL_RANGE, "agentenv-fixture-absent>=1; extra == 'cloud'"],
    )
    host = PluginHost(environ={}).load()
    assert _by_dist(host, "agentenv-fixture-extras").status == "ok"


def test_loading_one_kind_calls_only_its_hook(on_path: Path) -> None:
    install_good_plugin(on_path)
    host = PluginHost(environ={})
    assert "fixture_good_plugin" not in sys.modules, "constructing a host imports nothing"
    host.load([kinds.CLI_COMMANDS])
    assert "fixture_good_plugin" in sys.modules
    assert "fixture_good_env" not in sys.modules, "the envs hook was not called"
    assert host.registries[kinds.ENVS.name] == {}
    assert host.get(kinds.ENVS, "fixture_notes").__module__ == "fixture_good_env"
    assert _by_dist(host, "agentenv-fixture-good").contributes == {"envs": ["fixture_notes"]}


def test_get_names_what_is_installed(on_path: Path) -> None:
    install_good_plugin(on_path)
    host = PluginHost(environ={})
    with pytest.raises(LookupError, match=r"no env named 'nope' \(installed: .*fixture_notes.*agentenv plugin list"):
        host.get(kinds.ENVS, "nope")


def test_registries_are_typed_by_contract(on_path: Path) -> None:
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-wrongkind",
        "1.0.0",
        "fixture-wrongkind",
        "fixture_wrongkind",
        """
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_steps():
            from fixture_good_env import NotesEnv  # an env handed in as a step

            return [NotesEnv]
        """,
    )
    install_good_plugin(on_path)
    host = PluginHost(environ={}).load()
    info = _by_dist(host, "agentenv-fixture-wrongkind")
    assert info.status == "failed"
    assert info.problems[0].code == codes.INVALID_CONTRIBUTION
    assert "is not a subclass of agentenv.contracts.step.Step" in info.problems[0].message
    assert "fixture_notes" in host.registries[kinds.ENVS.name]


def test_a_contribution_two_outside_plugins_tie_on_is_given_to_neither(on_path: Path) -> None:
    """Neither first-party nor built on the other: no plugin wins by its name's place in the alphabet."""
    _steps(on_path, "agentenv-fixture-dup-a", "fixture-dup-a", "fixture_dup_a", "fixture_shared", "fixture_only_a")
    _steps(on_path, "agentenv-fixture-dup-b", "fixture-dup-b", "fixture_dup_b", "fixture_only_b", "fixture_shared")
    host = PluginHost(environ={}).load()
    steps = host.registries[kinds.STEPS.name]
    assert not {"fixture_shared", "fixture_only_a", "fixture_only_b"} & set(steps), "a skipped plugin registers nothing"
    a, b = _by_dist(host, "agentenv-fixture-dup-a"), _by_dist(host, "agentenv-fixture-dup-b")
    assert (a.status, [p.code for p in a.problems]) == ("skipped", [codes.DUPLICATE_NAME])
    assert (b.status, [p.code for p in b.problems]) == ("skipped", [codes.DUPLICATE_NAME])
    assert "AGENTENV_DISABLE_PLUGINS=fixture-dup-b keeps agentenv-fixture-dup-a's" in a.problems[0].fix
    chosen = PluginHost(environ={"AGENTENV_DISABLE_PLUGINS": "fixture-dup-b"}).load()
    assert chosen.registries[kinds.STEPS.name]["fixture_shared"].dist == "agentenv-fixture-dup-a"


def test_a_third_claimant_of_a_tied_name_does_not_take_it(on_path: Path) -> None:
    for x in "abc":
        _steps(on_path, f"agentenv-fixture-tri-{x}", f"fixture-tri-{x}", f"fixture_tri_{x}", "fixture_tri")
    host = PluginHost(environ={}).load()
    assert "fixture_tri" not in host.registries[kinds.STEPS.name]
    assert {_by_dist(host, f"agentenv-fixture-tri-{letter}").status for letter in "abc"} == {"skipped"}


def test_duplicate_entry_point_name_on_a_tie_skips_both(on_path: Path) -> None:
    """Two distributions declare entry point `fixture-twin`, neither building on the other: both are skipped."""
    _steps(on_path, "agentenv-fixture-twin-a", "fixture-twin", "fixture_twin_a", "fixture_twin_a_step")
    _steps(on_path, "agentenv-fixture-twin-b", "fixture-twin", "fixture_twin_b", "fixture_twin_b_step")
    host = PluginHost(environ={}).load()
    a, b = _by_dist(host, "agentenv-fixture-twin-a"), _by_dist(host, "agentenv-fixture-twin-b")
    assert (a.status, b.status) == ("skipped", "skipped")
    assert host.pm.get_plugin("fixture-twin") is None
    assert not {"fixture_twin_a_step", "fixture_twin_b_step"} & set(host.registries[kinds.STEPS.name])
    assert "plugin name 'fixture-twin' is registered by agentenv-fixture-twin-a and agentenv-fixture-twin-b" in (
        a.problems[0].message
    )


def test_plugin_skipped_late_withdraws_earlier_contributions(on_path: Path) -> None:
    """Kinds load one at a time: a plugin skipped while loading steps loses the env it registered before."""
    _steps(on_path, "agentenv-fixture-first", "fixture-first", "fixture_first", "fixture_taken")
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-second",
        "1.0.0",
        "fixture-second",
        "fixture_second",
        """
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_envs():
            from agentenv_runtime import Env

            class SecondEnv(Env):
                name = "fixture_second_env"

            return [SecondEnv]


        @hookimpl
        def agentenv_register_steps():
            from fixture_first_steps import STEPS

            return STEPS
        """,
    )
    host = PluginHost(environ={})
    assert "fixture_second_env" in host.registry(kinds.ENVS)
    host.load([kinds.STEPS])
    second = _by_dist(host, "agentenv-fixture-second")
    assert second.status == "skipped"
    assert "fixture_second_env" not in host.registries[kinds.ENVS.name]
    assert not any(second.contributes.values()), f"a skipped plugin lists no contributions: {second.contributes}"


def test_observer_hooks_reach_loaded_plugins(on_path: Path) -> None:
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-observer",
        "1.0.0",
        "fixture-observer",
        "fixture_observer",
        """
        from agentenv.hookspecs import hookimpl

        SEEN = []


        @hookimpl
        def agentenv_run_started(run):
            SEEN.append(run["id"])
        """,
    )
    host = PluginHost(environ={})
    host.notify("run_started", run={"id": "r1"})
    assert sys.modules["fixture_observer"].SEEN == ["r1"]


def test_unmarked_hook_named_function_is_not_a_problem(on_path: Path) -> None:
    """Helpers may use the prefix as long as they name a real hook (the typo check is about unknown names)."""
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-plain",
        "1.0.0",
        "fixture-plain",
        "fixture_plain",
        "import agentenv\n\n\ndef helper():\n    return agentenv\n",
    )
    host = PluginHost(environ={}).load()
    assert _by_dist(host, "agentenv-fixture-plain").status == "ok"


@pytest.mark.parametrize(
    ("requires", "shown"),
    [
        (["agentenv-kernel>=0.1,<0.2"], ">=0.1,<0.2"),
        (["agentenv-kernel"], "any"),
        (["pydantic>=2", "agentenv_kernel >=0.1 ; python_version >= '3.11'"], ">=0.1"),
        (["Agentenv.Kernel>=0.1"], ">=0.1"),  # names compare case- and separator-insensitively (PEP 503)
        (["agentenv-kernel-tools>=5"], ""),  # another distribution, not the kernel
        ([], ""),
    ],
)
def test_kernel_range_is_read_from_the_kernel_requirement(requires: list[str], shown: str) -> None:
    info = PluginInfo(name="p", dist="d", version="1", module="m", requires=requires)
    if shown in ("", "any"):
        assert info.kernel_range == shown
    else:
        assert SpecifierSet(info.kernel_range) == SpecifierSet(shown)


def test_sibling_out_of_range_names_both_versions(on_path: Path) -> None:
    """The issue's own example: a plugin requiring `agentenv-slack>=9` next to the installed agentenv-slack."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        slack = version("agentenv-slack")
    except PackageNotFoundError:
        pytest.skip("agentenv-slack is not installed here")
    install_fixture_plugin(
        on_path,
        "agentenv-fixture-slack-addon",
        "1.0.0",
        "fixture-slack-addon",
        "fixture_slack_addon_bomb",
        BOMB,
        [KERNEL_RANGE, "agentenv-slack>=9"],
    )
    host = PluginHost(environ={}).load()
    info = _by_dist(host, "agentenv-fixture-slack-addon")
    assert info.status == "incompatible"
    (problem,) = info.problems
    assert problem.code == codes.REQUIREMENT_RANGE
    assert f"requires agentenv-slack>=9, but agentenv-slack {slack} is installed" in problem.message
    assert problem.fix == "agentenv plugin add 'agentenv-slack>=9'"
    assert "fixture_slack_addon_bomb" not in sys.modules
