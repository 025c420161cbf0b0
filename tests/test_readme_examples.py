"""The kernel README's "Writing a plugin" example works verbatim: its pyproject, plugin module and env module
are installed as a distribution (real metadata, found by discovery), checked and used in a world; its step
example passes the step kit."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from agentenv import PluginHost
from agentenv.contracts import kinds
from agentenv_runtime import build_world
from agentenv_testing.installs import install_fixture_plugin
from agentenv_testing.steps import StepConformance

README = Path(__file__).resolve().parent.parent / "kernel" / "README.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def block_starting(language: str, first_line: str) -> str:
    (found,) = [b for b in blocks(language) if b.startswith(first_line)]
    return found


def test_the_phone_plugin_from_the_readme_installs_checks_and_runs(plugin_site: Path) -> None:
    project = tomllib.loads(block_starting("toml", "# pyproject.toml"))["project"]
    [(entry, module)] = project["entry-points"]["agentenv.plugins"].items()
    install_fixture_plugin(
        plugin_site,
        project["name"],
        "0.1.0",
        entry,
        module,
        block_starting("python", "# agentenv_phone/plugin.py"),
        project["dependencies"],
        extra_modules={"agentenv_phone.env": block_starting("python", "# agentenv_phone/env.py")},
    )
    host = PluginHost().resolve_all()
    assert [p for p in host.problems() if p.plugin == entry] == []
    assert host.registry(kinds.ENVS)["phone"].dist == "agentenv-phone"

    world = build_world("phone", host=host)
    sent = world.call("send_sms", {"to_number": "+15550100", "body": "hi"})
    assert sent.ok and sent.result == {"id": 1}
    refused = world.call("send_sms", {"to_number": "555", "body": "hi"})
    assert refused.error is not None and refused.error["field"] == "to_number"
    assert world.env("phone").query("SELECT count(*) AS n FROM sms") == [{"n": 1}]


def test_the_step_example_from_the_readme_passes_the_step_kit() -> None:
    namespace: dict[str, Any] = {}
    exec(block_starting("python", "from agentenv.contracts import Step, StepContext"), namespace)

    class Check(StepConformance):
        step_class = namespace["Ring"]
        example = {"number": "+15550100"}

    for name in dir(Check):
        if name.startswith("test_"):
            getattr(Check(), name)()
