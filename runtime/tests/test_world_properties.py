"""Property tests (hypothesis) of the world's state operations and RBAC, on the real helpdesk app.

- snapshot → more calls → restore gives back exactly the snapshotted state;
- a fork is independent: calls on it never change the original, and it starts equal to it;
- the same calls on two forks give the same state and the same trajectory digest;
- a role sees a tool iff it may call it; a refused call changes nothing and is recorded as refused.
"""

from __future__ import annotations

from typing import Any

from agentenv_runtime.world.build import build_world
from agentenv_runtime.world.world import GET_TIME, World
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TEMPLATE = build_world("helpdesk", artifacts=["acme"])
TEMPLATE.set_clock("2026-01-05T09:00:00Z", mode="frozen")  # virtual time: the same calls record the same events
TICKETS = [r["ticket_id"] for r in TEMPLATE.query("helpdesk", "SELECT ticket_id FROM tickets LIMIT 12")]
ORDERS = [r["order_id"] for r in TEMPLATE.query("helpdesk", "SELECT order_id FROM orders LIMIT 6")]
TOOLS = sorted(TEMPLATE.tools)
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=40)
calls = st.one_of(
    st.builds(
        lambda t, s, p: ("update_ticket", {"ticket_id": t, "status": s, "priority": p}),
        st.sampled_from(TICKETS),
        st.sampled_from(["open", "pending", "solved", "closed"]),
        st.sampled_from(["low", "normal", "high", "urgent"]),
    ),
    st.builds(
        lambda t, b, p: ("add_ticket_comment", {"ticket_id": t, "body": b, "public": p}),
        st.sampled_from(TICKETS),
        text,
        st.booleans(),
    ),
    st.builds(lambda t, r: ("close_ticket", {"ticket_id": t, "resolution": r}), st.sampled_from(TICKETS), text),
    st.builds(
        lambda o, a, r: ("issue_refund", {"order_id": o, "amount": a, "reason": r}),
        st.sampled_from(ORDERS),
        st.floats(min_value=0.01, max_value=500, allow_nan=False).map(lambda x: round(x, 2)),
        text,
    ),
    st.builds(lambda t: ("get_ticket", {"ticket_id": t}), st.sampled_from([*TICKETS, "TCK-0", "nope"])),
    st.builds(lambda a: ("update_ticket", a), st.dictionaries(text, st.one_of(text, st.integers()), max_size=3)),
)


def apply(world: World, sequence: list[tuple[str, dict[str, Any]]]) -> None:
    for tool, arguments in sequence:
        world.call(tool, dict(arguments))


@PROPERTY_SETTINGS
@given(before=st.lists(calls, max_size=8), after=st.lists(calls, min_size=1, max_size=8))
def test_restore_gives_back_the_snapshotted_state(before: list[Any], after: list[Any]) -> None:
    world = TEMPLATE.fork()
    apply(world, before)
    saved, exported = world.snapshot(), world.export()
    apply(world, after)
    world.restore(saved)
    assert world.export() == exported
    assert world.snapshot() == saved


@PROPERTY_SETTINGS
@given(before=st.lists(calls, max_size=6), on_fork=st.lists(calls, min_size=1, max_size=8))
def test_a_fork_is_independent_of_its_origin(before: list[Any], on_fork: list[Any]) -> None:
    world = TEMPLATE.fork()
    apply(world, before)
    original = world.export()
    fork = world.fork()
    assert fork.export() == original
    apply(fork, on_fork)
    assert world.export() == original
    apply(world, on_fork)
    assert world.export() == fork.export()


@PROPERTY_SETTINGS
@given(sequence=st.lists(calls, max_size=10))
def test_the_same_calls_give_the_same_state_and_digest(sequence: list[Any]) -> None:
    first, second = TEMPLATE.fork(), TEMPLATE.fork()
    apply(first, sequence)
    apply(second, sequence)
    assert first.export() == second.export()
    assert first.trajectory.digest() == second.trajectory.digest()


roles = st.fixed_dictionaries(
    {
        "tools": st.one_of(st.just(["*"]), st.lists(st.sampled_from(TOOLS), max_size=6, unique=True)),
        "deny": st.lists(st.sampled_from(TOOLS), max_size=6, unique=True),
    }
)


@PROPERTY_SETTINGS
@given(spec=roles, probe=st.lists(calls, min_size=1, max_size=6))
def test_a_role_sees_exactly_what_it_may_call_and_refusals_change_nothing(
    spec: dict[str, list[str]], probe: list[Any]
) -> None:
    world = TEMPLATE.fork()
    world.rbac.define("agent", spec["tools"], spec["deny"])
    allowed = {t for t in TOOLS if t not in spec["deny"] and ("*" in spec["tools"] or t in spec["tools"])}
    listed = {t["name"] for t in world.list_tools("agent")} - {GET_TIME}
    assert listed == allowed == set(world.tool_names("agent")) - {GET_TIME}
    for tool, arguments in probe:
        before = world.snapshot()
        outcome = world.call(tool, dict(arguments), role="agent")
        if tool not in allowed:
            assert outcome.error is not None and outcome.error["code"] == "forbidden"
            assert world.snapshot() == before
            assert world.trajectory.events[-1]["error"]["code"] == "forbidden"
        elif not outcome.ok:
            assert world.snapshot() == before  # refused by the app: rolled back
