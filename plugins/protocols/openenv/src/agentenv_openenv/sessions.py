"""Sessions of an OpenEnv server: each one an episode forked from the task's start, so sessions never share state.

A base episode per seed holds the start point (the task's setup ran once for that seed); a session's episode is
a copy-on-write fork of it, and a reset with another seed swaps the session onto a fork of that seed's base.
Payloads follow OpenEnv: `{"observation": {...}, "reward": float | None, "done": bool}`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentenv_rl.api import Episode, EpisodeError, StepResult, Template


class CapacityError(RuntimeError):
    """Every session slot is taken (`--max-sessions`)."""


class Session:
    def __init__(self, pool: SessionPool, episode: Episode) -> None:
        self.pool, self.episode = pool, episode

    async def reset(self, data: dict[str, Any]) -> dict[str, Any]:
        seed = data.get("seed")
        if seed is not None and int(seed) != self.episode.seed:
            self.episode = (await self.pool.base(int(seed))).fork()
        observation, info = self.episode.reset()
        if data.get("episode_id"):
            self.episode.episode_id = str(data["episode_id"])[:255]
            info["episode_id"] = self.episode.episode_id
        return {"observation": {**observation, "info": info}, "reward": None, "done": False}

    async def step(self, action: dict[str, Any]) -> dict[str, Any]:
        result: StepResult = await self.episode.astep(action)
        observation = {**result.observation, "truncated": result.truncated, "info": result.info}
        return {"observation": observation, "reward": result.reward, "done": result.terminated or result.truncated}

    def state(self) -> dict[str, Any]:
        return self.episode.state()


class SessionPool:
    def __init__(self, template: Template, max_sessions: int) -> None:
        self.template, self.max_sessions = template, max_sessions
        self.bases: dict[int, Episode] = {}
        self.active = 0
        self._setup = asyncio.Lock()

    def prepare(self) -> None:
        """Run the setup for the default seed before the server says it is healthy."""
        seed = self.template.default_seed()
        self.bases[seed] = Episode(self.template, seed)

    async def base(self, seed: int) -> Episode:
        if seed not in self.bases:
            async with self._setup:  # the task's setup runs in a thread, one seed at a time
                if seed not in self.bases:
                    self.bases[seed] = await asyncio.to_thread(Episode, self.template, seed)
        return self.bases[seed]

    async def open(self) -> Session:
        if self.active >= self.max_sessions:
            raise CapacityError(
                f"all {self.max_sessions} sessions are in use; close one, or start the server with a larger "
                "--max-sessions"
            )
        self.active += 1
        return Session(self, (await self.base(self.template.default_seed())).fork())

    def close(self, session: Session) -> None:
        self.active -= 1

    def shutdown(self) -> None:
        self.template.close()


__all__ = ["CapacityError", "EpisodeError", "Session", "SessionPool"]
