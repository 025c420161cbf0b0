"""OpenEnv's echo environment on OpenEnv's own server (`openenv-core`), the baseline of `rl_bench.py --only openenv`.

Runs only in a venv holding openenv-core (the bench makes one from the wheelhouse); never imported by agentenv.
Usage: python bench/openenv_echo_server.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State


class EchoAction(Action):
    message: str


class EchoObservation(Observation):
    echoed_message: str = ""
    message_length: int = 0


class EchoEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        self._state = State(step_count=0)

    def reset(self) -> EchoObservation:
        self._state = State(step_count=0)
        return EchoObservation(echoed_message="ready", done=False, reward=0.0)

    def step(self, action: EchoAction) -> EchoObservation:  # type: ignore[override]
        self._state.step_count += 1
        text = action.message
        return EchoObservation(echoed_message=text, message_length=len(text), done=False, reward=len(text) * 0.1)

    @property
    def state(self) -> State:
        return self._state


if __name__ == "__main__":
    app = create_fastapi_app(EchoEnvironment, EchoAction, EchoObservation, max_concurrent_envs=64)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
