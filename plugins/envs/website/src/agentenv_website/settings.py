"""How a world declares its website: the one place the four forms are told apart.

A site is an in-process WSGI application that works on the world through its tools (`app`), a command that serves
HTTP on a port (`command`), a Docker image that does (`image`), or a site that already runs elsewhere (`url`).
"""

from __future__ import annotations

import shlex
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

FORMS = ("app", "command", "image", "url")


class WebsiteSettings(BaseModel):
    """Exactly one of `app`, `command`, `image`, `url`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    app: str | None = Field(
        None,
        description="A WSGI application `module:attribute`, served in this process under a path of its own per "
        "world; it reaches the world through `environ['agentenv.tools']` (e.g. agentenv_helpdesk.web:app).",
    )
    command: str | list[str] | None = Field(
        None,
        description="A command that serves HTTP: a command line or its argv. `{port}` in it (and $PORT) is a free "
        "loopback port it must listen on, unless `port` fixes one.",
    )
    image: str | None = Field(
        None, description="A Docker image that serves HTTP on `port` inside the container (published on loopback)."
    )
    url: str | None = Field(None, description="A site that runs elsewhere (http(s)://…): checked, never started.")
    args: list[str] = Field(default_factory=list, description="With `image`: arguments after the image name.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables of a started command/image.")
    port: int | None = Field(
        None, ge=1, le=65535, description="command: the port it listens on if it picks its own; image: the container "
        "port it serves on (default 80).",
    )  # fmt: skip
    health_path: str = Field("/", pattern=r"^/", description="GET here must answer below 400 for the site to be up.")
    start_timeout: float = Field(30.0, gt=0, le=600, description="Seconds a started site may take to become healthy.")
    role: str = Field(
        "system",
        min_length=1,
        description="The role an `app` calls the world's tools as (`system`: every tool; name a role of the world "
        "to have its RBAC apply). The trajectory records each call with it.",
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        given = [form for form in FORMS if getattr(self, form)]
        if len(given) != 1:
            got = f" (got {', '.join(given)})" if given else ""
            raise ValueError(f"give exactly one of `app`, `command`, `image` or `url`{got}")
        if self.app is not None and (":" not in self.app or not all(self.app.split(":", 1))):
            raise ValueError(f"app {self.app!r}: name the WSGI application as module:attribute")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url {self.url!r}: a site's URL starts with http:// or https://")
        if self.args and self.image is None:
            raise ValueError("`args` go with `image`; put a command's arguments in `command`")
        if self.env and self.command is None and self.image is None:
            raise ValueError("`env` is for a started site (`command` or `image`)")
        if self.port is not None and self.command is None and self.image is None:
            raise ValueError("`port` is for a started site (`command` or `image`)")
        return self

    @property
    def form(self) -> str:
        return next(form for form in FORMS if getattr(self, form))

    def argv(self, port: int) -> list[str]:
        """The command with `{port}` filled in."""
        command = self.command
        assert command is not None
        parts = shlex.split(command) if isinstance(command, str) else list(command)
        return [part.replace("{port}", str(port)) for part in parts]

    def describe(self) -> str:
        if self.command is not None:
            return self.command if isinstance(self.command, str) else shlex.join(self.command)
        return str(self.app or self.image or self.url)
