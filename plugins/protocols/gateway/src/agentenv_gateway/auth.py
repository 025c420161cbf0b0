"""Who is calling: bearer tokens → roles, role files, and the loopback rule.

A served world either runs without tokens (loopback only, every caller is role `default`) or with
`ROLE=TOKEN` pairs, where every request must carry `Authorization: Bearer TOKEN` and the token picks the
role whose tool set the caller sees. Tokens may be `env:NAME` references so they never sit in a shell
history or a file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from agentenv_runtime import DEFAULT_ROLE, is_loopback

CONTROL_ROLE = "control"
"""The role that may use the data plane (reset, load, clock, triggers, access, state) when tokens are on."""
ROLE_HEADER = "AgentEnv-Role"
"""The reference protocol's way for a trusted caller (a harness, a gateway in front) to act as a role."""


class AuthConfigError(ValueError):
    """A token or role file that cannot work; the message names the flag or file and field."""


def resolve_secret(value: str, *, where: str) -> str:
    """`env:NAME` → the variable's value; anything else is the literal token."""
    if value.startswith("env:"):
        name = value[4:]
        secret = os.environ.get(name)
        if not name or not secret:
            raise AuthConfigError(f"{where}: environment variable {name!r} is not set (or empty); export it first")
        return secret
    if value.startswith("secret:"):
        raise AuthConfigError(f"{where}: `secret:` references are not supported by the gateway; use env:NAME")
    if not value:
        raise AuthConfigError(f"{where}: the token is empty")
    return value


def parse_token_flags(flags: Iterable[str]) -> dict[str, str]:
    """`["support=env:SUPPORT_TOKEN", …]` → {role: token}."""
    tokens: dict[str, str] = {}
    for flag in flags:
        role, sep, raw = flag.partition("=")
        role = role.strip()
        if not sep or not role:
            raise AuthConfigError(f"--token {flag!r}: expected ROLE=TOKEN (or ROLE=env:NAME)")
        if role in tokens:
            raise AuthConfigError(f"--token {flag!r}: role {role!r} already has a token; give each role one")
        tokens[role] = resolve_secret(raw.strip(), where=f"--token {role}")
    return tokens


def load_role_file(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Read `[roles.NAME] tools = [...] deny = [...] token = "env:…"` → (RBAC roles, {role: token})."""
    try:
        document = tomllib.loads(path.read_text())
    except OSError as exc:
        raise AuthConfigError(f"{path}: cannot read role file ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise AuthConfigError(f"{path}: not valid TOML ({exc})") from exc
    table = document.get("roles")
    if not isinstance(table, dict) or not table:
        raise AuthConfigError(f'{path}: needs a [roles.NAME] table per role, e.g. [roles.support] tools = ["*"]')
    roles: dict[str, Any] = {}
    tokens: dict[str, str] = {}
    for role, spec in table.items():
        if not isinstance(spec, dict):
            raise AuthConfigError(f"{path}: roles.{role} must be a table with `tools`, `deny`, `token`")
        unknown = set(spec) - {"tools", "deny", "token"}
        if unknown:
            raise AuthConfigError(f"{path}: roles.{role}: unknown keys {sorted(unknown)} (allowed: tools, deny, token)")
        for key in ("tools", "deny"):
            value = spec.get(key, ["*"] if key == "tools" else [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise AuthConfigError(f"{path}: roles.{role}.{key} must be a list of tool names")
        roles[role] = {"tools": spec.get("tools", ["*"]), "deny": spec.get("deny", [])}
        if "token" in spec:
            if not isinstance(spec["token"], str):
                raise AuthConfigError(f"{path}: roles.{role}.token must be a string (e.g. env:SUPPORT_TOKEN)")
            tokens[role] = resolve_secret(spec["token"], where=f"{path}: roles.{role}.token")
    return roles, tokens


def invert_tokens(tokens: Mapping[str, str] | None) -> dict[str, str]:
    """{role: token} → {token: role}; one token cannot open two roles."""
    by_token: dict[str, str] = {}
    for role, token in (tokens or {}).items():
        if token in by_token:
            raise AuthConfigError(f"roles {by_token[token]!r} and {role!r} share a token; give each its own")
        by_token[token] = role
    return by_token


def check_token_roles(tokens: Mapping[str, str] | None, defined: Collection[str], control: Collection[str]) -> None:
    """Refuse a token for a role the world does not define (a control role needs no definition: it uses the data
    plane, not tools). Served, such a token would open a role with no tools, without a word."""
    undefined = sorted(set(tokens or {}) - set(defined) - set(control))
    if undefined:
        raise AuthConfigError(
            f"--token: role(s) {', '.join(undefined)} are not defined in this world (roles: "
            f"{', '.join(sorted(defined))}; control: {', '.join(sorted(control))}); define them in --role-file "
            f'([roles.NAME] tools = ["*"], deny = [...]) or give the token to one of those roles'
        )


def check_bind(host: str, tokens: Mapping[str, str] | None) -> None:
    """Refuse to expose an unauthenticated world beyond this machine."""
    if not tokens and not is_loopback(host):
        raise AuthConfigError(
            f"--host {host}: refusing to serve a world without tokens on a non-loopback address; "
            "add --token ROLE=TOKEN (or ROLE=env:NAME) or bind 127.0.0.1"
        )


ANONYMOUS = ""
"""`role_for` of a request without a token on a server with tokens: it may read the public card only."""


def role_for(authorization: str | None, by_token: Mapping[str, str]) -> str | None:
    """The role a token opens: `ANONYMOUS` without one (tokens on), None for an unknown or malformed token."""
    if not by_token:
        return DEFAULT_ROLE
    if not authorization:
        return ANONYMOUS
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return by_token.get(token.strip())


class RoleRefused(Exception):
    """A request that names a role it may not take; the message says which credential would allow it."""


def acting_role(
    token_role: str,
    named: str | None,
    *,
    auth: bool,
    control_roles: frozenset[str],
    known: Collection[str] | None = None,
) -> str:
    """The role a request acts as, given the role its token opened and the role it names (`AgentEnv-Role` or
    the reference gateway's per-call role field).

    A named role is honoured only from a trusted caller: one holding a control token, or any caller of a
    token-less server (which binds loopback only, so every caller is already this machine). An ordinary
    role token naming another role is refused, never quietly widened. `ANONYMOUS` (tokens are on and none
    was sent) may name no role: it reads the public card only. A named role outside `known` (the world's roles)
    is refused with the list, rather than served as a role with no tools.
    """
    named = (named or "").strip() or None
    if named is None or named == token_role:
        return token_role
    if not auth or token_role in control_roles:
        if known is not None and named not in known:
            raise RoleRefused(
                f"{ROLE_HEADER}: no role {named!r} in this world (roles: {', '.join(sorted(known))}); name one of them"
            )
        return named
    held = f"the {token_role!r} token" if token_role else "no token"
    raise RoleRefused(
        f"{ROLE_HEADER}: {named!r} is honoured only with a control token (the request holds {held}); "
        f"drop the header or send the control token"
    )
