"""τ²-bench's grade of one retail episode, component by component, over our world.

- `DB`: the gold actions replayed on a fork of the initial database; its state digest must equal the episode's.
  τ² replays the agent's calls on a fresh database; ours ran live on the same deterministic tools, so the
  episode's database already is that replay. The gold digest is a pure function of (task, initial data), so
  it is computed once per task and data set.
- `ACTION`: every gold action matched by some tool call of the agent (τ²'s `compare_args`).
- `COMMUNICATE`: every `communicate_info` string in some agent message, lower-cased, commas dropped from the
  message (τ²'s rule).
- `NL_ASSERTION`: judged by a model over the conversation; without one the component is *not graded* and is
  left out of the reward, never counted as passed. No assertions: 1.0, as in τ².
- `ENV_ASSERTION`: retail tasks have none; 1.0, as in τ².

The reward is the product over the task's `reward_basis` of the graded components.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentenv_retail.api import RetailEnv

from agentenv_tau2.tasks import Tau2Task

_GOLD_DIGESTS: dict[tuple[str, tuple[str, ...]], str] = {}
_INITIAL_WORLDS: dict[tuple[str, ...], RetailEnv] = {}


@dataclass
class Grade:
    reward: float
    components: dict[str, float | None]
    """Each component of the reward basis: its value, or None when it could not be graded."""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def not_graded(self) -> list[str]:
        return [name for name, value in self.components.items() if value is None]

    def to_dict(self) -> dict[str, Any]:
        return {"reward": self.reward, "components": self.components, "not_graded": self.not_graded, **self.details}


def _initial_world(env: RetailEnv) -> RetailEnv:
    """An untouched env at `env`'s initial data whose digest is known, one per data set.

    Its forks know their starting digest, so a replay's digest follows its few writes. A fork of the episode's
    env put back by `reset()` knows it only while the episode's env still remembers its initial bytes, and
    otherwise counts all ~1,100 rows again (80 % of a cold grade)."""
    key = tuple(artifact.sha256 for artifact in env.loaded)
    initial = _INITIAL_WORLDS.get(key)
    if initial is None:
        initial = env.fork()
        initial.reset()
        initial.state_digest()
        _INITIAL_WORLDS[key] = initial
    return initial


def replay(env: RetailEnv, task: Tau2Task) -> RetailEnv:
    """The gold world: a fork of `env`'s initial data, with the task's gold actions applied (a failing gold
    action is skipped, as τ² logs and skips it)."""
    gold = _initial_world(env).fork()
    for action in task.gold_actions:
        if action.requestor == "assistant":
            gold.call(action.name, action.arguments)
    return gold


def gold_digest(env: RetailEnv, task: Tau2Task) -> str:
    key = (task.id, tuple(artifact.sha256 for artifact in env.loaded))
    if key not in _GOLD_DIGESTS:
        _GOLD_DIGESTS[key] = replay(env, task).state_digest()
    return _GOLD_DIGESTS[key]


def communicated(info: str, messages: Iterable[str]) -> bool:
    wanted = info.lower()
    return any(wanted in text.lower().replace(",", "") for text in messages if text)


def grade(
    task: Tau2Task,
    env: RetailEnv,
    calls: list[tuple[str, dict[str, Any]]],
    conversation: list[dict[str, str]],
    verdicts: list[bool] | None = None,
) -> Grade:
    """Grade an episode: `env` in its final state, the agent's tool `calls` (name, arguments) in order, the
    conversation as `{"role": "user"|"assistant", "content": ...}` messages, and the judge's verdicts on the
    NL assertions (None: no judge, the component is not graded)."""
    criteria = task.evaluation_criteria
    if criteria is None:
        return Grade(1.0, {}, {"note": "No evaluation criteria"})
    said = [m["content"] for m in conversation if m["role"] == "assistant"]
    db_match = gold_digest(env, task) == env.state_digest()
    actions = [any(gold.matches(name, args) for name, args in calls) for gold in task.gold_actions]
    infos = list(criteria.communicate_info or [])
    comm = [communicated(info, said) for info in infos]
    values: dict[str, float | None] = {
        "DB": 1.0 if db_match else 0.0,
        "ENV_ASSERTION": 1.0,
        "ACTION": 1.0 if all(actions) else 0.0,
        "COMMUNICATE": 1.0 if all(comm) else 0.0,
    }
    assertions = list(criteria.nl_assertions or [])
    if not assertions:
        values["NL_ASSERTION"] = 1.0
    elif verdicts is None:
        values["NL_ASSERTION"] = None
    else:  # τ²: met when every result the judge returned is met
        values["NL_ASSERTION"] = 1.0 if all(verdicts) else 0.0
    components = {name: values[name] for name in criteria.reward_basis}
    reward = 1.0
    for value in components.values():
        if value is not None:
            reward *= value
    details = {
        "db_match": db_match,
        "action_checks": [
            {"action_id": g.action_id, "name": g.name, "matched": m}
            for g, m in zip(task.gold_actions, actions, strict=True)
        ],
        "communicate_checks": [{"info": i, "met": m} for i, m in zip(infos, comm, strict=True)],
        "nl_assertions": [
            {"assertion": a, "met": None if verdicts is None or i >= len(verdicts) else verdicts[i]}
            for i, a in enumerate(assertions)
        ],
    }
    return Grade(reward, components, details)
