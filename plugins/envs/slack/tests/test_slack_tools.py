"""Every tool of the slack env: what it returns, what it refuses, and that refusals change nothing."""

from __future__ import annotations

import pytest
from agentenv_slack.env import SlackEnv

SAM_POST = "1795512600.000100"  # #support: "Dana Kim's boots arrived damaged, ticket TCK-9001"
SAM_DETAILS = "1795512720.000100"  # first reply in that thread
CXLEADS_POST = "1795017600.000100"  # private #cx-leads, which U_SUPPORT is not in
BFCM_POST = "1764321240.000100"  # archived #bfcm-2025
BILLING_POST = "1794909600.000100"  # #billing
UNKNOWN_TS = "1700000000.000001"


def test_tool_catalogue_has_docs_for_every_parameter() -> None:
    specs = SlackEnv.tool_specs()
    assert len(specs) >= 10
    for spec in specs.values():
        assert spec.description, spec.name
        for name, prop in spec.input_schema["properties"].items():
            assert prop.get("description"), f"{spec.name}.{name} has no description"


# ---- users -------------------------------------------------------------------------------------------
def test_list_users_hides_deactivated_unless_asked(env, ok) -> None:
    ids = [u["id"] for u in ok(env, "list_users")]
    assert "U_SAM" in ids and "U_OLIVIA" not in ids
    everyone = [u["id"] for u in ok(env, "list_users", include_deactivated=True)]
    assert "U_OLIVIA" in everyone


def test_list_users_filters_by_title_and_email(env, ok) -> None:
    assert [u["id"] for u in ok(env, "list_users", query="billing")] == ["U_PRIYA"]
    assert [u["id"] for u in ok(env, "list_users", query="SAM@ACME")] == ["U_SAM"]
    assert ok(env, "list_users", query="nobody-like-this") == []


def test_get_user_by_id_email_and_handle(env, ok, refused) -> None:
    for ref in ("U_PRIYA", "priya@acme.example", "@priya", "Priya"):
        assert ok(env, "get_user", user=ref)["real_name"] == "Priya Patel"
    refused(env, "get_user", "not_found", "user", user="U_NOPE")
    refused(env, "get_user", "invalid_arguments", "user", user="")


# ---- channels ----------------------------------------------------------------------------------------
def test_list_channels_shows_public_and_own_private(env, ok) -> None:
    names = [c["name"] for c in ok(env, "list_channels")]
    assert names == ["billing", "general", "support", "warehouse"]
    with_archived = [c["name"] for c in ok(env, "list_channels", include_archived=True)]
    assert "bfcm-2025" in with_archived and "cx-leads" not in with_archived
    support = next(c for c in ok(env, "list_channels") if c["name"] == "support")
    assert support == {
        "id": "C_SUPPORT",
        "name": "support",
        "kind": "public",
        "topic": "Customer issues and escalations — link the ticket",
        "purpose": "Coordinating customer support",
        "archived": False,
        "member_count": 5,
        "is_member": True,
    }


def test_list_channels_refuses_unknown_argument(env, refused) -> None:
    refused(env, "list_channels", "invalid_arguments", "private", private=True)


def test_get_channel_lists_members(env, ok, refused) -> None:
    channel = ok(env, "get_channel", channel="#billing")
    assert channel["id"] == "C_BILLING"
    assert [m["id"] for m in channel["members"]] == ["U_LENA", "U_PRIYA", "U_SAM", "U_SUPPORT"]
    assert ok(env, "get_channel", channel="C_BILLING") == channel
    refused(env, "get_channel", "not_found", "channel", channel="#nope")
    refused(env, "get_channel", "not_member", "channel", channel="cx-leads")


def test_create_channel_public_and_private(env, ok) -> None:
    created = ok(env, "create_channel", name="#Refund-Queue", topic="Refunds to do", members=["sam", "U_PRIYA"])
    assert created["id"] == "C0007"  # six channels and a DM exist; numbering counts C-ids only
    assert created["name"] == "refund-queue" and created["kind"] == "public"
    assert created["created_by"] == "U_SUPPORT" and created["created_at"] == "2026-11-24T10:00:00Z"
    assert {m["id"] for m in created["members"]} == {"U_SUPPORT", "U_SAM", "U_PRIYA"}
    secret = ok(env, "create_channel", name="escalations", is_private=True)
    assert secret["kind"] == "private" and secret["id"] == "C0008"
    assert "escalations" in [c["name"] for c in ok(env, "list_channels")]


def test_create_channel_rules(env, refused) -> None:
    refused(env, "create_channel", "name_taken", "name", name="support")
    error = refused(env, "create_channel", "name_taken", "name", name="BFCM-2025")
    assert "archived" in error["message"]
    refused(env, "create_channel", "invalid_arguments", "name", name="has space")
    refused(env, "create_channel", "invalid_arguments", "name", name="x" * 81)
    refused(env, "create_channel", "invalid_arguments", "topic", name="ok", topic="t" * 251)
    refused(env, "create_channel", "not_found", "members.1", name="ok", members=["sam", "U_GHOST"])
    refused(env, "create_channel", "deactivated", "members.0", name="ok", members=["olivia"])


def test_join_and_leave_channel(env, ok, refused) -> None:
    joined = ok(env, "join_channel", channel="warehouse")
    assert joined["is_member"] and joined["already_member"] is False
    assert ok(env, "join_channel", channel="warehouse")["already_member"] is True
    left = ok(env, "leave_channel", channel="warehouse")
    assert left["is_member"] is False
    refused(env, "leave_channel", "not_member", "channel", channel="warehouse")
    refused(env, "join_channel", "not_member", "channel", channel="cx-leads")
    refused(env, "join_channel", "archived", "channel", channel="bfcm-2025")
    refused(env, "join_channel", "not_found", "channel", channel="C_MISSING")
    refused(env, "leave_channel", "not_a_channel", "channel", channel="D0001")


def test_invite_to_channel(env, ok, refused) -> None:
    invited = ok(env, "invite_to_channel", channel="billing", user="marcus@acme.example")
    assert invited["invited"] == "U_MARCUS" and invited["member_count"] == 5
    refused(env, "invite_to_channel", "already_member", "user", channel="billing", user="U_MARCUS")
    refused(env, "invite_to_channel", "not_member", "channel", channel="warehouse", user="U_PRIYA")
    refused(env, "invite_to_channel", "not_member", "channel", channel="cx-leads", user="U_SAM")
    refused(env, "invite_to_channel", "deactivated", "user", channel="billing", user="olivia")
    refused(env, "invite_to_channel", "not_found", "user", channel="billing", user="ghost")
    refused(env, "invite_to_channel", "not_a_channel", "channel", channel="D0001", user="U_PRIYA")


def test_archive_channel(env, ok, refused) -> None:
    archived = ok(env, "archive_channel", channel="billing")
    assert archived["archived"] is True
    assert "billing" not in [c["name"] for c in ok(env, "list_channels")]
    refused(env, "archive_channel", "archived", "channel", channel="billing")
    refused(env, "archive_channel", "not_member", "channel", channel="warehouse")
    refused(env, "post_message", "archived", "channel", channel="billing", text="too late")


# ---- messages ----------------------------------------------------------------------------------------
def test_post_message_top_level(env, ok) -> None:
    posted = ok(env, "post_message", channel="#support", text="  Picking up TCK-9001 now.  ")
    assert posted == {
        "id": "1795514400.000000",
        "channel": "C_SUPPORT",
        "channel_name": "support",
        "user": "U_SUPPORT",
        "user_name": "Support Bot",
        "text": "Picking up TCK-9001 now.",
        "time": "2026-11-24T10:00:00Z",
        "thread_id": None,
        "reply_count": 0,
        "latest_reply": None,
        "reactions": [],
    }
    latest = ok(env, "list_messages", channel="support", limit=1)["messages"]
    assert latest[0]["id"] == posted["id"]


def test_post_message_ids_stay_unique_on_a_frozen_clock(env, ok) -> None:
    first = ok(env, "post_message", channel="general", text="one")["id"]
    second = ok(env, "post_message", channel="general", text="two")["id"]
    assert (first, second) == ("1795514400.000000", "1795514400.000001")
    env.clock.advance(90)
    assert ok(env, "post_message", channel="general", text="three")["id"] == "1795514490.000000"


def test_post_message_in_a_thread(env, ok) -> None:
    reply = ok(env, "post_message", channel="support", text="On it.", thread_id=SAM_POST)
    assert reply["thread_id"] == SAM_POST
    # a reply's id stands for its thread
    again = ok(env, "post_message", channel="support", text="Refund queued.", thread_id=SAM_DETAILS)
    assert again["thread_id"] == SAM_POST
    thread = ok(env, "get_thread", message_id=SAM_POST)
    assert [r["text"] for r in thread["replies"]][-2:] == ["On it.", "Refund queued."]
    assert thread["parent"]["reply_count"] == 4
    # thread replies stay out of the channel history
    history = ok(env, "list_messages", channel="support", limit=200)["messages"]
    assert reply["id"] not in [m["id"] for m in history]


def test_post_message_in_a_public_channel_without_joining(env, ok) -> None:
    posted = ok(env, "post_message", channel="warehouse", text="Any news on the split soles?")
    assert posted["channel"] == "C_WAREHOUSE"
    assert ok(env, "get_channel", channel="warehouse")["is_member"] is False


def test_post_message_rules(env, refused) -> None:
    refused(env, "post_message", "archived", "channel", channel="bfcm-2025", text="hello")
    refused(env, "post_message", "not_member", "channel", channel="#cx-leads", text="hello")
    refused(env, "post_message", "not_found", "channel", channel="#nope", text="hello")
    refused(env, "post_message", "empty_text", "text", channel="support", text=" \n\t ")
    refused(env, "post_message", "text_too_long", "text", channel="support", text="x" * 40_001)
    refused(env, "post_message", "not_found", "thread_id", channel="support", text="hi", thread_id=UNKNOWN_TS)
    refused(env, "post_message", "wrong_channel", "thread_id", channel="billing", text="hi", thread_id=SAM_POST)
    refused(env, "post_message", "invalid_arguments", "thread_id", channel="support", text="hi", thread_id="abc")
    refused(env, "post_message", "invalid_arguments", "text", channel="support")
    refused(env, "post_message", "invalid_arguments", "channel", text="hi")


def test_post_message_accepts_exactly_the_limit(env, ok) -> None:
    assert len(ok(env, "post_message", channel="support", text="y" * 40_000)["text"]) == 40_000


def test_list_messages_pages_back(env, ok, refused) -> None:
    first = ok(env, "list_messages", channel="support", limit=2)
    assert [m["text"][:20] for m in first["messages"]] == ["Heads up: the carrie", "Dana Kim's boots arr"]
    assert first["has_more"] is True and first["next_before"] == first["messages"][0]["id"]
    assert first["channel"]["id"] == "C_SUPPORT"
    assert first["messages"][1]["id"] == SAM_POST and first["messages"][1]["reply_count"] == 2
    assert first["messages"][1]["reactions"] == [{"emoji": "eyes", "count": 1, "users": ["U_LENA"]}]
    rest = ok(env, "list_messages", channel="support", limit=200, before=first["next_before"])
    assert rest["has_more"] is False and rest["next_before"] is None
    assert len(rest["messages"]) == 5
    assert all(m["id"] < first["next_before"] for m in rest["messages"])
    archived = ok(env, "list_messages", channel="bfcm-2025")
    assert len(archived["messages"]) == 3  # archived channels stay readable
    refused(env, "list_messages", "not_member", "channel", channel="cx-leads")
    refused(env, "list_messages", "invalid_arguments", "limit", channel="support", limit=0)
    refused(env, "list_messages", "invalid_arguments", "limit", channel="support", limit=201)
    refused(env, "list_messages", "invalid_arguments", "before", channel="support", before="yesterday")


def test_get_thread(env, ok, refused) -> None:
    thread = ok(env, "get_thread", message_id=SAM_DETAILS)
    assert thread["channel"] == "C_SUPPORT"
    assert thread["parent"]["id"] == SAM_POST
    assert [r["user"] for r in thread["replies"]] == ["U_SAM", "U_MARCUS"]
    assert "ORD-5001" in thread["replies"][0]["text"]
    lone = ok(env, "get_thread", message_id=BILLING_POST)
    assert lone["replies"] == []
    refused(env, "get_thread", "not_found", "message_id", message_id=UNKNOWN_TS)
    refused(env, "get_thread", "not_member", "message_id", message_id=CXLEADS_POST)
    refused(env, "get_thread", "invalid_arguments", "message_id", message_id="1795512600")


def test_add_and_remove_reaction(env, ok, refused) -> None:
    reacted = ok(env, "add_reaction", message_id=SAM_POST, emoji=":white_check_mark:")
    assert {"emoji": "white_check_mark", "count": 1, "users": ["U_SUPPORT"]} in reacted["reactions"]
    both = ok(env, "add_reaction", message_id=SAM_POST, emoji="eyes")
    assert {"emoji": "eyes", "count": 2, "users": ["U_LENA", "U_SUPPORT"]} in both["reactions"]
    refused(env, "add_reaction", "already_reacted", "emoji", message_id=SAM_POST, emoji="EYES")
    removed = ok(env, "remove_reaction", message_id=SAM_POST, emoji="eyes")
    assert {"emoji": "eyes", "count": 1, "users": ["U_LENA"]} in removed["reactions"]
    refused(env, "remove_reaction", "no_reaction", "emoji", message_id=SAM_POST, emoji="eyes")
    refused(env, "add_reaction", "not_found", "message_id", message_id=UNKNOWN_TS, emoji="eyes")
    refused(env, "add_reaction", "not_member", "message_id", message_id=CXLEADS_POST, emoji="eyes")
    refused(env, "add_reaction", "archived", "message_id", message_id=BFCM_POST, emoji="eyes")
    refused(env, "add_reaction", "invalid_arguments", "emoji", message_id=SAM_POST, emoji="two words")
    refused(env, "remove_reaction", "not_found", "message_id", message_id=UNKNOWN_TS, emoji="eyes")


# ---- direct messages ---------------------------------------------------------------------------------
def test_send_dm_opens_a_conversation_once(env, ok) -> None:
    first = ok(env, "send_dm", user="priya@acme.example", text="Quick billing question")
    assert first["channel"] == "D0002" and first["channel_name"] is None
    second = ok(env, "send_dm", user="U_PRIYA", text="About PAY-7001")
    assert second["channel"] == "D0002"
    existing = ok(env, "send_dm", user="sam", text="Taking TCK-9001")
    assert existing["channel"] == "D0001"


def test_send_dm_rules(env, refused) -> None:
    refused(env, "send_dm", "self_dm", "user", user="U_SUPPORT", text="hi me")
    refused(env, "send_dm", "not_found", "user", user="dana.kim@example.com", text="hi")
    refused(env, "send_dm", "deactivated", "user", user="U_OLIVIA", text="hi")
    refused(env, "send_dm", "empty_text", "text", user="U_SAM", text="   ")
    refused(env, "send_dm", "text_too_long", "text", user="U_SAM", text="z" * 40_001)
    refused(env, "send_dm", "invalid_arguments", "text", user="U_SAM", text=None)


def test_list_dms_newest_first(env, ok) -> None:
    assert [d["user"]["id"] for d in ok(env, "list_dms")] == ["U_SAM"]
    env.clock.advance(60)
    ok(env, "send_dm", user="U_PRIYA", text="Hello Priya")
    dms = ok(env, "list_dms")
    assert [d["user"]["id"] for d in dms] == ["U_PRIYA", "U_SAM"]
    assert dms[0]["message_count"] == 1 and dms[0]["last_message"]["text"] == "Hello Priya"


def test_read_dm(env, ok, refused) -> None:
    with_sam = ok(env, "read_dm", user="sam@acme.example")
    assert with_sam["channel"] == "D0001"
    assert [m["user"] for m in with_sam["messages"]] == ["U_SAM", "U_SUPPORT"]
    paged = ok(env, "read_dm", user="sam", limit=1)
    assert paged["has_more"] is True and paged["messages"][0]["user"] == "U_SUPPORT"
    nothing = ok(env, "read_dm", user="U_LENA")
    assert nothing["channel"] is None and nothing["messages"] == []
    refused(env, "read_dm", "not_found", "user", user="U_GHOST")


def test_other_peoples_dms_are_invisible(make_env, ok, refused) -> None:
    as_lena = make_env(user_id="U_LENA")
    refused(as_lena, "list_messages", "not_found", "channel", channel="D0001")
    refused(as_lena, "get_thread", "not_found", "message_id", message_id="1795023600.000100")
    assert ok(as_lena, "search_messages", query="sale sync")["total"] == 0


# ---- search ------------------------------------------------------------------------------------------
def test_search_messages_finds_the_story(env, ok) -> None:
    found = ok(env, "search_messages", query="TCK-9001")
    assert [m["id"] for m in found["matches"]] == [SAM_POST]
    assert found["total"] == 1
    assert ok(env, "search_messages", query="boots damaged")["matches"][0]["id"] == SAM_POST
    # prefix matching: "refund" finds "refunds", and case does not matter
    assert ok(env, "search_messages", query="REFUND", channel="billing")["total"] >= 2


def test_search_messages_filters(env, ok, refused) -> None:
    by_marcus = ok(env, "search_messages", query="boot", from_user="marcus@acme.example")
    assert by_marcus["total"] >= 1 and {m["user"] for m in by_marcus["matches"]} == {"U_MARCUS"}
    in_general = ok(env, "search_messages", query="month-end", channel="#general")
    assert {m["channel"] for m in in_general["matches"]} == {"C_GENERAL"}
    phrase = ok(env, "search_messages", query='"split sole"')
    assert phrase["total"] == 2
    assert ok(env, "search_messages", query="split", limit=1)["total"] == 2
    assert len(ok(env, "search_messages", query="split", limit=1)["matches"]) == 1
    # private channels one is not in stay out of results
    assert ok(env, "search_messages", query="staffing")["total"] == 0
    refused(env, "search_messages", "not_member", "channel", query="staffing", channel="cx-leads")
    refused(env, "search_messages", "not_found", "from_user", query="boot", from_user="ghost")
    refused(env, "search_messages", "empty_query", "query", query="?! --")
    refused(env, "search_messages", "invalid_arguments", "query", query="")
    refused(env, "search_messages", "invalid_arguments", "limit", query="boot", limit=101)


def test_search_sees_new_messages(env, ok) -> None:
    ok(env, "post_message", channel="general", text="Zebra-striped socks restocked")
    assert ok(env, "search_messages", query="zebra")["total"] == 1


# ---- acting user -------------------------------------------------------------------------------------
def test_tools_act_as_the_configured_user(make_env, ok) -> None:
    as_priya = make_env(user_id="U_PRIYA")
    assert ok(as_priya, "post_message", channel="cx-leads", text="Budget is approved")["user"] == "U_PRIYA"
    assert "cx-leads" in [c["name"] for c in ok(as_priya, "list_channels")]


def test_unknown_acting_user_is_a_clear_error(make_env, refused) -> None:
    ghost = make_env(user_id="U_GHOST")
    error = refused(ghost, "post_message", "not_found", "user_id", channel="general", text="hi")
    assert "settings.user_id" in error["message"]


def test_settings_refuse_unknown_keys() -> None:
    with pytest.raises(ValueError, match="usr_id"):
        SlackEnv({"usr_id": "U_SAM"})


@pytest.mark.parametrize("query", ['refund"s', '"unbalanced quote', "AND OR NOT", "col:umn", "boot*", "NEAR(a b)"])
def test_search_treats_operators_and_quotes_as_text(env, ok, query) -> None:
    found = ok(env, "search_messages", query=query)
    assert found["query"] == query and isinstance(found["total"], int)


def test_search_prefix_matching_is_by_word_start(env, ok) -> None:
    assert ok(env, "search_messages", query="restoc")["total"] == 2  # "restock", twice
    assert ok(env, "search_messages", query="estock")["total"] == 0  # not mid-word
