"""Tokens, role files and the loopback rule."""

from __future__ import annotations

import pytest
from agentenv_gateway.auth import (
    ANONYMOUS,
    AuthConfigError,
    check_bind,
    invert_tokens,
    load_role_file,
    parse_token_flags,
    role_for,
)
from agentenv_runtime import host_is_local


def test_token_flags_and_env_references(monkeypatch):
    monkeypatch.setenv("GW_TOKEN", "from-env")
    assert parse_token_flags(["support=env:GW_TOKEN", "billing_lead=literal"]) == {
        "support": "from-env",
        "billing_lead": "literal",
    }
    with pytest.raises(AuthConfigError, match="GW_MISSING"):
        parse_token_flags(["support=env:GW_MISSING"])
    with pytest.raises(AuthConfigError, match="already has a token"):
        parse_token_flags(["a=1", "a=2"])
    with pytest.raises(AuthConfigError, match="secret:"):
        parse_token_flags(["a=secret:KEY"])
    with pytest.raises(AuthConfigError, match="share a token"):
        invert_tokens({"a": "same", "b": "same"})


def test_role_file(tmp_path, monkeypatch):
    monkeypatch.setenv("GW_SUPPORT", "s")
    path = tmp_path / "roles.toml"
    path.write_text(
        '[roles.support]\ndeny = ["issue_refund"]\ntoken = "env:GW_SUPPORT"\n[roles.viewer]\ntools = ["get_ticket"]\n'
    )
    roles, tokens = load_role_file(path)
    assert roles == {
        "support": {"tools": ["*"], "deny": ["issue_refund"]},
        "viewer": {"tools": ["get_ticket"], "deny": []},
    }
    assert tokens == {"support": "s"}
    for text, message in [
        ("not toml [", "not valid TOML"),
        ("x = 1", "needs a [roles.NAME] table"),
        ('[roles.a]\ntools = "all"', "roles.a.tools must be a list"),
        ("[roles.a]\nextra = 1", "unknown keys ['extra']"),
    ]:
        path.write_text(text)
        with pytest.raises(AuthConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
            load_role_file(path)
    with pytest.raises(AuthConfigError, match="cannot read"):
        load_role_file(tmp_path / "missing.toml")


def test_bind_and_host_rules():
    check_bind("127.0.0.1", None)
    check_bind("::1", None)
    check_bind("0.0.0.0", {"support": "t"})
    with pytest.raises(AuthConfigError, match="refusing"):
        check_bind("0.0.0.0", None)
    assert host_is_local("127.0.0.1:8000") and host_is_local("localhost") and host_is_local("[::1]:80")
    assert not host_is_local("evil.example:80") and not host_is_local("")
    assert host_is_local("LOCALHOST:8000") and host_is_local("Localhost.")  # host names are case-insensitive


def test_role_for():
    by_token = {"t1": "support"}
    assert role_for(None, {}) == "default"
    assert role_for("Bearer t1", by_token) == "support"
    assert role_for("bearer t1", by_token) == "support"
    assert role_for("Bearer nope", by_token) is None
    assert role_for("Basic t1", by_token) is None
    assert role_for(None, by_token) == ANONYMOUS  # may read the public card only


def test_acting_role_honours_a_named_role_only_from_trusted_callers():
    from agentenv_gateway.auth import RoleRefused, acting_role

    control = frozenset({"control"})
    assert acting_role("support", None, auth=True, control_roles=control) == "support"
    assert acting_role("support", " support ", auth=True, control_roles=control) == "support"
    assert acting_role("control", "billing_lead", auth=True, control_roles=control) == "billing_lead"
    assert acting_role("default", "support", auth=False, control_roles=control) == "support"  # token-less, loopback
    with pytest.raises(RoleRefused, match=r"honoured only with a control token .*'support' token"):
        acting_role("support", "billing_lead", auth=True, control_roles=control)
    with pytest.raises(RoleRefused, match="holds no token"):
        acting_role(ANONYMOUS, "support", auth=True, control_roles=control)


def test_a_named_role_the_world_lacks_is_refused_with_the_list():
    from agentenv_gateway.auth import RoleRefused, acting_role

    control = frozenset({"control"})
    known = {"default", "support"}
    assert acting_role("control", "support", auth=True, control_roles=control, known=known) == "support"
    with pytest.raises(RoleRefused, match=r"no role 'nobody' in this world \(roles: default, support\)"):
        acting_role("control", "nobody", auth=True, control_roles=control, known=known)
    with pytest.raises(RoleRefused, match="no role 'nobody'"):
        acting_role("default", "nobody", auth=False, control_roles=control, known=known)


def test_a_token_for_a_role_the_world_does_not_define_is_refused_when_the_app_is_built():
    """Served, it opened a role with no tools (the reference would serve it every tool): refused at build time."""
    from agentenv_gateway.app import build_app
    from agentenv_runtime import build_world

    world = build_world("helpdesk", roles={"support": {"deny": ["issue_refund"]}})
    with pytest.raises(AuthConfigError) as refused:
        build_app(world, tokens={"suport": "tok-s", "control": "tok-c"})
    message = str(refused.value)
    assert "role(s) suport are not defined in this world (roles: default, support; control: control)" in message
    build_app(world, tokens={"support": "tok-s", "control": "tok-c"}).close()  # defined and control roles: fine


def test_a_mid_run_change_for_an_unknown_role_is_refused(served, tokens):
    """`access/set` and the reference's `/tools/disable` made a new role with no tools; now a 4xx naming it."""
    import httpx

    auth = {"authorization": f"Bearer {tokens['control']}"}
    message = {"jsonrpc": "2.0", "id": 1, "method": "access/set", "params": {"role": "nobody", "disable": []}}
    error = httpx.post(served.url + "/agentenv", json=message, headers=auth).json()["error"]
    assert error["data"]["field"] == "role" and "no role 'nobody' in this world (roles: " in error["message"]
    reply = httpx.post(served.url + "/tools/disable", json={"role": "nobody", "tools": ["get_ticket"]}, headers=auth)
    assert 400 <= reply.status_code < 500 and "no role 'nobody'" in reply.text
    assert "nobody" not in served.world.rbac.roles
