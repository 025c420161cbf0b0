"""Two plugins claiming one name: who keeps it never depends on entry-point or distribution order; a contribution
that cannot load claims no name; no fix says to remove a plugin (least of all a first-party one). And a hook that
returns the wrong shape says exactly that."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentenv_testing.installs import (
    KERNEL_RANGE,
    RUNTIME_RANGE,
    CliResult,
    install_fixture_plugin,
    run_cli,
    step_module,
    step_plugin,
)

SLACK_CLAIM = """
    from agentenv.hookspecs import hookimpl


    @hookimpl
    def agentenv_register_envs():
        from agentenv_runtime import Env

        class MySlack(Env):
            name = "slack"

        return [MySlack]
"""


def steps_dist(root: Path, dist: str, module: str, *steps: str, requires: list[str] | None = None) -> None:
    install_fixture_plugin(
        root, dist, "1.0.0", dist.removeprefix("agentenv-"), module, step_plugin(f"{module}_steps"),
        requires=requires or [KERNEL_RANGE], extra_modules={f"{module}_steps": step_module(*steps)},
    )  # fmt: skip


def listing(root: Path) -> dict[str, dict[str, object]]:
    result = run_cli("plugin", "list", "--json", paths=[root])
    assert result.returncode == 0, result
    return {p["distribution"]: p for p in result.json()}


def problems(root: Path) -> list[dict[str, str]]:
    check: CliResult = run_cli("plugin", "check", "--json", paths=[root])
    return [p for p in check.json()["problems"] if p["code"] in ("duplicate-name", "invalid-contribution")]


OUR_HOME = "Project-URL: Homepage, https://github.com/agentenv/agentenv"


@pytest.mark.parametrize("dist", ["agentenv-aaa-slack", "agentenv-zzz-slack"])
def test_a_first_party_plugin_keeps_its_name_whatever_the_order(tmp_path: Path, dist: str) -> None:
    """The outside plugin copies our Homepage URL: first-party is the distribution's name, which it cannot copy."""
    install_fixture_plugin(tmp_path, dist, "1.0.0", dist.removeprefix("agentenv-"), dist.replace("-", "_"),
                           SLACK_CLAIM, [KERNEL_RANGE, RUNTIME_RANGE], metadata=[OUR_HOME])  # fmt: skip
    plugins = listing(tmp_path)
    assert plugins["agentenv-slack"]["status"] == "ok"
    assert plugins["agentenv-slack"]["contributes"] == {"envs": ["slack"]}
    assert plugins[dist]["status"] == "skipped"
    [problem] = problems(tmp_path)
    assert problem["message"] == (
        f"env 'slack' is registered by agentenv-slack and {dist}; {dist.removeprefix('agentenv-')} was skipped"
        " (agentenv-slack is first-party)"
    )
    assert problem["fix"].startswith(f"rename the env in {dist}, or disable it:") and "remove" not in problem["fix"]
    assert problem["fix"].endswith(f"(to use {dist}'s instead: AGENTENV_DISABLE_PLUGINS=slack)")


def test_a_tie_between_outside_plugins_is_explained_with_how_to_choose(tmp_path: Path) -> None:
    for dist in ("agentenv-fixture-aa-steps", "agentenv-fixture-zz-steps"):
        module = dist.removeprefix("agentenv-").replace("-", "_")
        steps_dist(tmp_path, dist, module, "fixture_tied_step", f"{module}_own")
    plugins = listing(tmp_path)
    assert plugins["agentenv-fixture-aa-steps"]["status"] == plugins["agentenv-fixture-zz-steps"]["status"] == "skipped"
    found = {p["plugin"]: p for p in problems(tmp_path)}
    assert found["fixture-aa-steps"]["message"] == (
        "step 'fixture_tied_step' is registered by agentenv-fixture-aa-steps and agentenv-fixture-zz-steps: none is"
        " first-party or required by the others; all skipped"
    )
    assert found["fixture-aa-steps"]["fix"] == (
        "choose one: AGENTENV_DISABLE_PLUGINS=fixture-zz-steps keeps agentenv-fixture-aa-steps's; or rename the step"
        " in all but one"
    )
    chosen = run_cli("steps", "show", "fixture_tied_step", "--json", paths=[tmp_path],
                     env={"AGENTENV_DISABLE_PLUGINS": "fixture-aa-steps"})  # fmt: skip
    assert chosen.returncode == 0 and chosen.json()["distribution"] == "agentenv-fixture-zz-steps", chosen


@pytest.mark.parametrize("addon", ["agentenv-fixture-aa-addon", "agentenv-fixture-zz-addon"])
def test_a_plugin_keeps_a_name_against_one_that_builds_on_it(tmp_path: Path, addon: str) -> None:
    steps_dist(tmp_path, "agentenv-fixture-base", "fixture_base", "fixture_shared_step", "fixture_base_only")
    requires = [KERNEL_RANGE, "agentenv-fixture-base>=1"]
    steps_dist(tmp_path, addon, addon.replace("-", "_"), "fixture_shared_step", requires=requires)
    plugins = listing(tmp_path)
    assert plugins["agentenv-fixture-base"]["status"] == "ok"
    assert plugins["agentenv-fixture-base"]["contributes"] == {"steps": ["fixture_shared_step", "fixture_base_only"]}
    assert plugins[addon]["status"] == "skipped"
    [problem] = problems(tmp_path)
    assert problem["plugin"] == addon.removeprefix("agentenv-") and "remove" not in problem["fix"]


def test_a_contribution_that_cannot_load_claims_no_name(tmp_path: Path) -> None:
    wrong = """
        from agentenv.contracts import ClassRef
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_steps():
            return [ClassRef("fixture_contested", "fixture_aa_misnamed_steps:Step0")]
    """
    install_fixture_plugin(
        tmp_path, "agentenv-fixture-aa-misnamed", "1.0.0", "fixture-aa-misnamed", "fixture_aa_misnamed", wrong,
        extra_modules={"fixture_aa_misnamed_steps": step_module("fixture_called_otherwise")},
    )  # fmt: skip
    steps_dist(tmp_path, "agentenv-fixture-zz-right", "fixture_zz_right", "fixture_contested")
    plugins = listing(tmp_path)
    assert plugins["agentenv-fixture-zz-right"]["status"] == "ok"
    assert plugins["agentenv-fixture-zz-right"]["contributes"] == {"steps": ["fixture_contested"]}
    [problem] = problems(tmp_path)
    assert problem["code"] == "invalid-contribution" and problem["plugin"] == "fixture-aa-misnamed"
    assert "is named 'fixture_called_otherwise', not 'fixture_contested'" in problem["message"]
    shown = run_cli("steps", "show", "fixture_contested", "--json", paths=[tmp_path])
    assert shown.returncode == 0 and shown.json()["distribution"] == "agentenv-fixture-zz-right", shown


def test_a_hook_that_returns_the_wrong_shape_says_so(tmp_path: Path) -> None:
    single = """
        from agentenv.contracts import ClassRef
        from agentenv.hookspecs import hookimpl


        @hookimpl
        def agentenv_register_steps():
            return ClassRef("fixture_single", "fixture_single_steps:Step0")
    """
    install_fixture_plugin(tmp_path, "agentenv-fixture-single", "1.0.0", "fixture-single", "fixture_single", single,
                           extra_modules={"fixture_single_steps": step_module("fixture_single")})  # fmt: skip
    check = run_cli("plugin", "check", "--json", paths=[tmp_path])
    [problem] = [p for p in check.json()["problems"] if p["plugin"] == "fixture-single"]
    assert problem["code"] == "invalid-hook"
    assert problem["message"] == "agentenv_register_steps of agentenv-fixture-single returned ClassRef, not a list"
    assert problem["fix"].startswith("return a list of contributions from agentenv_register_steps")
