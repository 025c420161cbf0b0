"""Mistakes an env author makes, caught where they are made with a message that names the thing to fix:
a tool parameter type without a JSON Schema, an artifact with an unknown table or column, two envs sharing an
artifacts folder, a call to a tool that composition renamed; and what an author reads without the source: the
card description from the class docstring, each trigger kind's `when` fields in `steps show`."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Literal

import pytest
from agentenv_runtime import Artifact, ArtifactError, Env, World, tool
from agentenv_runtime.env.tool import ToolSchemaError
from agentenv_testing.installs import CliResult, install_env_plugin


class Gadget:
    """Not a pydantic type: it has no JSON Schema."""


class Shop(Env):
    """A shop that sells gadgets.

    The second paragraph is not part of the card's description.
    """

    name = "shop"
    schema = "CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL, price INTEGER);"

    @tool
    def search_messages(self, query: str) -> list[str]:
        """Search the shop's messages.

        Args:
            query: Words.
        """
        return []

    @tool
    def send_sms(self, to: str) -> dict[str, str]:
        """Text a customer.

        Args:
            to: The number.
        """
        return {"to": to}


class Carrier(Env):
    name = "carrier"
    description = "Set explicitly, so the docstring-less class still has one."

    @tool
    def send_sms(self, to: str) -> dict[str, str]:
        """Send through the carrier.

        Args:
            to: The number.
        """
        return {"to": to}

    @tool
    def search_messages(self, query: str) -> list[str]:
        """Search the carrier's log.

        Args:
            query: Words.
        """
        return []


class Broken(Env):
    """An env with tools whose parameters have no schema."""

    name = "broken"

    @tool
    def use(self, thing: Gadget, count: int, spare: list[Gadget] | None = None) -> dict[str, str]:
        """Use a gadget.

        Args:
            thing: The gadget.
            count: How many times.
            spare: Spare gadgets.
        """
        return {}

    @tool
    def fine(self, when: datetime, tags: dict[str, list[int]], mode: Literal["a", "b"] = "a") -> dict[str, str]:
        """Every parameter has a schema."""
        return {}

    @tool
    def keep(self, thing: Gadget) -> dict[str, str]:
        """Keep a gadget."""
        return {}


def test_the_card_description_is_the_class_docstring_unless_set() -> None:
    assert Shop.description == "A shop that sells gadgets."
    assert Carrier.description == "Set explicitly, so the docstring-less class still has one."
    assert Env.description == ""


def test_a_tool_type_without_json_schema_names_env_tool_parameter_and_type() -> None:
    spec = Broken.tool_specs()["use"]
    expected = "env 'broken', tool 'use': parameter 'thing' has type Gadget, which has no JSON Schema"
    assert (spec.schema_problem() or "").startswith(expected)
    assert "parameter 'spare' has type list[Gadget] | None" in (spec.schema_problem() or ""), "every parameter"
    assert "'count'" not in (spec.schema_problem() or "")
    with pytest.raises(ToolSchemaError, match=expected):
        World([Broken()]).list_tools()
    assert Shop.tool_specs()["send_sms"].schema_problem() is None
    assert Broken.tool_specs()["fine"].schema_problem() is None
    assert [problem.split(":")[0] for problem in Broken.schema_problems()] == [
        "env 'broken', tool 'use'",
        "env 'broken', tool 'keep'",
    ], "every tool"


def test_plugin_check_and_env_card_report_the_tool_schema_in_one_line(
    plugin_site: Path, agentenv_cli: Callable[..., CliResult]
) -> None:
    module = (
        "from agentenv_runtime import Env, tool\n\n\nclass Gadget:\n    pass\n\n\nclass BadEnv(Env):\n"
        '    """Bad."""\n\n    name = "fixture_bad_schema"\n\n'
        "    @tool\n    def use(self, thing: Gadget, other: Gadget) -> dict:\n"
        '        """Use it."""\n        return {}\n\n    @tool\n    def keep(self, thing: Gadget) -> dict:\n'
        '        """Keep it."""\n        return {}\n'
    )
    install_env_plugin(plugin_site, "fixture_bad_schema", module, "BadEnv")
    check = agentenv_cli("plugin", "check", "--json")
    problems = [p for p in check.json()["problems"] if p["code"] == "tool-schema"]
    assert check.returncode == 1 and len(problems) == 2, check  # one per tool, every parameter in it
    assert "env 'fixture_bad_schema', tool 'use': parameter 'thing' has type Gadget" in problems[0]["message"]
    assert "parameter 'other' has type Gadget" in problems[0]["message"]
    assert "env 'fixture_bad_schema', tool 'keep': parameter 'thing'" in problems[1]["message"]
    card = agentenv_cli("env", "card", "fixture_bad_schema")
    assert card.returncode == 1 and "Traceback" not in card.stderr
    assert card.stderr.startswith("error: env 'fixture_bad_schema' of agentenv-fixture-bad-schema has tools ")
    assert "tool 'use': parameter 'thing'" in card.stderr and "tool 'keep': parameter 'thing'" in card.stderr
    listed = agentenv_cli("env", "list", "--json")
    (row,) = [r for r in listed.json() if r["name"] == "fixture_bad_schema"]
    assert row["status"] == "broken" and "tool 'keep'" in row["problem"], row  # it said "ok"
    task = plugin_site.parent / "t.json"
    task.write_text('{"name": "t", "steps": [{"id": "w", "type": "deploy_env", "envs": ["fixture_bad_schema"]}]}')
    dry = agentenv_cli("run", str(task), "--dry-run")
    assert dry.returncode == 2 and "field `envs`: env 'fixture_bad_schema' of agentenv-fixture-bad-schema" in dry.stderr


def artifact(data: dict[str, object]) -> Artifact:
    return Artifact.build(name="a", env="shop", version="1", data=data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"orders": [{"id": 1}]}, "data.orders: shop has no table 'orders' (tables: items)"),
        (
            {"items": [{"id": 1, "title": "x"}, {"id": 2, "title": "y", "colour": "red"}]},
            "data.items[1].colour: shop table 'items' has no column 'colour' (columns: id, title, price)",
        ),
        (
            {"items": [{"id": 1, "title": "x", "price": 3}, {"id": 2, "title": "y"}]},
            "data.items[1]: every row of a table needs the same columns as the first (price differ)",
        ),
        ({"items": ["not a row"]}, "data.items[0]: a row is an object of column → value"),
    ],
)
def test_an_artifact_that_does_not_fit_names_table_row_and_column(data: dict[str, object], message: str) -> None:
    env = Shop()
    with pytest.raises(ArtifactError) as caught:
        env.load(artifact(data))
    assert str(caught.value).endswith(message)
    assert env.export() == {"items": []}, "a failed load changes nothing"


def test_two_envs_of_one_package_list_only_their_own_artifacts(plugin_site: Path) -> None:
    package = plugin_site / "fixture_twins"
    for env_name, artifact_name in (("twin_a", "alpha"), ("twin_b", "beta")):
        folder = package / "artifacts" / env_name
        folder.mkdir(parents=True)
        document = {"name": artifact_name, "env": env_name, "version": "1", "data": {}}
        (folder / f"{artifact_name}.json").write_text(json.dumps(document))
    (package / "__init__.py").write_text(
        "from agentenv_runtime import Env\n\n\nclass TwinA(Env):\n    name = 'twin_a'\n\n\n"
        "class TwinB(Env):\n    name = 'twin_b'\n"
    )
    from fixture_twins import TwinA, TwinB  # type: ignore[import-not-found]

    assert list(TwinA.artifact_paths()) == ["alpha"] and list(TwinB.artifact_paths()) == ["beta"]
    assert TwinB.find_artifact("beta").env == "twin_b"


def test_a_call_to_a_tool_renamed_by_composition_says_what_it_is_called_now() -> None:
    world = World([Shop(), Carrier()])
    renamed = world.call("send_sms", {"to": "+1"})
    assert renamed.error is not None and renamed.error["code"] == "unknown_tool"
    assert "did you mean shop_send_sms, carrier_send_sms?" in renamed.error["message"]
    typo = world.call("shop_send_smss", {"to": "+1"})
    assert typo.error is not None and "did you mean shop_send_sms" in typo.error["message"]
    assert world.call("shop_send_sms", {"to": "+1"}).ok


def test_steps_show_register_env_triggers_lists_each_kinds_when_fields(
    agentenv_cli: Callable[..., CliResult],
) -> None:
    shown = agentenv_cli("steps", "show", "register_env_triggers", "--json")
    assert shown.returncode == 0, shown
    kinds = shown.json()["trigger_kinds"]
    assert {"time", "tool_call", "state", "persona"} <= set(kinds)
    fields = {f["name"]: f for f in kinds["persona"]["when"]}
    assert fields["persona"]["required"] and "regex" in fields["match"]["description"].lower()
    text = agentenv_cli("steps", "show", "register_env_triggers")
    assert "Trigger kind `time` (agentenv-runtime)" in text.stdout and "every" in text.stdout
    plain = agentenv_cli("steps", "show", "sync_env_clock", "--json")
    assert plain.json()["trigger_kinds"] == {}


class Notes(Env):
    name = "notes"

    @tool
    def search_messages(self, query: str) -> list[str]:
        """Search the notes; read one with get_item (search_messages_v2 is another tool).

        Args:
            query: Words, as for search_messages elsewhere.
        """
        return []

    @tool
    def get_item(self, item_id: str) -> dict[str, str]:
        """Read one note; find its id with search_messages first, or list them with list_notes.

        Args:
            item_id: An id that search_messages returned.
        """
        return {}

    @tool
    def list_notes(self) -> list[str]:
        """Every note's id (then get_item)."""
        return []


class Mail(Notes):
    """The same tools in another app: composition qualifies every name both have."""

    name = "mail"


def test_composed_tool_descriptions_name_tools_as_the_world_does() -> None:
    """A description that tells the agent to call `get_item` must say `notes_get_item` once composition renamed
    it (the card, MCP `tools/list` and every agent read these); names composition left alone stay."""
    tools = {t["name"]: t for t in World([Notes(), Mail()]).list_tools()}
    search = tools["notes_search_messages"]
    assert search["description"] == (
        "Search the notes; read one with notes_get_item (search_messages_v2 is another tool)."
    )
    query = search["inputSchema"]["properties"]["query"]["description"]
    assert query == "Words, as for notes_search_messages elsewhere."
    item = tools["notes_get_item"]
    assert item["description"] == (
        "Read one note; find its id with notes_search_messages first, or list them with notes_list_notes."
    )
    assert item["inputSchema"]["properties"]["item_id"]["description"] == "An id that notes_search_messages returned."
    assert tools["mail_list_notes"]["description"] == "Every note's id (then mail_get_item)."
    assert {t["name"]: t["description"] for t in World([Notes()]).list_tools()}["get_item"].startswith(
        "Read one note; find its id with search_messages first"
    ), "an env alone keeps its names"


def test_plugin_check_loads_every_packaged_artifact(
    plugin_site: Path, agentenv_cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A packaged artifact with a column its env lacks was found only by the first run that loaded it."""
    monkeypatch.setenv("AGENTENV_CACHE_DIR", str(tmp_path / "cache"))  # the verdict is cached until the file changes
    env = (
        "from agentenv_runtime import Env\n\n\nclass Shelf(Env):\n"
        '    name = "fixture_shelf"\n    schema = "CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL);"\n'
    )
    install_env_plugin(plugin_site, "fixture_shelf", env, "Shelf")
    folder = plugin_site / "artifacts"
    folder.mkdir()
    good = {"name": "good", "env": "fixture_shelf", "version": "1", "data": {"books": [{"id": 1, "title": "A"}]}}
    bad = {**good, "name": "bad", "data": {"books": [{"id": 1, "title": "A", "author": "B"}]}}
    (folder / "good.json").write_text(json.dumps(good))
    (folder / "bad.json").write_text(json.dumps(bad))
    for _ in range(2):  # the second check reads the verdict from the cache
        check = agentenv_cli("plugin", "check", "--json")
        problems = [p for p in check.json()["problems"] if p["code"] == "artifact-invalid"]
        assert check.returncode == 1 and len(problems) == 1, check
        assert "env 'fixture_shelf', artifact 'bad'" in problems[0]["message"]
        assert "data.books[0].author: fixture_shelf table 'books' has no column 'author'" in problems[0]["message"]
    (folder / "bad.json").write_text(json.dumps({**bad, "data": good["data"]}))
    fixed = agentenv_cli("plugin", "check", "--json")
    assert [p for p in fixed.json()["problems"] if p["code"] == "artifact-invalid"] == [], fixed
