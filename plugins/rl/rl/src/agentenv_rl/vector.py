"""N episodes of one task stepped in a batch: forks of one base episode, in this process or across workers.

In one process the N episodes are copy-on-write forks of one start, so they cost what their rollouts change.
With `workers > 1` each worker process makes its own base (the task's setup runs once per worker) and steps
its share of the slots; results come back in slot order. The Ray runner (`agentenv-ray`) puts the same
shares on Ray actors.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any, Protocol

from agentenv_rl.episode import Action, Episode, StepResult, make

ActionLike = Action | Mapping[str, Any] | None
"""An action for one slot; None leaves that slot alone this batch."""


class EpisodeBatch(Protocol):
    """What every batched form offers: in this process, across worker processes, on Ray actors."""

    def reset(self) -> list[tuple[dict[str, Any], dict[str, Any]]]: ...

    def step(self, actions: Sequence[ActionLike]) -> list[StepResult | None]: ...

    def states(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


class LocalEpisodes:
    """`n` forks of one episode in this process."""

    def __init__(self, target: str, n: int, *, seed: int | None = None, **options: Any) -> None:
        if n < 1:
            raise ValueError(f"n = {n}: a batch needs at least one episode")
        self.base = make(target, seed=seed, **options)
        self.episodes: list[Episode] = [self.base.fork() for _ in range(n)]

    def reset(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return [episode.reset() for episode in self.episodes]

    def step(self, actions: Sequence[ActionLike]) -> list[StepResult | None]:
        if len(actions) != len(self.episodes):
            raise ValueError(f"{len(actions)} actions for {len(self.episodes)} episodes; give one per slot (or None)")
        pairs = zip(self.episodes, actions, strict=True)
        return [None if action is None else episode.step(action) for episode, action in pairs]

    def states(self) -> list[dict[str, Any]]:
        return [episode.state() for episode in self.episodes]

    def close(self) -> None:
        self.base.close()


def _serve(connection: Connection, target: str, n: int, seed: int | None, options: dict[str, Any]) -> None:
    """A worker process: one LocalEpisodes, answering (method, argument) requests until told to close."""
    try:
        local = LocalEpisodes(target, n, seed=seed, **options)
    except Exception as exc:
        connection.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    connection.send(("ready", None))
    while True:
        method, argument = connection.recv()
        if method == "close":
            local.close()
            connection.send(("ok", None))
            return
        try:
            reply = getattr(local, method)(*argument)
        except Exception as exc:  # reported to the caller, which raises it there; the worker keeps serving
            connection.send(("error", f"{type(exc).__name__}: {exc}"))
        else:
            connection.send(("ok", reply))


def shares(n: int, workers: int) -> list[int]:
    """How many of `n` slots each worker gets (the first ones one more when it does not divide; no empty ones)."""
    return [n // workers + (1 if i < n % workers else 0) for i in range(min(n, workers))]


def split_actions(actions: Sequence[ActionLike], sizes: list[int]) -> list[tuple[list[Any]]]:
    """One batch's actions cut into each worker's share (as plain dicts, to cross a process boundary)."""
    if len(actions) != sum(sizes):
        raise ValueError(f"{len(actions)} actions for {sum(sizes)} episodes; give one per slot (or None)")
    plain = [dict(a) if isinstance(a, Mapping) else a for a in actions]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [(plain[start : start + size],) for start, size in zip(starts, sizes, strict=True)]


class WorkerEpisodes:
    """The same batch interface, its slots spread over worker processes (spawned, so each is clean)."""

    def __init__(self, target: str, n: int, *, workers: int, seed: int | None = None, **options: Any) -> None:
        context = multiprocessing.get_context("spawn")
        self.sizes = shares(n, workers)
        self.connections: list[Connection] = []
        self.processes: list[Any] = []
        for size in self.sizes:
            mine, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(theirs, target, size, seed, options), daemon=True)
            process.start()
            self.connections.append(mine)
            self.processes.append(process)
        try:
            for connection in self.connections:
                self._reply(connection)
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _reply(connection: Connection) -> Any:
        try:
            status, value = connection.recv()
        except EOFError:
            raise RuntimeError("episode worker: the process exited before answering (see its error above)") from None
        if status == "error":
            raise RuntimeError(f"episode worker: {value}")
        return value

    def _ask(self, method: str, arguments: list[tuple[Any, ...]]) -> list[Any]:
        """Every worker's reply is read before an error is raised, so the pipes stay in step."""
        for connection, argument in zip(self.connections, arguments, strict=True):
            connection.send((method, argument))
        replies = [connection.recv() for connection in self.connections]
        failed = [str(value) for status, value in replies if status == "error"]
        if failed:
            raise RuntimeError(f"episode worker: {'; '.join(failed)}")
        return [item for _, value in replies for item in value]

    def reset(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return self._ask("reset", [() for _ in self.connections])

    def step(self, actions: Sequence[ActionLike]) -> list[StepResult | None]:
        return self._ask("step", split_actions(actions, self.sizes))

    def states(self) -> list[dict[str, Any]]:
        return self._ask("states", [() for _ in self.connections])

    def close(self) -> None:
        for connection, process in zip(self.connections, self.processes, strict=True):
            try:
                connection.send(("close", ()))
                if connection.poll(10):
                    connection.recv()
            except (OSError, EOFError):
                pass
            process.join(10)
            if process.is_alive():
                process.kill()
        self.connections, self.processes = [], []


def vector(target: str, n: int, *, workers: int = 1, seed: int | None = None, **options: Any) -> EpisodeBatch:
    """N episodes of `target` from one start, stepped in a batch (`workers` processes when more than one)."""
    if workers > 1:
        return WorkerEpisodes(target, n, workers=workers, seed=seed, **options)
    return LocalEpisodes(target, n, seed=seed, **options)
