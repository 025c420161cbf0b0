"""A task store that forgets: at most `max_tasks` tasks kept, finished ones dropped `task_ttl` seconds after.

The SDK's `InMemoryTaskStore` keeps every task (its history and artifacts) for the life of the server, so a
long-running served agent grows without end: 5,000 small tasks cost ~68 MiB. `BoundedTaskStore` wraps it and
evicts, oldest finished first, once more than `max_tasks` are kept, and drops a finished task once it has been
finished for `task_ttl` seconds. A task that is still running is never evicted (its executor still writes to
it); one waiting for the client (`input-required`, `auth-required`) counts as finished here, since nothing works
on it until the client comes back, and a client that never does must not pin it. A `GetTask` for an evicted
task answers the protocol's task-not-found error, as for a task that never existed.

The SDK store scopes tasks by owner (the request's user); the wrapper resolves the owner itself and hands the
inner store a context naming it, so evicting a task needs no request of its owner.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver, resolve_user_scope
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task, TaskState

if TYPE_CHECKING:
    from collections.abc import Iterator

DEFAULT_MAX_TASKS = 1000
DEFAULT_TASK_TTL = 3600.0
FINISHED = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
)
"""States after which no executor writes to the task until a client does: the task may be evicted."""
_OWNER = "agentenv_a2a.owner"

Key = tuple[str, str]
"""(owner, task id)."""


def check_limits(max_tasks: int, task_ttl: float) -> None:
    """ValueError naming the option when a limit cannot work (the CLI shows it as is)."""
    if isinstance(max_tasks, bool) or not isinstance(max_tasks, int) or max_tasks < 1:
        raise ValueError(f"max_tasks (--max-tasks) must be a whole number of at least 1, not {max_tasks!r}")
    if not task_ttl > 0:
        raise ValueError(f"task_ttl (--task-ttl) must be more than 0 seconds, not {task_ttl!r}")


class BoundedTaskStore(TaskStore):
    """`InMemoryTaskStore` with a cap on kept tasks and a time to live for finished ones (see the module)."""

    def __init__(
        self,
        max_tasks: int = DEFAULT_MAX_TASKS,
        task_ttl: float = DEFAULT_TASK_TTL,
        *,
        owner_resolver: OwnerResolver = resolve_user_scope,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_limits(max_tasks, task_ttl)
        self.max_tasks, self.task_ttl = max_tasks, task_ttl
        self._owner_of, self._clock = owner_resolver, clock
        self._inner = InMemoryTaskStore(owner_resolver=lambda context: str(context.state[_OWNER]))
        self._running: set[Key] = set()
        self._finished: OrderedDict[Key, float] = OrderedDict()
        """Finished tasks in the order they finished, with when: the front is the first to go."""
        self._lock = threading.Lock()
        self.evicted = 0
        """How many tasks were dropped so far (cap or age)."""

    def limit(self, *, max_tasks: int | None = None, task_ttl: float | None = None) -> None:
        """Change the limits (`serve_a2a` applies its own); kept tasks over the new ones go at the next save."""
        max_tasks = self.max_tasks if max_tasks is None else max_tasks
        task_ttl = self.task_ttl if task_ttl is None else task_ttl
        check_limits(max_tasks, task_ttl)
        self.max_tasks, self.task_ttl = max_tasks, task_ttl

    def __len__(self) -> int:
        return len(self._running) + len(self._finished)

    def _scoped(self, owner: str) -> ServerCallContext:
        return ServerCallContext(state={_OWNER: owner})

    async def save(self, task: Task, context: ServerCallContext) -> None:
        owner = self._owner_of(context)
        key = (owner, task.id)
        await self._inner.save(task, self._scoped(owner))
        with self._lock:
            if task.status.state in FINISHED:
                self._running.discard(key)
                self._finished.pop(key, None)
                self._finished[key] = self._clock()
            else:
                self._finished.pop(key, None)
                self._running.add(key)
            doomed = list(self._doomed())
        for gone in doomed:
            await self._inner.delete(gone[1], self._scoped(gone[0]))

    def _doomed(self) -> Iterator[Key]:
        """Pop the finished tasks to drop now: those past their time, then the oldest while over the cap."""
        deadline = self._clock() - self.task_ttl
        while self._finished:
            key, finished_at = next(iter(self._finished.items()))
            if finished_at > deadline and len(self) <= self.max_tasks:
                return
            del self._finished[key]
            self.evicted += 1
            yield key

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        owner = self._owner_of(context)
        with self._lock:
            doomed = list(self._doomed())  # a finished task past its time is gone even before the next save
        for gone in doomed:
            await self._inner.delete(gone[1], self._scoped(gone[0]))
        return await self._inner.get(task_id, self._scoped(owner))

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self._inner.list(params, self._scoped(self._owner_of(context)))

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        owner = self._owner_of(context)
        with self._lock:
            self._running.discard((owner, task_id))
            self._finished.pop((owner, task_id), None)
        await self._inner.delete(task_id, self._scoped(owner))


__all__ = ["DEFAULT_MAX_TASKS", "DEFAULT_TASK_TTL", "BoundedTaskStore", "check_limits"]
