"""The reference AgentEnv implementation's own client (`agentenv-framework-protocol`, import `agentenv_protocol`,
a test-only dev dependency) against our served slack + email + helpdesk world, with and without tokens.

Every answer is validated against the reference's pydantic models (`EnvironmentCard`, `GetDataResponse`, …):
they are the spec. The reference client has no token parameter for the data plane and its extensions (its
gateway sits in front of envs on a private network); with tokens, the test gives it the control token the way
a trusted harness would, through the httpx client the module uses.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import types
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from agentenv_protocol import (
    METHOD_ADD,
    METHOD_GET,
    METHOD_RESET,
    AddDataResponse,
    DataPart,
    EnvironmentCard,
    FilePart,
    GetDataResponse,
    IntakeDeclaration,
    ResetDataResponse,
    TextPart,
    ToolSession,
    ToolSessionError,
    intake_fit_check,
)
from agentenv_protocol import client as ref
from agentenv_protocol.types import FileWithBytes, FileWithUri
from agentenv_runtime import Env

ENVS = ("slack", "email", "helpdesk")
EXT = "urn:agentenv:{}/v1"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def open_world(serve: Any) -> Iterator[Any]:
    """Token-less (loopback), with the reference's reset meaning: `data/reset` clears, `data/add` loads."""
    with serve(tokens=None, reset_to="empty") as handle:
        yield handle


def _client_token(monkeypatch: pytest.MonkeyPatch, token: str) -> None:
    """The reference client's httpx, carrying `token` (it has no parameter for one)."""
    shim = types.SimpleNamespace(**vars(httpx))
    shim.AsyncClient = functools.partial(httpx.AsyncClient, headers={"authorization": f"Bearer {token}"})
    monkeypatch.setattr(ref, "httpx", shim)


def _validated_card(card: dict[str, Any]) -> EnvironmentCard:
    model = EnvironmentCard.model_validate(card)
    for child in card["children_environments"]:
        EnvironmentCard.model_validate(child)
    return model


def _acme_file_part(env: str) -> FilePart:
    path = _env_class(env).artifact_paths()["acme"]
    return FilePart(file=FileWithBytes(bytes=base64.b64encode(path.read_bytes()).decode(), name=path.name))


def _env_class(name: str) -> type[Env]:
    from agentenv_runtime import build_world

    return type(build_world(name).envs[name])


# ---- without tokens ------------------------------------------------------------------------------------
def test_card_and_child_cards_validate(open_world: Any) -> None:
    card = run(ref.get_card(open_world.url))
    model = _validated_card(card)
    assert model.url == "/agentenv" and ref.mcp_path(card) == "/mcp"
    assert run(ref.supports_v1(open_world.url))
    helpdesk = ref.find_child(card, "helpdesk")
    assert helpdesk is not None and helpdesk["url"] == "/envs/helpdesk/agentenv"
    assert {t["name"] for t in helpdesk["capabilities"]["tools"]} >= {"get_ticket", "issue_refund"}
    assert ref.find_tool(card, "get_ticket") is not None
    assert ref.find_extension_method(card, EXT.format("clock"), "set_time") == {
        "method": "PUT",
        "endpoint": "/clock/set-time",
    }
    assert set(card["capabilities"]["operations"]) >= {"data/reset", "data/add", "data/get"}
    intake = IntakeDeclaration.model_validate(ref.intake_declaration(card))
    assert {f.part for f in intake.add or []} == {"data", "text", "file"}
    assert intake_fit_check(ref.intake_declaration(card), {"tickets": [{"ticket_id": "T-1"}]}) == []


def test_reset_add_get_round_trip(open_world: Any) -> None:
    url = open_world.url
    loaded = open_world.world.export()
    exported = GetDataResponse.model_validate(run(ref.get_data(url)))
    assert [p.metadata["env"] for p in exported.parts] == list(ENVS)  # type: ignore[union-attr,index]
    assert isinstance(run(ref.reset_data(url)), ResetDataResponse)
    assert all(rows == [] for env in open_world.world.export().values() for rows in env.values())  # cleared
    answer = run(ref.add_data(url, list(exported.parts)))  # what data/get gave back is what data/add takes
    assert isinstance(answer, AddDataResponse)
    assert open_world.world.export() == loaded
    run(ref.reset_data(url))
    parts = [_acme_file_part(env) for env in ENVS]  # artifact files, each naming its env
    run(ref.add_data(url, parts))
    assert open_world.world.export() == loaded


def test_add_data_by_uri_and_text(open_world: Any) -> None:
    url = open_world.url
    run(ref.reset_data(url))
    raw = _acme_file_part("helpdesk").file.bytes  # type: ignore[union-attr]
    by_uri = FilePart(file=FileWithUri(uri=f"data:application/json;base64,{raw}", name="acme.json"))
    channel = {"conversations": [dict(_one_channel(), id="C_TXT")]}
    text = TextPart(text=json.dumps(channel), metadata={"env": "slack"})
    run(ref.add_data(url, [by_uri, text]))
    assert open_world.world.query("helpdesk", "SELECT 1 FROM tickets WHERE ticket_id = 'TCK-9001'")
    assert open_world.world.query("slack", "SELECT 1 FROM conversations WHERE id = 'C_TXT'")
    with pytest.raises(RuntimeError, match=r"parts\.0"):  # a part naming no env in a three-env world
        run(ref.add_data(url, [DataPart(data={"tickets": []})]))


def _one_channel() -> dict[str, Any]:
    from agentenv_runtime import build_world

    return dict(build_world("slack", artifacts=["acme"]).envs["slack"].export()["conversations"][0])


def test_extensions_through_the_card(open_world: Any) -> None:
    url = open_world.url
    card = run(ref.get_card(url))
    invoke = functools.partial(ref.invoke_extension, url, card)
    state = run(invoke(EXT.format("clock"), {"virtual_time": "2026-11-24T10:00:00Z"}, method="set_time"))
    assert state["armed"] is True
    assert run(invoke(EXT.format("clock"), method="get_time"))["virtual_time"].startswith("2026-11-24T10:00")
    assert run(invoke(EXT.format("clock"), method="state"))["virtual_seconds_per_real_second"] == 1.0
    trigger = {"id": "t1", "kind": "tool_call", "when": {"tool": "get_ticket"}, "actions": []}
    run(invoke(EXT.format("triggers"), {"triggers": [trigger]}, method="register"))
    assert [t["id"] for t in run(invoke(EXT.format("triggers"), method="state"))["triggers"]] == ["t1"]
    with pytest.raises(ref.ExtensionCallError) as refused:
        run(invoke(EXT.format("triggers"), {"ids": ["nope"]}, method="remove"))
    assert refused.value.response.status_code == 400 and refused.value.code == "invalid_params"
    run(invoke(EXT.format("triggers"), {"ids": ["t1"]}, method="remove"))
    disabled = run(invoke(EXT.format("disable-tool"), {"role": "support", "tools": ["get_ticket"]}))
    assert "get_ticket" in disabled["disabled"] and not open_world.world.rbac.permits("support", "get_ticket")
    run(invoke(EXT.format("enable-tool"), {"role": "support", "tools": ["get_ticket"]}))
    assert open_world.world.rbac.permits("support", "get_ticket")
    world_state = run(invoke(EXT.format("state")))
    assert [s["name"] for s in world_state["mcp_servers"]] == list(ENVS)
    step = run(invoke(EXT.format("step"), {"action": "call_tool", "tool_name": "get_ticket",
                                            "arguments": {"ticket_id": "TCK-9001"}}))
    assert step["isError"] is False
    assert run(invoke(EXT.format("clock"), method="clear")) == {"ok": True, "armed": False}
    trajectory = httpx.get(url + ref.find_extension_method(card, EXT.format("trajectory"), "get")["endpoint"])
    events = [json.loads(line) for line in trajectory.text.splitlines()]
    assert [e["tool"] for e in events if e["kind"] == "tool_call"] == ["get_ticket"]


def test_tool_session_with_role_header(open_world: Any) -> None:
    async def go() -> None:
        async with ToolSession(mcp_url=f"{open_world.url}/mcp", role="support") as session:
            listed = {t.name for t in await session.list_tools()}
            assert "get_ticket" in listed and "issue_refund" not in listed
            result = await session.call_tool("get_ticket", {"ticket_id": "TCK-9001"})
            assert not result.isError and json.loads(result.text)["ticket_id"] == "TCK-9001"
        async with ToolSession(mcp_url=f"{open_world.url}/mcp") as session:
            assert "issue_refund" in {t.name for t in await session.list_tools()}

    run(go())


# ---- with tokens --------------------------------------------------------------------------------------
def test_public_card_without_a_token(served: Any) -> None:
    card = run(ref.get_card(served.url))
    _validated_card(card)
    assert card["capabilities"]["tools"] == []
    with pytest.raises(httpx.HTTPStatusError) as refused:  # the data plane still needs the control token
        run(ref.reset_data(served.url))
    assert refused.value.response.status_code == 401


def test_operations_name_the_references_data_plane_methods(served: Any, tokens: Any) -> None:
    """The reference model's `capabilities.operations`: the data-plane methods (`[]` none, absent the full trio),
    on the root card as on each child, for the public card and every role's view alike."""
    data_plane = [METHOD_RESET, METHOD_ADD, METHOD_GET]
    for token, expected in ((None, data_plane), (tokens["control"], data_plane), (tokens["support"], [])):
        headers = {"authorization": f"Bearer {token}"} if token else {}
        card = httpx.get(served.url + "/.well-known/agent-env.json", headers=headers).json()
        for model in (_validated_card(card), *map(EnvironmentCard.model_validate, card["children_environments"])):
            assert model.capabilities.operations == expected, (token, model.name)


def test_data_plane_and_extensions_with_the_control_token(served: Any, tokens: Any, monkeypatch: Any) -> None:
    _client_token(monkeypatch, tokens["control"])
    url = served.url
    loaded = served.world.export()
    card = run(ref.get_card(url))  # the control token's view: the data plane, no agent tools of its own
    _validated_card(card)
    assert ref.find_child(card, "helpdesk")["capabilities"]["operations"] == ["data/reset", "data/add", "data/get"]
    got = GetDataResponse.model_validate(run(ref.get_data(url)))
    assert isinstance(run(ref.reset_data(url)), ResetDataResponse)  # this server resets to the loaded state
    assert served.world.export() == loaded
    row = dict(loaded["helpdesk"]["tickets"][0], ticket_id="TCK-REF")
    run(ref.add_data(url, [DataPart(data={"tickets": [row]}, metadata={"env": "helpdesk"})]))
    assert served.world.query("helpdesk", "SELECT 1 FROM tickets WHERE ticket_id = 'TCK-REF'")
    assert len(got.parts) == 3
    state = run(ref.invoke_extension(url, card, EXT.format("clock"), {"virtual_time": "2026-11-24T10:00:00Z"},
                                     method="set_time"))
    assert state["armed"] and served.world.clock.armed


def test_extensions_refuse_an_ordinary_token(served: Any, tokens: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _client_token(monkeypatch, tokens["support"])
    card = run(ref.get_card(served.url))
    with pytest.raises(ref.ExtensionCallError) as refused:
        run(ref.invoke_extension(served.url, card, EXT.format("disable-tool"), {"role": "support", "tools": "*"}))
    assert refused.value.response.status_code == 403 and refused.value.code == "forbidden"
    assert served.world.rbac.permits("support", "get_ticket")


def test_tool_sessions_with_tokens(served: Any, tokens: Any) -> None:
    mcp_url = f"{served.url}/mcp"

    def bearer(role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens[role]}"}

    async def go() -> None:
        async with ToolSession(mcp_url=mcp_url, headers=bearer("support")) as session:
            assert "issue_refund" not in {t.name for t in await session.list_tools()}
        async with ToolSession(mcp_url=mcp_url, headers=bearer("control"), role="billing_lead") as session:
            assert "issue_refund" in {t.name for t in await session.list_tools()}
        with pytest.raises(ToolSessionError, match="403"):
            async with ToolSession(mcp_url=mcp_url, headers=bearer("support"), role="billing_lead") as session:
                await session.list_tools()
        with pytest.raises(ToolSessionError, match="401"):
            async with ToolSession(mcp_url=mcp_url) as session:
                await session.list_tools()

    run(go())
