"""Settings every harness kind takes: the model endpoint, the tools it may use, where it runs, its limits."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

HarnessTool = Literal["mcp", "shell", "edit", "web"]
ModelApi = Literal["openai-chat", "openai-responses", "anthropic"]
HarnessSandbox = Literal["process", "docker"]
HOST_TOOLS = ("shell", "edit", "web")
"""The harness's own tools: they act on the machine the harness runs on, not through the world."""


def _world_tools_only() -> list[HarnessTool]:
    return ["mcp"]


class HarnessSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: ClassVar[str] = "<kind>"
    """The agent kind these settings are for (its `[agents.<kind>]` table is named in errors)."""

    base_url: str | None = None
    """The model endpoint (`[model] base_url`, `[agents.<kind>] base_url` or `--model-url`)."""
    api_key: str | None = Field(default=None, repr=False)
    """The key, already resolved; none = the kind's usual environment variable (ANTHROPIC_API_KEY, …)."""
    model: str | None = None
    api: ModelApi | None = None
    """The endpoint's wire format (`[model] api`); a harness refuses one it does not speak."""
    system_prompt: str | None = None
    tools: list[HarnessTool] = Field(default_factory=_world_tools_only)
    """`mcp` = the world's tools; `shell`, `edit`, `web` = the harness's own (off unless listed; a sandbox only)."""
    sandbox: HarnessSandbox = "process"
    """Where the CLI runs: `process` = on this machine, in a private folder (the world's tools only); `docker` =
    in a container of its own on an internal network that reaches only the world and the model endpoint. Also
    from `--sandbox` or `[agents.<kind>] sandbox` (`inline` means `process`: the CLI is a process either way)."""
    max_turns: int = Field(default=20, gt=0)
    """Model turns per prompt: the CLI's own limit (Claude Code) or counted in its event stream (Codex)."""
    timeout: float = Field(default=600, gt=0)
    """Wall-clock seconds per prompt; then the whole process tree (or container) is killed and the step fails."""
    binary: str | None = None
    """Path of the harness binary; none = the one its PyPI package installed (copied into the Docker image too)."""
    keep_workdir: bool = False
    """Keep the harness's private folder (home, config, transcripts) after the agent closes."""

    @field_validator("sandbox", mode="before")
    @classmethod
    def _inline_is_process(cls, value: Any) -> Any:
        return "process" if value == "inline" else value

    @model_validator(mode="after")
    def _own_tools_only_in_a_sandbox(self) -> HarnessSettings:
        wanted = [tool for tool in self.tools if tool in HOST_TOOLS]
        if wanted and self.sandbox != "docker":
            raise ValueError(
                f"tools {wanted}: the harness's own tools act on the files of the machine it runs on, so they run "
                f'only inside a sandbox; set sandbox = "docker" (in the step\'s settings, [agents.{self.kind}] '
                "sandbox, or --sandbox docker), or leave them out"
            )
        return self
