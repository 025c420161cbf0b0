"""sync_env_clock, register_env_triggers and modify_env_tool_access inside real tasks."""

from __future__ import annotations

import pytest
from agentenv_runtime import TaskError
from steps_taskkit import calls, clock, deploy, prompt, scripted, task

POST_AT_TEN = {
    "id": "standup",
    "kind": "time",
    "when": {"at": "2026-12-01T10:00:00Z"},
    "actions": [{"call_tool": {"tool": "post_message", "args": {"channel": "#general", "text": "Standup time"}}}],
}


def triggers(*definitions, step_id="triggers", env="world"):
    return {"id": step_id, "type": "register_env_triggers", "env": env, "triggers": list(definitions)}


# ---- sync_env_clock ---------------------------------------------------------------------------------
def test_clock_is_set_for_the_world_and_its_apps(runs, step):
    record = runs(
        task(
            deploy(),
            clock(timezone="Europe/Berlin"),
            scripted("agent", "world", [{"call": "post_message", "args": {"channel": "#general", "text": "hi"}}]),
            prompt("p", "agent"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "clock_world")["output"]
    assert output["now"] == "2026-12-01T09:00:00+00:00"
    assert output["local"] == "2026-12-01T10:00:00+01:00"
    assert output["mode"] == "frozen" and output["fired"] == 0
    [post] = calls(runs.trajectory(record), "post_message")
    assert post["result"]["time"].startswith("2026-12-01T09:00:00")  # the app reads the virtual clock
    assert post["virtual_time"] == "2026-12-01T09:00:00+00:00"


def test_time_trigger_fires_when_running_until(runs, step):
    record = runs(
        task(
            deploy(),
            clock(),
            triggers(POST_AT_TEN),
            clock(start=None, run_until="2026-12-01T12:00:00Z") | {"id": "run"},
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "triggers")["output"] == {"registered": ["standup"]}
    assert step(record, "run")["output"]["fired"] == 1
    assert step(record, "run")["output"]["now"] == "2026-12-01T12:00:00+00:00"
    [post] = calls(runs.trajectory(record), "post_message")
    assert post["trigger"] == "standup" and post["error"] is None
    assert post["virtual_time"] == "2026-12-01T10:00:00+00:00"


def test_triggers_registered_before_the_clock_is_set_still_fire(runs, step):
    repeating = {**POST_AT_TEN, "when": {"at": "2026-12-01T10:00:00Z", "every": 3600}}
    record = runs(task(deploy(), triggers(repeating), clock(advance_seconds=4 * 3600)))
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "clock_world")["output"]["fired"] == 4  # 10:00, 11:00, 12:00, 13:00
    assert step(record, "clock_world")["output"]["now"] == "2026-12-01T13:00:00+00:00"
    assert len(calls(runs.trajectory(record), "post_message")) == 4


def test_tool_call_trigger_reacts_to_the_agent(runs):
    echo = {
        "id": "echo",
        "kind": "tool_call",
        "when": {"tool": "add_reaction"},
        "actions": [
            {"call_tool": {"tool": "post_message", "args": {"channel": "#support", "text": "someone reacted"}}}
        ],
    }
    record = runs(
        task(
            deploy(),
            clock(),
            triggers(echo),
            scripted(
                "agent",
                "world",
                [
                    {"call": "post_message", "args": {"channel": "#general", "text": "hello"}, "save": "m"},
                    {"call": "add_reaction", "args": {"message_id": "{{ m.id }}", "emoji": "wave"}, "expect": "ok"},
                ],
            ),
            prompt("p", "agent"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    posts = calls(runs.trajectory(record), "post_message")
    assert [p["trigger"] for p in posts] == [None, "echo"]


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"start": "yesterday"}, "field `start`"),
        ({"timezone": "Mars/Olympus"}, "field `timezone`"),
        ({"mode": "warp"}, "field `mode`"),
        ({"rate": -1}, "field `rate`"),
        ({"run_until": "2026-11-01T00:00:00Z"}, "field `run_until`"),
        ({"env": "nosuchstep"}, "field `env`"),
        ({"advance_seconds": float("inf")}, "field `advance_seconds`: Input should be a finite number"),
        ({"advance_seconds": 1e300}, "field `advance_seconds`: 1e+300 s is longer than years 1 to 9999"),
        ({"start": "9999-12-31T23:00:00Z", "advance_seconds": 7200}, "past the end of year 9999"),
        ({"start": "0001-01-01T00:30:00+01:00"}, "field `start`: 0001-01-01T00:30:00+01:00 falls outside years 1"),
    ],
)
def test_clock_preflight_names_step_and_field(runs, fields, where):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(), clock() | fields))
    assert "step 'clock_world' (sync_env_clock)" in str(caught.value)
    assert where in str(caught.value)


# ---- register_env_triggers --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("definition", "where"),
    [
        (
            {"id": "late", "kind": "time", "when": {"at": "noonish"}, "actions": [{"call_tool": {"tool": "x"}}]},
            "field `triggers[0].when`: trigger 'late'",
        ),
        (
            {"id": "empty", "kind": "time", "when": {"at": "10:00"}, "actions": [{}]},
            "field `triggers[0]`: trigger 'empty'",
        ),
        (
            {"id": "odd", "kind": "tool_call", "when": {"tool": "x", "colour": 1}, "actions": []},
            "field `triggers[0].when`: trigger 'odd'",
        ),
        ({"kind": "time", "actions": []}, "field `triggers[0]`: trigger '?'"),
    ],
)
def test_trigger_preflight_names_the_trigger(runs, definition, where):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(), triggers(definition)))
    assert "step 'triggers' (register_env_triggers)" in str(caught.value)
    assert where in str(caught.value)


def test_duplicate_trigger_ids_fail_preflight(runs):
    with pytest.raises(TaskError, match=r"triggers\[1\]\.id.*'standup' is defined twice"):
        runs(task(deploy(), triggers(POST_AT_TEN, POST_AT_TEN)))


def test_bad_trigger_at_execute_names_it_and_registers_none(runs, step):
    """A trigger id an earlier step already registered: only the world can tell, so the step fails, and the
    triggers it had registered before that one are removed again."""
    extra = {**POST_AT_TEN, "id": "extra", "actions": [{"call_tool": {"tool": "post_message", "args": {}}}]}
    record = runs(
        task(
            deploy(),
            clock(),
            triggers(POST_AT_TEN),
            triggers(extra, POST_AT_TEN, step_id="again") | {"fail_task_on_error": False},
            clock(start=None, run_until="2026-12-01T12:00:00Z") | {"id": "run"},
        )
    )
    error = step(record, "again")["error"]
    assert "triggers[1]" in error and "trigger standup" in error and "already registered" in error
    assert step(record, "run")["output"]["fired"] == 1  # the standup of the first step; `extra` was rolled back
    assert [c["args"]["text"] for c in calls(runs.trajectory(record), "post_message")] == ["Standup time"]


def test_unknown_trigger_kinds_and_tools_are_refused_before_the_run(runs):
    odd = {"id": "odd", "kind": "lunar", "when": {}, "actions": [{"call_tool": {"tool": "list_chanels"}}]}
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(), triggers(odd)))
    lines = str(caught.value).splitlines()
    assert "step 'triggers' (register_env_triggers): field `triggers[0].kind`: no trigger kind 'lunar'" in lines[0]
    assert "field `triggers[0].actions[0].call_tool.tool`: no tool 'list_chanels'" in lines[1]


# ---- modify_env_tool_access -------------------------------------------------------------------------
def access(step_id="access", **fields):
    return {"id": step_id, "type": "modify_env_tool_access", "env": "world", **fields}


def test_disabling_a_tool_removes_it_from_the_role(runs, step):
    record = runs(
        task(
            deploy(roles={"agent": {"tools": ["list_channels", "post_message", "get_channel"]}}),
            clock(),
            access("before", role="agent", enable=["search_messages"]),
            access("after", role="agent", disable=["post_message"]),
            scripted(
                "bot",
                "world",
                [
                    {"call": "search_messages", "args": {"query": "TCK-9001"}, "expect": "ok"},
                    {"call": "post_message", "args": {"channel": "#general", "text": "hi"}},
                ],
                role="agent",
            ),
            prompt("p", "bot"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "before")["output"]["tools"] == [
        "get_channel",
        "list_channels",
        "post_message",
        "search_messages",
    ]
    assert step(record, "after")["output"]["tools"] == ["get_channel", "list_channels", "search_messages"]
    assert step(record, "bot")["output"]["tools"] == 3
    events = runs.trajectory(record)
    changes = [e for e in events if e["kind"] == "access"]
    assert [(c["role"], c["enable"], c["disable"], c["by"]) for c in changes] == [
        ("agent", ["search_messages"], [], "before"),
        ("agent", [], ["post_message"], "after"),
    ]
    [post] = calls(events, "post_message")
    assert post["error"]["code"] == "forbidden"


def test_a_change_for_a_role_the_world_does_not_define_is_refused(runs, step):
    """It made a new role with no tools but the enabled ones (a typo served 0 tools, and the reference would
    serve an unknown role every tool): now the step fails naming the role and the defined ones."""
    record = runs(task(deploy(), access(role="auditor", enable=["list_channels"])))
    error = str(step(record, "access")["error"])
    assert "field `role`: no role 'auditor' in this world (roles: " in error and "deploy_env `roles`" in error


def test_unknown_tool_is_refused_before_the_run(runs):
    with pytest.raises(
        TaskError, match="step 'access' \\(modify_env_tool_access\\): field `disable`: no tool 'post_mesage'"
    ):
        runs(task(deploy(), access(role="default", disable=["post_mesage"])))


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"role": "default"}, "field `enable`"),
        ({"enable": ["a"], "disable": ["a"]}, "field `disable`"),
        ({"role": "system", "enable": ["a"]}, "field `role`"),
        ({"enable": ["a"], "env": "nope"}, "field `env`"),
    ],
)
def test_access_preflight_names_step_and_field(runs, fields, where):
    with pytest.raises(TaskError) as caught:
        runs(task(deploy(), access(**fields)))
    assert "step 'access' (modify_env_tool_access)" in str(caught.value)
    assert where in str(caught.value)


def test_rate_zero_is_accepted_as_the_peers_frozen_clock() -> None:
    from agentenv_steps.rules import SyncEnvClockSettings

    assert SyncEnvClockSettings.model_validate({"env": "e", "rate": 0}).rate == 0


# ---- executors and await_fired ------------------------------------------------------------------------
ASK_MANAGER = {
    "id": "ask-manager",
    "kind": "tool_call",
    "when": {"tool": "post_message", "args": {"channel": "#support"}},
    "barrier": True,
    "actions": [{"nl": {"text": "Approve this: {{args.text}}"}}],
}
MANAGER_APPROVES = [{"call": "post_message", "args": {"channel": "#general", "text": "Approved: {{ prompt }}"}}]


def test_an_nl_action_goes_to_a_scripted_executor_agent_that_acts_as_its_role(runs, step):
    record = runs(
        task(
            deploy(roles={"manager": {"tools": ["post_message"]}, "default": {"tools": ["*"]}}),
            clock(),
            scripted("manager", "world", MANAGER_APPROVES, role="manager"),
            triggers(ASK_MANAGER) | {"executor_agent": "manager"},
            scripted("agent", "world", [{"call": "post_message", "args": {"channel": "#support", "text": "refund?"}}]),
            prompt("p", "agent"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "triggers")["output"] == {"registered": ["ask-manager"], "executors": ["executor"]}
    events = runs.trajectory(record)
    asked, approved = calls(events, "post_message")
    assert asked["role"] == "default" and approved["role"] == "manager"
    assert approved["args"]["text"] == "Approved: Approve this: refund?"
    [nl] = [e for e in events if e["kind"] == "nl"]
    assert nl["executor"] == "executor" and nl["trigger"] == "ask-manager" and "error" not in nl


def test_executor_hours_defer_the_instruction_and_the_barrier_holds_the_call_until_it_is_done(runs, step):
    hours = {"start": "09:00", "end": "17:00", "time_zone": "Europe/Berlin"}
    record = runs(
        task(
            deploy(),
            clock(start="2026-12-05T12:00:00Z"),  # a Saturday: the manager is back on Monday 08:00Z (09:00 CET)
            scripted("manager", "world", MANAGER_APPROVES),
            triggers(ASK_MANAGER) | {"executor_agent": "manager", "executor_hours": hours},
            scripted("agent", "world", [{"call": "post_message", "args": {"channel": "#support", "text": "x"}}]),
            prompt("p", "agent"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]
    asked, approved = calls(runs.trajectory(record), "post_message")
    assert asked["virtual_time"] == "2026-12-05T12:00:00+00:00"
    assert approved["virtual_time"] == "2026-12-07T08:00:00+00:00"  # held by the barrier until Monday's opening
    [fired] = [e for e in runs.trajectory(record) if e["kind"] == "trigger"]
    assert fired["status"] == "deferred" and fired["waits_until"] == "2026-12-07T08:00:00+00:00"


def test_an_executor_that_fails_marks_the_trigger_failed_and_the_call_goes_on(runs, step):
    broken = [  # the first call fails (no such channel), so the second's template has nothing to read
        {"call": "get_channel", "args": {"channel": "#nowhere"}, "save": "found"},
        {"call": "post_message", "args": {"channel": "#general", "text": "{{ found.name }}"}},
    ]
    record = runs(
        task(
            deploy(),
            clock(),
            scripted("manager", "world", broken),
            triggers(ASK_MANAGER) | {"executor_agent": "manager"},
            scripted("agent", "world", [{"call": "post_message", "args": {"channel": "#support", "text": "x"}}]),
            prompt("p", "agent"),
        )
    )
    assert record["status"] == "succeeded", record["steps"]  # the agent's call went through
    events = runs.trajectory(record)
    [asked] = calls(events, "post_message")
    assert asked["error"] is None
    [nl] = [e for e in events if e["kind"] == "nl"]
    assert nl["error"]["code"] == "executor_failed" and "not saved because their call failed" in nl["error"]["message"]


def test_await_fired_moves_virtual_time_until_the_triggers_are_done(runs, step):
    walk_in = {
        "id": "walk-in",
        "kind": "time",
        "when": {"at": "2026-12-01T09:00:00Z", "every": {"dist": "exponential", "mean": "2h"}, "count": 3},
        "actions": [{"call_tool": {"tool": "post_message", "args": {"channel": "#general", "text": "walk-in"}}}],
    }
    done = runs(task(deploy(), clock(), triggers(walk_in) | {"await_fired": ["walk-in"]}))
    assert done["status"] == "succeeded", done["steps"]
    output = step(done, "triggers")["output"]
    assert output["awaited"] == {"walk-in": "armed"}  # fired once; `count` = 3 keeps it armed
    assert output["now"] > "2026-12-01T09:00:00"

    later = {**walk_in, "when": {"at": "2026-12-03T09:00:00Z"}}
    late = runs(task(deploy(), clock(), triggers(later) | {"await_fired": "walk-in", "await_timeout_seconds": 3600}))
    error = step(late, "triggers")["error"]
    assert "field `await_fired`: 'walk-in' had not fired and finished within 3600 virtual seconds" in error
    assert "walk-in=armed" in error


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"executor_agent": "nobody"}, "executor_agent", "no step 'nobody'"),
        ({"executors": {"boss": "ghost"}}, "executors.boss", "no step 'ghost'"),
        ({"executor_hours": {"start": "9", "end": "17:00"}}, "executor_hours.start", "not a time of day"),
        ({"executor_hours": {"start": "09:00", "end": "17:00"}}, "executor_hours", "there is no executor"),
        ({"executor_agent": "agent", "executors": {"executor": "agent"}}, "executors", "give it once"),
        ({"triggers": []}, "triggers", "nothing to do"),
    ],
)
def test_preflight_of_executors(runs, fields, field, message):
    base = triggers(POST_AT_TEN) | fields
    with pytest.raises(TaskError) as err:
        runs(task(deploy(), scripted("agent", "world", []), base))
    assert f"field `{field}`" in str(err.value) and message in str(err.value), str(err.value)


def test_an_executor_of_another_world_is_refused(runs, step):
    record = runs(
        task(
            deploy(),
            deploy("other"),
            scripted("elsewhere", "other", MANAGER_APPROVES),
            triggers(ASK_MANAGER) | {"executor_agent": "elsewhere"},
        )
    )
    error = step(record, "triggers")["error"]
    assert "field `executor_agent`: agent 'elsewhere' acts in the world of step 'other', not this one" in error
