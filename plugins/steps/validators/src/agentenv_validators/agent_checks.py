"""The checks behind the agent validators 38–49: each takes an `AgentTarget` and returns rows.

An agent that does not answer as the protocol (or the agentenv agent-config extension) says is a failed
row, never a crashed step. Checks that change the agent's configuration restore it afterwards, and save
and reload its state, so checking a served agent leaves it as it was found.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

from agentenv_validators.agent_probe import EXTENSION_URI, AgentProbe, ProbeError, pretty
from agentenv_validators.agent_target import (
    PROBE_TOOL,
    AgentTarget,
    serve_peer,
    serve_probe_world,
)
from agentenv_validators.results import Row, row

EXT_ROW = "agent-config extension"
TEXT_MODES = ("text/plain", "text/*", "text")


def _missing_extension() -> Row:
    return row(
        EXT_ROW,
        False,
        f"the card declares no {EXTENSION_URI} extension in capabilities.extensions, so the agent cannot be "
        "configured; serve it with agentenv-a2a (build_a2a_app / agentenv a2a-serve) or implement the extension",
    )


async def _extension_rows(probe: AgentProbe) -> list[Row] | None:
    """None when the extension is declared; else the rows that say why the check cannot go on."""
    try:
        declared = await probe.extension()
    except ProbeError as exc:
        return [row("agent card", False, str(exc))]
    return None if declared is not None else [_missing_extension()]


async def _call(probe: AgentProbe, rows: list[Row], criterion: str, method: str, params: Any = None) -> Any:
    """An extension call as a row: passed with its result, or failed with the agent's refusal (→ None)."""
    try:
        result = await probe.ext(method, params)
    except ProbeError as exc:
        rows.append(row(criterion, False, str(exc)))
        return None
    rows.append(row(criterion, True, f"{method} accepted"))
    return result


@asynccontextmanager
async def leave_as_found(probe: AgentProbe, fields: list[str]) -> AsyncIterator[None]:
    """Restore `fields` of the configuration and the agent's state when the block ends (best effort)."""
    try:
        original = await probe.ext("config/get")
    except ProbeError:
        original = None
    try:
        saved = (await probe.ext("state/save") or {}).get("state")
    except (ProbeError, AttributeError):
        saved = None
    try:
        yield
    finally:
        if isinstance(original, dict):
            restore = {f: original[f] for f in fields if f in original}
            if any(s.get("token") == "***" for s in restore.get("mcp_servers") or [] if isinstance(s, dict)):
                restore.pop("mcp_servers")  # tokens are not shown, so those servers cannot be given back
            if restore:
                with suppress(ProbeError):
                    await probe.ext("config/set", restore)
        if saved is not None:
            with suppress(ProbeError):
                await probe.ext("state/load", {"state": saved})


# ---- 38 -----------------------------------------------------------------------------------------------
def _nonempty_str(card: dict[str, Any], field: str) -> Row:
    value = card.get(field)
    ok = isinstance(value, str) and bool(value.strip())
    return row(field, ok, repr(value)[:120] if ok else f"`{field}` is missing or empty")


def _modes(card: dict[str, Any], field: str) -> Row:
    value = card.get(field)
    modes = [m for m in value if isinstance(m, str) and m] if isinstance(value, list) else []
    ok = isinstance(value, list) and bool(value) and len(modes) == len(value)
    return row(field, ok, ", ".join(modes) if ok else f"`{field}` must be a non-empty list of media types")


def card_urls(card: dict[str, Any]) -> list[str]:
    """The card's endpoint URLs: protocol 1.0 `supportedInterfaces[].url`, or 0.3's top-level `url`."""
    urls = [str(card["url"])] if isinstance(card.get("url"), str) else []
    for interface in card.get("supportedInterfaces") or card.get("additionalInterfaces") or []:
        if isinstance(interface, dict) and isinstance(interface.get("url"), str):
            urls.append(interface["url"])
    return urls


async def check_card(target: AgentTarget) -> list[Row]:
    try:
        status, card, where = await target.probe.fetch_card()
    except ProbeError as exc:
        return [row("card served", False, str(exc))]
    served = status == 200 and isinstance(card, dict)
    rows = [row("card served", served, f"{where}: HTTP {status}" + ("" if served else "; not a JSON object"))]
    if not served:
        return rows
    rows += [_nonempty_str(card, "name"), _nonempty_str(card, "description")]
    from agentenv_a2a.api import resolve_url

    # A relative url (the reference implementation's `"/a2a"`) is resolved against the card's address, as clients do.
    resolved = {url: resolve_url(where, url) for url in card_urls(card)}
    good = [
        full if full == url else f"{full} (card: {url})"
        for url, full in resolved.items()
        if full.startswith(("http://", "https://"))
    ]
    rows.append(row("url", bool(good), ", ".join(good) if good else "no http(s) `url` (nor supportedInterfaces[].url)"))
    rows.append(_nonempty_str(card, "version"))
    capabilities = card.get("capabilities")
    rows.append(
        row(
            "capabilities",
            isinstance(capabilities, dict),
            "an object" if isinstance(capabilities, dict) else "`capabilities` is missing or not an object",
        )
    )
    skills = card.get("skills")
    problems = []
    if not isinstance(skills, list) or not skills:
        problems.append("`skills` must be a non-empty list")
    else:
        for index, skill in enumerate(skills):
            lacking = [f for f in ("id", "name", "description") if not (isinstance(skill, dict) and skill.get(f))]
            if lacking:
                problems.append(f"skills[{index}] lacks {', '.join(lacking)}")
    rows.append(row("skills", not problems, "; ".join(problems) or f"{len(skills or [])} skill(s)"))
    rows += [_modes(card, "defaultInputModes"), _modes(card, "defaultOutputModes")]
    declared = any(
        isinstance(e, dict) and e.get("uri") == EXTENSION_URI
        for e in (capabilities or {}).get("extensions", [])
        if isinstance(capabilities, dict)
    )
    rows.append(row(EXT_ROW, declared, "declared" if declared else "not declared (optional)", weight=0))
    return rows


# ---- 39 -----------------------------------------------------------------------------------------------
async def check_identity(target: AgentTarget) -> list[Row]:
    probe = target.probe
    if (stop := await _extension_rows(probe)) is not None:
        return stop
    marker = target.token("identity")
    name, description = f"Validator {marker}", f"Renamed by verify_a2a_agent_config_identity ({marker})."
    rows: list[Row] = []
    async with leave_as_found(probe, ["name", "description"]):
        if (
            await _call(
                probe, rows, "config/set name and description", "config/set", {"name": name, "description": description}
            )
            is None
        ):
            return rows
        config = await _call(probe, rows, "config/get", "config/get") or {}
        rows.append(row("config reports the name", config.get("name") == name, f"name {config.get('name')!r}"))
        _status, card, _where = await probe.fetch_card()
        card = card if isinstance(card, dict) else {}
        rows.append(row("card name changed", card.get("name") == name, f"card name {card.get('name')!r}"))
        rows.append(
            row(
                "card description changed",
                card.get("description") == description,
                f"card description {card.get('description')!r}",
            )
        )
    return rows


# ---- 40 / 47 ------------------------------------------------------------------------------------------
def _mcp_prompt(token: str) -> str:
    return (
        f'Call the tool `{PROBE_TOOL}` of the MCP server `probe` with token "{token}", '
        "then reply with what the tool answered."
    )


async def _use_probe_server(probe: AgentProbe, rows: list[Row], world_url: str) -> bool:
    """Give the agent the probe world as its MCP server `probe`; False (with the failed row) if refused."""
    server = {"name": "probe", "url": f"{world_url}/mcp"}
    return await _call(probe, rows, "config/set mcp_servers", "config/set", {"mcp_servers": [server]}) is not None


async def _ask_for_probe_call(probe: AgentProbe, rows: list[Row], token: str) -> Any:
    """Ask the agent to call the probe tool with `token`; records whether the answer completed."""
    exchange = await probe.send(_mcp_prompt(token))
    rows.append(row("answer completed", exchange.completed, exchange.summary()))
    return exchange


async def check_mcp(target: AgentTarget) -> list[Row]:
    probe = target.probe
    if (stop := await _extension_rows(probe)) is not None:
        return stop
    token = target.token("ping")
    rows: list[Row] = []
    with serve_probe_world() as world:
        async with leave_as_found(probe, ["mcp_servers"]):
            if not await _use_probe_server(probe, rows, world.url):
                return rows
            config = await _call(probe, rows, "config/get", "config/get") or {}
            listed = [s.get("name") for s in config.get("mcp_servers") or [] if isinstance(s, dict)]
            rows.append(row("MCP server listed", "probe" in listed, f"mcp_servers: {listed}"))
            await _ask_for_probe_call(probe, rows, token)
            pings = await asyncio.to_thread(world.pings)
            rows.append(
                row(
                    f"{PROBE_TOOL} called",
                    bool(pings),
                    f"the probe world recorded {len(pings)} call(s): {pings}"[:300]
                    if pings
                    else f"the probe world at {world.url} recorded no call of {PROBE_TOOL}",
                )
            )
            sent = [p["args"].get("token") for p in pings if isinstance(p.get("args"), dict)]
            rows.append(row("token sent", token in sent, f"tokens sent: {sent}", weight=0))
    return rows


async def check_trajectory(target: AgentTarget) -> list[Row]:
    probe = target.probe
    if (stop := await _extension_rows(probe)) is not None:
        return stop
    token = target.token("trajectory")
    rows: list[Row] = []
    with serve_probe_world() as world:
        async with leave_as_found(probe, ["mcp_servers"]):
            if not await _use_probe_server(probe, rows, world.url):
                return rows
            exchange = await _ask_for_probe_call(probe, rows, token)
            pings = await asyncio.to_thread(world.pings)
            params = {"task_id": exchange.task_id} if exchange.task_id else {"context_id": exchange.context_id}
            result = await _call(probe, rows, "trajectory/get", "trajectory/get", params)
            tasks = result.get("tasks") if isinstance(result, dict) else None
            if not isinstance(tasks, list) or not tasks:
                rows.append(row("task in the trajectory", False, f"no task for {params}: {result!r}"[:300]))
                return rows
            task = tasks[-1] if isinstance(tasks[-1], dict) else {}
            rows.append(row("task in the trajectory", True, f"{len(tasks)} task record(s) for {params}"))
            prompt_ok = token in str(task.get("prompt", "")) and task.get("response") is not None
            rows.append(
                row(
                    "turns recorded",
                    prompt_ok,
                    f"prompt {str(task.get('prompt'))[:80]!r}, response {str(task.get('response'))[:80]!r}",
                )
            )
            calls = [c for c in task.get("tool_calls") or [] if isinstance(c, dict)]
            listed = [c for c in calls if str(c.get("tool", "")).endswith(PROBE_TOOL)]
            if not pings:
                detail = f"the agent called no tool (the probe world saw no {PROBE_TOOL}), so none can be listed"
            else:
                detail = f"{len(listed)} of {len(pings)} {PROBE_TOOL} call(s) listed; tool_calls: " + ", ".join(
                    str(c.get("tool")) for c in calls
                )
            rows.append(row("tool calls listed", bool(pings) and len(listed) >= len(pings), detail[:300]))
    return rows


# ---- 41 -----------------------------------------------------------------------------------------------
def transition_problems(states: list[str]) -> list[str]:
    """What is wrong with a task's observed state sequence."""
    problems = []
    terminal = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
    for index, state in enumerate(states[:-1]):
        if state in terminal:
            problems.append(f"{pretty(state)} is terminal but {pretty(states[index + 1])} followed")
        if state != "TASK_STATE_SUBMITTED" and states[index + 1] == "TASK_STATE_SUBMITTED":
            problems.append(f"back to submitted after {pretty(state)}")
    return problems


async def check_core_protocol(target: AgentTarget) -> list[Row]:
    probe = target.probe
    exchange = await probe.send("Reply with the word PONG.")
    rows = [row("SendMessage answered", exchange.error is None, exchange.summary())]
    if exchange.error is not None:
        return rows
    if exchange.message_only:
        rows.append(row("answer has content", exchange.parts > 0, f"{exchange.parts} part(s)"))
        return rows
    rows.append(
        row(
            "task created",
            bool(exchange.task_id and exchange.context_id),
            f"task {exchange.task_id}, context {exchange.context_id}",
        )
    )
    rows.append(
        row("task completed", exchange.final_state == "TASK_STATE_COMPLETED", f"ended {pretty(exchange.final_state)}")
    )
    problems = transition_problems(exchange.states)
    rows.append(
        row(
            "state transitions valid",
            not problems,
            "; ".join(problems) or " → ".join(pretty(s) for s in exchange.states),
        )
    )
    try:
        task = await probe.get_task(str(exchange.task_id))
        from a2a.types.a2a_pb2 import TaskState

        same = task.id == exchange.task_id and task.status.state == TaskState.TASK_STATE_COMPLETED
        rows.append(
            row("GetTask returns the task", same, f"task {task.id}: {pretty(TaskState.Name(task.status.state))}")
        )
    except ProbeError as exc:
        rows.append(row("GetTask returns the task", False, str(exc)))
    rows.append(row("answer has content", exchange.parts > 0, f"{exchange.parts} part(s): {exchange.text[:120]!r}"))
    try:
        await probe.get_task("agentenv-validator-no-such-task")
        rows.append(row("unknown task refused", False, "GetTask of an unknown id answered instead of an error"))
    except ProbeError as exc:
        rows.append(row("unknown task refused", True, str(exc)[:200]))
    follow = await probe.send("Reply with the word PONG again.", context_id=exchange.context_id)
    rows.append(
        row(
            "context kept",
            follow.completed and follow.context_id == exchange.context_id,
            f"second message in context {exchange.context_id}: {follow.summary()}"[:300],
        )
    )
    return rows


# ---- 42 -----------------------------------------------------------------------------------------------
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)
_WAV = (
    b"RIFF"
    + (44 - 8 + 8).to_bytes(4, "little")
    + b"WAVEfmt "
    + (16).to_bytes(4, "little")
    + bytes.fromhex("01000100401f0000401f000001000800")
    + b"data"
    + (8).to_bytes(4, "little")
    + bytes([128] * 8)
)
_PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 72 72]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
)
MODALITIES: dict[str, tuple[tuple[str, ...], str, bytes | None, str]] = {
    # family: (declared media types that select it, probe media type, payload (None: data part), filename)
    "image": (("image/",), "image/png", _PNG, "probe.png"),
    "audio": (("audio/",), "audio/wav", _WAV, "probe.wav"),
    "pdf": (("application/pdf",), "application/pdf", _PDF, "probe.pdf"),
    "json": (("application/json",), "application/json", None, ""),
}


def declared_modes(card: dict[str, Any]) -> list[str]:
    modes = [m for m in card.get("defaultInputModes") or [] if isinstance(m, str)]
    for skill in card.get("skills") or []:
        if isinstance(skill, dict):
            modes += [m for m in skill.get("inputModes") or [] if isinstance(m, str)]
    return sorted(set(modes))


async def check_modalities(target: AgentTarget) -> list[Row]:
    from a2a.helpers import new_data_part, new_raw_part, new_text_part

    probe = target.probe
    try:
        card = await probe.card()
    except ProbeError as exc:
        return [row("agent card", False, str(exc))]
    modes = declared_modes(card)
    text = await probe.send("This is a text probe. Reply with anything.")
    rows = [row("text accepted", text.completed, text.summary())]
    for family, (selectors, media, payload, filename) in MODALITIES.items():
        chosen = [m for m in modes if any(m == s or (s.endswith("/") and m.startswith(s)) for s in selectors)]
        if not chosen and not any(m in ("*/*", "*") for m in modes):
            rows.append(
                row(f"{family} accepted", True, f"not declared (modes: {', '.join(modes)}); not probed", weight=0)
            )
            continue
        probe_media = chosen[0] if chosen and "*" not in chosen[0] else media
        if payload is None:
            part = new_data_part({"probe": family, "values": [1, 2, 3]}, media_type=probe_media)
        else:
            part = new_raw_part(payload, media_type=probe_media, filename=filename)
        exchange = await probe.send([new_text_part(f"Here is a small {family} probe. Reply with anything."), part])
        rows.append(row(f"{family} accepted", exchange.completed, f"{probe_media}: {exchange.summary()}"[:300]))
    return rows


# ---- 43 -----------------------------------------------------------------------------------------------
async def check_peers(target: AgentTarget) -> list[Row]:
    probe = target.probe
    if (stop := await _extension_rows(probe)) is not None:
        return stop
    token = target.token("peer")
    rows: list[Row] = []
    with serve_peer(token) as (peer_url, peer):
        async with leave_as_found(probe, ["peers"]):
            peers = [{"name": "oracle", "url": peer_url, "description": "knows the secret token"}]
            if await _call(probe, rows, "config/set peers", "config/set", {"peers": peers}) is None:
                return rows
            config = await _call(probe, rows, "config/get", "config/get") or {}
            listed = {p.get("name"): p.get("url") for p in config.get("peers") or [] if isinstance(p, dict)}
            rows.append(row("peers read back", listed.get("oracle") == peer_url, f"peers: {listed}"))
            exchange = await probe.send(
                "Ask your peer agent `oracle` for the secret token and reply with the token it gives you."
            )
            rows.append(row("answer completed", exchange.completed, exchange.summary()))
            rows.append(row("peer consulted", bool(peer.asked), f"the peer got {len(peer.asked)} message(s)"))
            rows.append(row("token relayed", token in exchange.text, f"expected {token} in {exchange.text[:200]!r}"))
    return rows


# ---- 44 -----------------------------------------------------------------------------------------------
def declaration_problems(install: Any) -> list[str]:
    if not isinstance(install, dict):
        return ["`install` is not an object with `files` and `commands`"]
    problems = []
    files = install.get("files", {})
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        problems.append("`files` must map relative paths to text")
    else:
        for path in files:
            if path.startswith("/") or ".." in path.split("/"):
                problems.append(f"files: {path!r} must be a relative path inside the sandbox")
    commands = install.get("commands", [])
    if not isinstance(commands, list) or not all(
        isinstance(c, str) or (isinstance(c, list) and c and all(isinstance(a, str) for a in c)) for c in commands
    ):
        problems.append("`commands` must be a list of strings (sh -c) or argv lists")
    return problems


async def check_install(target: AgentTarget, provider: Callable[[], Any], *, timeout: float) -> list[Row]:
    from agentenv.contracts import SandboxSpec

    probe = target.probe
    if (stop := await _extension_rows(probe)) is not None:
        return stop
    install = (await probe.extension() or {}).get("install")
    rows = [
        row(
            "install declared",
            install is not None,
            "params.install present" if install is not None else "the extension's params carry no `install`",
        )
    ]
    if install is None:
        return rows
    problems = declaration_problems(install)
    rows.append(row("declaration well formed", not problems, "; ".join(problems) or "files and commands"))
    if problems:
        return rows
    try:
        box = await asyncio.to_thread(provider().create, SandboxSpec(labels={"agentenv.run": "a2a-validate"}))
    except Exception as exc:
        rows.append(row("fresh sandbox", False, f"{type(exc).__name__}: {exc}"))
        return rows
    rows.append(row("fresh sandbox", True, str(getattr(box, "id", "created"))))
    try:
        for path, content in install.get("files", {}).items():
            try:
                await asyncio.to_thread(box.put_file, path, content.encode())
                rows.append(row(f"file {path}", True, f"{len(content)} characters written"))
            except Exception as exc:
                rows.append(row(f"file {path}", False, f"{type(exc).__name__}: {exc}"))
        for index, command in enumerate(install.get("commands", [])):
            argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
            result = await asyncio.to_thread(box.exec, argv, timeout=timeout)
            tail = (result.stderr or result.stdout).strip()[-300:]
            rows.append(
                row(
                    f"command {index}",
                    result.exit_code == 0,
                    f"{command!r} exited {result.exit_code}" + (f": {tail}" if result.exit_code else ""),
                )
            )
    finally:
        await asyncio.to_thread(box.teardown)
    return rows


# ---- 45 -----------------------------------------------------------------------------------------------
SKILL_NAME = "validator-marker"


async def check_skills(target: AgentTarget) -> list[Row]:
    probe = target.probe
    if (stop := await _extension_rows(probe)) is not None:
        return stop
    marker = target.token("skill")
    rows: list[Row] = []
    async with leave_as_found(probe, ["skills"]):
        config = await _call(probe, rows, "config/get", "config/get") or {}
        skill = {
            "name": SKILL_NAME,
            "description": "Marks answers for the validator.",
            "text": f"When you use this skill, put the marker {marker} in your answer.",
        }
        existing = [s for s in config.get("skills") or [] if isinstance(s, dict) and s.get("name") != SKILL_NAME]
        if await _call(probe, rows, "skill added", "config/set", {"skills": [*existing, skill]}) is None:
            return rows
        config = await _call(probe, rows, "config/get after", "config/get") or {}
        names = [s.get("name") for s in config.get("skills") or [] if isinstance(s, dict)]
        rows.append(row("skills listed", SKILL_NAME in names, f"skills: {names}"))
        _status, card, _where = await probe.fetch_card()
        on_card = [s.get("name") for s in (card or {}).get("skills") or [] if isinstance(s, dict)]
        rows.append(row("skill on the card", SKILL_NAME in on_card, f"card skills: {on_card}", weight=0))
        exchange = await probe.send(f"Use your skill `{SKILL_NAME}` to answer: what is 2 + 2?")
        rows.append(row("answer completed", exchange.completed, exchange.summary()))
        rows.append(row("skill used", marker in exchange.text, f"expected {marker} in {exchange.text[:200]!r}"))
    return rows


# ---- 46 -----------------------------------------------------------------------------------------------
async def check_snapshot(target: AgentTarget) -> list[Row]:
    first = target.probe
    if (stop := await _extension_rows(first)) is not None:
        return stop
    code = target.token("memo")
    rows: list[Row] = []
    async with leave_as_found(first, []), target.second() as other:
        told = await first.send(f"Remember this code for later: {code}. Reply OK.")
        rows.append(row("first instance answered", told.completed, told.summary()))
        saved = await _call(first, rows, "state saved", "state/save")
        state = saved.get("state") if isinstance(saved, dict) else None
        if not isinstance(state, dict):
            rows.append(row("state is a JSON object", False, f"state/save returned {saved!r}"[:200]))
            return rows
        second = other
        if second is None:  # one served instance: forget everything, then load
            if await _call(first, rows, "state reset", "state/reset") is None:
                return rows
            second = first
        if (stop := await _extension_rows(second)) is not None:
            return rows + stop
        if await _call(second, rows, "state loaded on another instance", "state/load", {"state": state}) is None:
            return rows
        asked = await second.send("What was the code I asked you to remember? Reply with the code.")
        rows.append(row("second instance answered", asked.completed, asked.summary()))
        rows.append(row("value recalled", code in asked.text, f"expected {code} in {asked.text[:200]!r}"))
    return rows


# ---- 48 -----------------------------------------------------------------------------------------------
async def check_role(target: AgentTarget, wanted: str | None) -> list[Row]:
    probe = target.probe
    if (stop := await _extension_rows(probe)) is not None:
        return stop
    rows: list[Row] = []
    async with leave_as_found(probe, ["role"]):
        config = await _call(probe, rows, "config/get", "config/get") or {}
        roles = config.get("roles")
        current = config.get("role")
        if wanted is None:
            others = [r for r in roles or [] if r != current]
            wanted = others[0] if others else (current if roles else "a2a-validator")
        if await _call(probe, rows, f"role {wanted!r} accepted", "config/set", {"role": wanted}) is None:
            return rows
        after = await _call(probe, rows, "config/get after", "config/get") or {}
        rows.append(row("role reported back", after.get("role") == wanted, f"role {after.get('role')!r}"))
    return rows


# ---- 49 -----------------------------------------------------------------------------------------------
async def check_system_prompt(target: AgentTarget) -> list[Row]:
    probe = target.probe
    if (stop := await _extension_rows(probe)) is not None:
        return stop
    marker = target.token("sysprompt")
    prompt = f"You are being validated. End every reply with the marker {marker}."
    rows: list[Row] = []
    async with leave_as_found(probe, ["system_prompt"]):
        if await _call(probe, rows, "system prompt set", "config/set", {"system_prompt": prompt}) is None:
            return rows
        config = await _call(probe, rows, "config/get", "config/get") or {}
        rows.append(
            row(
                "system prompt reported back",
                config.get("system_prompt") == prompt,
                f"system_prompt {str(config.get('system_prompt'))[:120]!r}",
            )
        )
        exchange = await probe.send("Say hello.")
        rows.append(row("answer completed", exchange.completed, exchange.summary()))
        rows.append(
            row("system prompt honoured", marker in exchange.text, f"expected {marker} in {exchange.text[:200]!r}")
        )
    return rows
