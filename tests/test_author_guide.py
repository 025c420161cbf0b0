"""The author guide (`docs/authoring.md`) and the hook reference (`docs/hooks.md`, generated from the hookspec
docstrings): every hook is documented and the reference is current; the guide covers every topic an outside
author asked about, every built-in trigger kind's `when` fields among them; the READMEs link to it."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from agentenv import hookspecs
from agentenv.contracts import TriggerKind
from agentenv_runtime import BUILTIN_TRIGGER_KINDS
from agentenv_testing.installs import load_file_module

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")


def reference_module() -> ModuleType:
    module: ModuleType = load_file_module(ROOT / "docs" / "hook_reference.py", "hook_reference")
    return module


def test_every_hook_is_documented_and_the_reference_is_current() -> None:
    reference = reference_module()
    assert reference.undocumented() == []
    assert reference.main(["--check"]) == 0, "run ./dev python docs/hook_reference.py"
    declared = {name for name in vars(hookspecs.AgentenvSpecs) if name.startswith("agentenv_")}
    listed = set(re.findall(r"^### `(agentenv_\w+)\(", (ROOT / "docs" / "hooks.md").read_text(), re.MULTILINE))
    assert listed == declared


def test_a_hook_without_a_docstring_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    def agentenv_register_gadgets(self: object) -> list[type]:
        raise NotImplementedError

    monkeypatch.setattr(hookspecs.AgentenvSpecs, "agentenv_register_gadgets", agentenv_register_gadgets, raising=False)
    reference = reference_module()
    assert reference.undocumented() == ["agentenv_register_gadgets"]
    assert reference.main(["--check"]) == 1


@pytest.mark.parametrize(
    "topic",
    [
        "The artifact file format",
        '"data": {',
        "ToolError(message, code=",
        "`invalid_arguments`",
        "@tool(read_only=True)",
        "### Env settings",
        "### The card description",
        "first paragraph of the class docstring",
        "describe_message(self, tool_name, arguments, result)",
        "deliver_reply(self, message, sender, text)",
        "agentenv.contracts.trigger.Message",
        "type hints they may use",
        "`<env>_<tool>`",
        "did you mean phone_search_messages, slack_search_messages",
        "Outside a world",
        "`agentenv serve`",
        "--start TIME",
        "With **hatchling**",
        "With **setuptools**",
        "[tool.setuptools.package-data]",
        "agentenv steps show\nregister_env_triggers",
        "agentenv plugin new",
        "(hooks.md)",
    ],
)
def test_the_guide_covers(topic: str) -> None:
    assert topic in GUIDE


@pytest.mark.parametrize("kind", BUILTIN_TRIGGER_KINDS, ids=lambda kind: kind.name)
def test_the_guide_lists_every_when_field_of_each_builtin_trigger_kind(kind: type[TriggerKind[Any]]) -> None:
    row = next((line for line in GUIDE.splitlines() if line.startswith(f"| `{kind.name}` |")), None)
    assert row is not None, f"no row for trigger kind {kind.name!r}"
    for field in kind.Settings.model_fields:
        assert f"`{field}`" in row, f"{kind.name}: `when` field {field!r} is not in the guide"


@pytest.mark.parametrize("readme", ["README.md", "kernel/README.md", "runtime/README.md"])
def test_the_readmes_link_to_the_guide(readme: str) -> None:
    assert "docs/authoring.md" in (ROOT / readme).read_text(encoding="utf-8")


SEVEN = GUIDE.split("## The seven kinds of plugin, against the public API\n")[1].split("\n## ")[0]
SEVEN_BLOCKS = re.findall(r"```python\n(.*?)```", SEVEN, re.S)


def test_the_guide_shows_each_of_the_seven_kinds_and_their_registration() -> None:
    contracts = ["Env[", "Step[", "TriggerKind[", "AgentKind[", "SandboxProvider[", "DocumentStore[", "CliCommand("]
    assert len(SEVEN_BLOCKS) == 8
    for block, contract in zip(SEVEN_BLOCKS, contracts, strict=False):
        assert contract in block, f"the block for {contract} is missing or out of order"
    for hook in ("envs", "steps", "trigger_kinds", "agent_kinds", "sandbox_providers", "stores", "cli_commands"):
        assert f"def agentenv_register_{hook}()" in SEVEN_BLOCKS[-1]


def test_the_seven_kinds_import_only_public_names() -> None:
    from architecture import private_imports_in_code_blocks

    assert private_imports_in_code_blocks(SEVEN) == []


def test_the_seven_kinds_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block runs, in order, in one namespace (a later block uses what an earlier one made), and each ends by
    checking what it defined."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "author_guide_seven_kinds"}
    for index, block in enumerate(SEVEN_BLOCKS):
        exec(compile(block, f"docs/authoring.md (seven kinds, block {index + 1})", "exec"), namespace)
    assert namespace["world"].call("send_sms", {"body": "again"}, role="alice").ok


def test_the_guide_names_bundle_ref_fields_as_the_class_does() -> None:
    """An author registering a bundle from this page used `folder=` (no such field): the guide must say
    `BundleRef(name, path, description)`, in the order and with the names the class has."""
    import dataclasses

    from agentenv.contracts import BundleRef

    written = re.findall(r"`BundleRef\(([^)`]*)\)`", GUIDE)  # the signature as the prose gives it
    fields = ", ".join(field.name for field in dataclasses.fields(BundleRef))
    assert written and all(call == fields for call in written), (written, fields)
    (block,) = re.findall(r"```python\n(# agentenv_phone/plugin.py\n.*?)```", GUIDE, re.S)  # the example, run
    namespace: dict[str, Any] = {"__file__": "/site/agentenv_phone/plugin.py", "__name__": "agentenv_phone.plugin"}
    exec(compile(block, "docs/authoring.md (bundle registration)", "exec"), namespace)
    (ref,) = namespace["agentenv_register_bundles"]()
    assert isinstance(ref, BundleRef) and str(ref.path) == "/site/agentenv_phone/bundles/desk-rules"


BUNDLE_SECTION = GUIDE.split("### A complete bundle, with world rules\n")[1].split("\n### ")[0]


def test_the_guides_bundle_with_triggers_runs_as_written(tmp_path: Path) -> None:
    """The bundle and task of the guide, written to disk from its text: a dry run passes, the run scores 1.0,
    and both triggers fired (the call one posted in #support, the time one took `close_ticket` away)."""
    import json
    import subprocess
    import sys

    files = dict(re.findall(r"```toml\n# (\S+)\n(.*?)```", BUNDLE_SECTION, re.S))
    assert set(files) == {"bundle.toml", "tasks/escalate.toml"}
    assert "kind = " in files["tasks/escalate.toml"] and "register_env_triggers" in files["tasks/escalate.toml"]
    bundle = tmp_path / "desk-rules"
    for name, text in files.items():
        (bundle / name).parent.mkdir(parents=True, exist_ok=True)
        (bundle / name).write_text(text, encoding="utf-8")
    (tmp_path / ".agentenv").mkdir()
    (tmp_path / ".agentenv" / "config.toml").write_text(
        f'[plugins.agentenv-store-local.document]\npath = "{tmp_path / "runs.sqlite3"}"\n'
        f'[plugins.agentenv-store-local.object]\nroot = "{tmp_path / "objects"}"\n'
    )

    def agentenv(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "agentenv", *args]
        return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)

    dry = agentenv("run", str(bundle), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    run = agentenv("run", str(bundle), "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    (task,) = json.loads(run.stdout)["tasks"]
    assert task["score"] == 1.0 and task["passed"] is True
    events = json.loads(agentenv("runs", "trajectory", task["run_id"], "--json").stdout)
    fired = [(e["kind"], e.get("trigger")) for e in events if e.get("trigger")]
    assert ("trigger", "announce") in fired and ("trigger", "freeze") in fired, events
    assert "agentenv_register_bundles" in BUNDLE_SECTION and "BundleRef(" in BUNDLE_SECTION
