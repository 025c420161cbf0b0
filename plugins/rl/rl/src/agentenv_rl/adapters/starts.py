"""Episode starts shared by the adapters: a task's setup runs once per (task, seed) in a process, and every
rollout plays a copy-on-write fork of that start, so concurrent rollouts never see each other's state."""

from __future__ import annotations

import threading

from agentenv_rl.episode import Episode, Template

_LOCK = threading.Lock()
_TEMPLATES: dict[str, Template] = {}
_BASES: dict[tuple[str, int | None], Episode] = {}


def base_episode(task: str | Template, seed: int | None = None) -> Episode:
    """The start of `task` (BUNDLE[:TASK], a folder, a file, or a prepared Template) for `seed`, set up once."""
    with _LOCK:  # one setup at a time: concurrent first rollouts of a task wait for the same start
        if isinstance(task, Template):
            return Episode(task, seed)
        key = (task, seed)
        if key not in _BASES:
            if task not in _TEMPLATES:
                _TEMPLATES[task] = Template(task)
            _BASES[key] = Episode(_TEMPLATES[task], seed)
        return _BASES[key]


def fresh_episode(task: str | Template, seed: int | None = None) -> Episode:
    """A new episode of `task`, reset: a fork of its start."""
    episode = base_episode(task, seed).fork()
    episode.reset()
    return episode
