"""The reference gateway's trigger language, translated where it has an exact counterpart."""

from __future__ import annotations

import pytest
from agentenv_runtime.world.build import build_world
from agentenv_runtime.world.reference_triggers import is_reference_trigger, seconds, translate


def test_an_action_trigger_with_tool_and_permission_actions() -> None:
    theirs = {
        "id": "t1",
        "when": {"type": "action", "tool": "close_ticket", "roles": ["support"],
                 "where": {"args.ticket_id": {"equals": "TCK-9001"}, "result.status": {"regex": "^closed$"},
                           "result.items[0].sku": {"equals": "B-1"}},
                 "repeat": True},
        "actions": [
            {"type": "tool", "tool": "add_ticket_comment", "args": {"ticket_id": "TCK-9001", "body": "closed"},
             "as": "billing_lead"},
            {"type": "permission", "action": "disable", "role": "support", "tools": ["close_ticket"]},
        ],
    }
    assert is_reference_trigger(theirs) and not is_reference_trigger({"id": "x", "kind": "time", "when": {}})
    ours, problems = translate(theirs)
    assert problems == []
    assert ours == {
        "id": "t1", "kind": "tool_call", "repeat": True,
        "when": {"tool": "close_ticket", "role": "support", "args": {"ticket_id": {"equals": "TCK-9001"}},
                 "result": {"status": {"regex": "(?-i:^closed$)"}, "items.0.sku": {"equals": "B-1"}}},
        "actions": [
            {"call_tool": {"tool": "add_ticket_comment", "args": {"ticket_id": "TCK-9001", "body": "closed"},
                           "role": "billing_lead"}},
            {"set_tool_access": {"role": "support", "disable": ["close_ticket"]}},
        ],
    }
    world = build_world("helpdesk", artifacts=["acme"], roles={"support": {"tools": ["*"]}})
    ours["when"]["result"].pop("items.0.sku")  # close_ticket answers no items; the rest must match this call
    world.add_trigger(ours)  # a valid definition of ours
    world.set_clock("2026-11-24T10:00:00Z", mode="frozen")
    assert world.call("close_ticket", {"ticket_id": "TCK-9001", "resolution": "done"}, role="support").ok
    assert not world.rbac.permits("support", "close_ticket")  # the translated permission action ran


def test_a_time_trigger_and_durations() -> None:
    ours, problems = translate({"id": "t", "when": {"type": "time", "at": "2026-11-24T11:00:00Z", "every": "PT1H30M",
                                                     "count": 3}, "actions": []})
    assert problems == [] and ours is not None
    assert ours["kind"] == "time" and ours["when"] == {"at": "2026-11-24T11:00:00Z", "every": 5400.0, "times": 3}
    assert seconds("P1DT2S") == 86402.0 and seconds("PT") is None and seconds("1h") is None


def test_what_does_not_translate_is_named_field_by_field() -> None:
    theirs = {
        "id": "t",
        "when": {"type": "action", "tool": "get_ticket", "roles": ["a", "b"], "where": {"args.x": {"exists": True}}},
        "actions": [{"type": "nl", "instruction": "say hi"}, {"type": "tool", "tool": "x", "args": {"a": "${args.x}"},
                                                            "delay": "PT1M"}],
        "barrier": {"at": "provoking_call"},
    }
    ours, problems = translate(theirs, where="triggers.0")
    assert ours is None
    assert problems == [
        "triggers.0.when.roles: agentenv's tool_call trigger watches one role (or every role)",
        "triggers.0.when.where.args.x: only equals and regex predicates have a counterpart",
        "triggers.0.actions.0.type: 'nl' actions have no counterpart (a simulated person replies with `reply`)",
        "triggers.0.actions.0.instruction: no counterpart in agentenv's trigger actions",
        "triggers.0.actions.1.args: templated ${…} arguments have no counterpart",
        "triggers.0.actions.1.delay: no counterpart in agentenv's trigger actions",
        "triggers.0.barrier: no counterpart in agentenv's triggers",
    ]
    state, problems = translate({"id": "s", "when": {"type": "state", "check": {}}, "actions": []})
    assert state is None and problems[0].startswith("trigger.when.type: 'state' triggers have no counterpart")


def test_regex_stays_case_sensitive_as_theirs() -> None:
    from agentenv_runtime.world.triggers import matches

    ours, _ = translate({"id": "r", "when": {"type": "action", "tool": "t", "where": {"args.a": {"regex": "^Closed$"}}},
                         "actions": []})
    assert ours is not None
    predicate = ours["when"]["args"]["a"]
    assert matches("Closed", predicate) and not matches("closed", predicate)


def test_an_access_change_for_an_unknown_role_is_refused() -> None:
    """`Rbac.change` made an unknown role with no tools; it is refused, as is a trigger that would make one."""
    from agentenv_runtime import WorldError
    from agentenv_runtime.world.rbac import UnknownRole

    world = build_world("helpdesk", roles={"support": {"deny": ["issue_refund"]}})
    with pytest.raises(UnknownRole, match=r"no role 'suport' in this world \(roles: default, support\)"):
        world.set_tool_access("suport", disable=["get_ticket"])
    assert "suport" not in world.rbac.roles
    rule = {"id": "lock", "kind": "tool_call", "when": {"tool": "get_ticket"},
            "actions": [{"set_tool_access": {"role": "suport", "disable": ["close_ticket"]}}]}
    with pytest.raises(WorldError, match=r"trigger lock: actions.set_tool_access.role: no role 'suport'"):
        world.add_trigger(rule)
