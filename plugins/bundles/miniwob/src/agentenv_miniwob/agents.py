"""`miniwob-solver` and `miniwob-wrong`: scripted agents that play a miniwob task's solution, or its mistake.

Both read the task from the `goal` tool, so one agent serves every task that has a solution (`solvers`); on a
task without one they do nothing and say so (the page then scores 0).
"""

from __future__ import annotations

from typing import ClassVar

from agentenv.contracts import AgentKind, AgentResponse, ToolAccess
from pydantic import BaseModel, ConfigDict

from agentenv_miniwob.solvers import play


class ScriptedSettings(BaseModel):
    model_config = ConfigDict(extra="ignore")  # a task's settings for other kinds (a policy file) are not ours


class MiniwobSolver(AgentKind[ScriptedSettings]):
    name: ClassVar[str] = "miniwob-solver"
    description = "Plays the scripted solution of the miniwob task (13 tasks have one)."
    Settings = ScriptedSettings
    wrong: ClassVar[bool] = False

    async def respond(self, prompt: str, tools: ToolAccess) -> AgentResponse:
        return AgentResponse(text=play(tools, wrong=self.wrong))


class MiniwobWrong(MiniwobSolver):
    name: ClassVar[str] = "miniwob-wrong"
    description = "Plays a deliberately wrong action sequence on the miniwob task (the other button, a typo, …)."
    wrong: ClassVar[bool] = True
