"""The phone env: the conformance kit, semantic tools with validation, the screen, and replies by SMS."""

from __future__ import annotations

from typing import Any

import pytest
from agentenv_mobile.env import PhoneEnv
from agentenv_runtime import World
from agentenv_testing.envs import EnvConformance


class TestPhoneConformance(EnvConformance):
    env_class = PhoneEnv


def phone(artifact: str = "alex") -> PhoneEnv:
    env = PhoneEnv()
    env.load(env.find_artifact(artifact))
    return env


def ok(env: PhoneEnv, tool: str, **args: Any) -> Any:
    result, error = env.call(tool, args)
    assert error is None, error
    return result


def refused(env: PhoneEnv, tool: str, **args: Any) -> dict[str, Any]:
    before = env.export()
    result, error = env.call(tool, args)
    assert result is None and error is not None, f"{tool} accepted {args}"
    assert env.export() == before, "a refused call changed the phone"
    return error


def test_at_least_twelve_tools_semantic_and_screen_level() -> None:
    tools = set(PhoneEnv.tool_specs())
    assert len(tools) >= 12
    assert {"send_sms", "create_event", "read_screen", "tap", "type_text", "go_home", "open_app"} <= tools


def test_two_phones_with_different_owners() -> None:
    assert sorted(PhoneEnv.artifact_paths()) == ["alex", "jordan"]
    owners = {name: phone(name).query("SELECT name, number FROM owner")[0]["name"] for name in ("alex", "jordan")}
    assert owners == {"alex": "Alex Morgan", "jordan": "Jordan Lee"}


def test_texts_go_to_contacts_by_name_or_number_and_bad_recipients_are_refused() -> None:
    env = phone()
    sent = ok(env, "send_sms", to="sam rivera", body="On my way")
    assert (sent["to"], sent["name"]) == ("+15550101", "Sam Rivera")
    assert ok(env, "send_sms", to="+15550777", body="Hi")["name"] is None
    assert refused(env, "send_sms", to="Nobody", body="Hi")["field"] == "to"
    assert refused(env, "send_sms", to="S", body="Hi")["code"] == "ambiguous"  # Sam Rivera, Priya Shah, …
    assert refused(env, "send_sms", to="Mom", body="")["code"] == "invalid_arguments"
    long = PhoneEnv({"max_sms_length": 5})
    long.load(long.find_artifact("alex"))
    assert refused(long, "send_sms", to="Mom", body="too long")["field"] == "body"
    thread = ok(env, "read_thread", contact="Sam Rivera")
    assert [m["body"] for m in thread["messages"]][-1] == "On my way"


def test_calendar_tools_validate_times_and_ids() -> None:
    env = phone()
    made = ok(env, "create_event", title="Gym", start="2026-06-03T07:00:00+02:00", end="2026-06-03T08:00:00+02:00")
    assert (made["start"], made["end"]) == ("2026-06-03T05:00:00Z", "2026-06-03T06:00:00Z")
    assert (
        refused(env, "create_event", title="Gym", start="2026-06-03T08:00:00Z", end="2026-06-03T07:00:00Z")["field"]
        == "end"
    )
    assert (
        refused(env, "move_event", event_id=99, start="2026-06-03T08:00:00Z", end="2026-06-03T09:00:00Z")["code"]
        == "not_found"
    )
    assert refused(env, "create_event", title="Gym", start="tomorrow", end="later")["code"] == "invalid_arguments"
    assert [e["title"] for e in ok(env, "list_events", day="2026-06-02")] == [
        "Dentist: cleaning with Dr. Patel",
        "Lunch with Sam",
    ]


def test_apps_install_from_the_store_and_system_apps_stay() -> None:
    env = phone()
    ok(env, "install_app", app_id="maps")
    assert "maps" in {a["app_id"] for a in ok(env, "list_apps")["installed"]}
    assert refused(env, "install_app", app_id="maps")["code"] == "already_installed"
    assert refused(env, "uninstall_app", app_id="messages")["code"] == "system_app"
    assert refused(env, "uninstall_app", app_id="Not An Id")["code"] == "invalid_arguments"
    ok(env, "uninstall_app", app_id="snake")
    assert refused(env, "open_app", app_id="snake")["code"] == "not_installed"


def test_the_screen_shows_what_the_state_holds_and_taps_act_on_it() -> None:
    env = phone("jordan")
    home = ok(env, "read_screen")
    assert home["view"] == "home" and "app:snake" in {e["id"] for e in home["elements"]}
    error = refused(env, "tap", element_id="toggle:wifi")
    assert error["code"] == "not_on_screen" and "app:settings" in error["message"]
    ok(env, "tap", element_id="app:settings")
    screen = ok(env, "tap", element_id="toggle:do_not_disturb")["screen"]
    assert {e["id"]: e.get("value") for e in screen["elements"]}["toggle:do_not_disturb"] == "on"
    assert screen["status_bar"]["do_not_disturb"] == "on"
    assert ok(env, "go_back")["view"] == "home"
    ok(env, "open_app", app_id="store")
    ok(env, "tap", element_id="uninstall:snake")
    assert env.query("SELECT COUNT(*) AS n FROM apps WHERE app_id = 'snake'") == [{"n": 0}]


def test_composing_and_sending_a_text_on_the_screen() -> None:
    env = phone()
    ok(env, "open_app", app_id="messages")
    ok(env, "tap", element_id="thread:+15550101")
    assert refused(env, "type_text", text="hello")["code"] == "no_focus"
    ok(env, "tap", element_id="field:compose")
    ok(env, "type_text", text="See you ")
    ok(env, "type_text", text="at 12:30")
    sent = ok(env, "tap", element_id="button:send")["sent"]
    assert (sent["to"], sent["body"]) == ("+15550101", "See you at 12:30")
    bubbles = [e for e in ok(env, "read_screen")["elements"] if e["type"] == "bubble_out"]
    assert bubbles[-1]["label"] == "See you at 12:30"


def test_editing_an_event_on_the_screen() -> None:
    env = phone()
    ok(env, "open_app", app_id="calendar")
    ok(env, "tap", element_id="event:2")
    for field, value in (("start", "2026-06-04T15:00:00Z"), ("end", "2026-06-04T16:00:00Z")):
        ok(env, "tap", element_id=f"field:{field}")
        ok(env, "type_text", text=value)
    saved = ok(env, "tap", element_id="button:save")["saved"]
    assert (saved["start"], saved["end"]) == ("2026-06-04T15:00:00Z", "2026-06-04T16:00:00Z")
    ok(env, "tap", element_id="field:start")
    ok(env, "type_text", text="someday")
    assert refused(env, "tap", element_id="button:save")["field"] == "element_id"


@pytest.mark.parametrize("how", ["semantic", "screen"])
def test_a_persona_answers_a_text_and_do_not_disturb_silences_the_notification(how: str) -> None:
    world = World([phone()])
    world.add_trigger(
        {
            "id": "sam",
            "kind": "persona",
            "when": {"persona": "Sam Rivera", "match": "dentist"},
            "actions": [{"reply": {"text": "Got it!"}}],
        }
    )
    assert world.call("set_do_not_disturb", {"on": True}).ok
    if how == "semantic":
        assert world.call("send_sms", {"to": "+15550101", "body": "Dentist moved to Thursday"}).ok
    else:
        for tool, args in (
            ("open_app", {"app_id": "contacts"}),
            ("tap", {"element_id": "contact:1"}),
            ("tap", {"element_id": "field:compose"}),
            ("type_text", {"text": "Dentist moved to Thursday"}),
            ("tap", {"element_id": "button:send"}),
        ):
            assert world.call(tool, args).ok, (tool, args)
    thread = world.call("read_thread", {"contact": "Sam Rivera"}).result
    assert thread["messages"][-1]["direction"] == "in" and thread["messages"][-1]["body"] == "Got it!"
    [note] = world.query("phone", "SELECT title, silenced FROM notifications WHERE body = 'Got it!'")
    assert note == {"title": "Sam Rivera", "silenced": 1}


def test_composed_with_slack_only_shared_names_are_qualified() -> None:
    from agentenv_slack.env import SlackEnv

    world = World([phone(), SlackEnv()])
    names = set(world.tool_names())
    assert {"phone_search_messages", "slack_search_messages", "send_sms", "post_message"} <= names
    assert "search_messages" not in names
