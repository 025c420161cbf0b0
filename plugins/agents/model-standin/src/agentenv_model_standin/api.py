"""Public names of `agentenv-model-standin`, the only module other distributions import.

with StandInModel("script.toml") as model:
    ...  # point a client at model.url (Anthropic) or model.openai_url (OpenAI)
    model.requests  # every request received, in order
"""

from agentenv_model_standin.script import Script, ScriptError, ToolCall, Turn, load_script
from agentenv_model_standin.server import EXHAUSTED, LoggedRequest, StandInModel, match_tool

__all__ = [
    "EXHAUSTED",
    "LoggedRequest",
    "Script",
    "ScriptError",
    "StandInModel",
    "ToolCall",
    "Turn",
    "load_script",
    "match_tool",
]
