"""`tau2-gold`: the reference agent of tau2-retail, which replays its task's gold actions.

It calls every gold action of the task in order (as τ²'s own grader replays them) and answers with the task's
`communicate_info` strings, so it earns 1.0 wherever τ²'s grade can be earned without a judge; any other
result points at a difference between our tools or grader and τ²'s.
"""

from __future__ import annotations

from typing import ClassVar

from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from pydantic import BaseModel, ConfigDict, Field

from agentenv_tau2.tasks import retail_task

CLOSING = "Is there anything else I can help you with?"


class GoldSettings(BaseModel):
    model_config = ConfigDict(extra="ignore")  # a task's settings for other kinds (a policy file) are not ours

    task: str = Field(description="The τ² retail task id whose gold actions are replayed.")


class GoldAgent(AgentKind[GoldSettings]):
    name: ClassVar[str] = "tau2-gold"
    description = "Replays the τ² task's gold actions and states its communicate_info (reference agent)."
    Settings = GoldSettings

    def __init__(self, settings: GoldSettings) -> None:
        super().__init__(settings)
        self.played = False

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        """First turn: every gold action, then the communicate_info; later turns only close the conversation."""
        if self.played:
            return AgentResponse(text=CLOSING)
        self.played = True
        task = retail_task(self.settings.task)
        for action in task.gold_actions:
            if action.requestor == "assistant":
                tools.call_tool(action.name, dict(action.arguments))
        infos = task.evaluation_criteria.communicate_info if task.evaluation_criteria else None
        return AgentResponse(text="\n".join([*(infos or []), CLOSING]))
