"""Episode starts shared by the adapters: a task's setup runs once per (task, seed) in a process, and every
rollout plays a copy-on-write fork of that start, so concurrent rollouts never see each other's state."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from functools import partial

from agentenv_rl.episode import Episode, Template

_LOCK = threading.Lock()
_TEMPLATES: dict[tuple[str, tuple[str, ...] | None, bool], Template] = {}
_BASES: dict[tuple[str, tuple[str, ...] | None, bool, int | None], Episode] = {}


def _key(
    task: str, seed: int | None, tools: Sequence[str] | None, short_descriptions: bool
) -> tuple[str, tuple[str, ...] | None, bool, int | None]:
    return (task, None if tools is None else tuple(sorted(tools)), short_descriptions, seed)


def ready_base(
    task: str | Template,
    seed: int | None = None,
    *,
    tools: Sequence[str] | None = None,
    short_descriptions: bool = False,
) -> Episode | None:
    """The start `base_episode` would give, if it is set up already (else None: setting it up takes time)."""
    return None if isinstance(task, Template) else _BASES.get(_key(task, seed, tools, short_descriptions))


def base_episode(
    task: str | Template,
    seed: int | None = None,
    *,
    tools: Sequence[str] | None = None,
    short_descriptions: bool = False,
) -> Episode:
    """The start of `task` (BUNDLE[:TASK], a folder, a file, or a prepared Template) for `seed`, set up once;
    `tools` and `short_descriptions` trim what it offers, as `make()` does."""
    with _LOCK:  # one setup at a time: concurrent first rollouts of a task wait for the same start
        if isinstance(task, Template):
            return Episode(task, seed)
        key = _key(task, seed, tools, short_descriptions)
        options = key[:3]
        if key not in _BASES:
            if options not in _TEMPLATES:
                _TEMPLATES[options] = Template(task, tools=tools, short_descriptions=short_descriptions)
            _BASES[key] = Episode(_TEMPLATES[options], seed)
        return _BASES[key]


def fresh_episode(
    task: str | Template,
    seed: int | None = None,
    *,
    tools: Sequence[str] | None = None,
    short_descriptions: bool = False,
) -> Episode:
    """A new episode of `task`, reset: a fork of its start."""
    episode = base_episode(task, seed, tools=tools, short_descriptions=short_descriptions).fork()
    episode.reset()
    return episode


async def afresh_episode(
    task: str | Template,
    seed: int | None = None,
    *,
    tools: Sequence[str] | None = None,
    short_descriptions: bool = False,
) -> Episode:
    """`fresh_episode` from async code: the task's setup (once per process) and a simulated user's opening (which
    may be a model's reply) run off the caller's loop; the fork and an ordinary reset take microseconds on it."""
    base = ready_base(task, seed, tools=tools, short_descriptions=short_descriptions)
    if base is None:
        made = partial(base_episode, task, seed, tools=tools, short_descriptions=short_descriptions)
        base = await asyncio.to_thread(made)
    episode = base.fork()
    if episode.has_user:
        await asyncio.to_thread(episode.reset)
    else:
        episode.reset()
    return episode
