"""Settings of the `e2b` provider: `[plugins.agentenv-e2b]` in `.agentenv/config.toml`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DIST = "agentenv-e2b"
SETTINGS_TABLE = f"[plugins.{DIST}]"

MANAGED = "agentenv.managed"
"""Metadata key on every sandbox this plugin creates; `list` only ever finds sandboxes carrying it."""


class E2BSettings(BaseModel):
    """How the provider reaches E2B and what it creates sandboxes from."""

    model_config = ConfigDict(extra="forbid")

    api_key: str = Field(
        "env:E2B_API_KEY",
        description="E2B API key, best as a reference (`env:NAME`); a literal works but shows in config files.",
    )
    template: str = Field("base", description="E2B template used when a spec names no `image`.")
    domain: str | None = Field(None, description="E2B domain; None = E2B_DOMAIN, else the SDK's default (e2b.app).")
    api_url: str | None = Field(
        None, description="Control-plane URL (self-hosted E2B or a local stand-in); None = the SDK's default."
    )
    sandbox_url: str | None = Field(
        None, description="URL every envd request goes to (self-hosted E2B or a stand-in); None = the SDK's default."
    )
    url_scheme: Literal["https", "http"] = Field(
        "https", description="Scheme of `url(port)`; E2B serves ports over https, a self-hosted edge may be http."
    )
    default_ttl_seconds: int | None = Field(
        None, gt=0, description="Sandbox timeout when a spec sets no ttl_seconds; None = E2B's default (300 s)."
    )
    workdir: str | None = Field(
        None, description="Working folder of commands and relative file paths; None = the sandbox user's home."
    )
    user: str | None = Field(None, description="User commands and file operations run as; None = the template's.")
    request_timeout: float | None = Field(None, gt=0, description="Seconds per API request; None = SDK default.")

    @classmethod
    def load(cls, given: BaseModel | dict[str, Any] | None = None) -> E2BSettings:
        """`given`, else the `[plugins.agentenv-e2b]` table of the config file (defaults when none)."""
        if isinstance(given, E2BSettings):
            return given
        if isinstance(given, BaseModel):
            given = given.model_dump()
        if given is None:
            from agentenv.config import load_config

            given = load_config().plugin_settings(DIST)
        return cls.model_validate(given)
