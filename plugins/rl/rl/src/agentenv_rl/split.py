"""A task seen as an RL environment: the setup before the agent, the agent's part, and the verifiers after.

`agentenv run` plays the whole DAG with an agent kind. An episode runs the setup once (deploy, load data, set
the clock, arm triggers), keeps the world's state as the start point, and lets a trainer's policy take the
agent's place: the policy's tool calls go to the world as the role `deploy_agent` names, its final answer is
what `prompt_agent` would have returned, and the verifiers grade it exactly as in a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentenv import PluginHost
from agentenv_runtime import (
    Planned,
    StepDecl,
    TaskError,
    TaskFile,
    ancestors,
    bundle_of_task_file,
    find_bundle,
    read_task,
)

AGENT_STEP = "deploy_agent"
PROMPT_STEP = "prompt_agent"


class EpisodeError(ValueError):
    """A task that cannot be an episode, or an episode used wrongly; the message says what to change."""


@dataclass(frozen=True)
class TaskSplit:
    setup: list[StepDecl]
    agent: StepDecl
    prompt: StepDecl
    verifiers: list[StepDecl]

    @property
    def world_step(self) -> str:
        """The deploy_env step whose world the agent acts in."""
        return str(self.agent.fields.get("env"))

    @property
    def role(self) -> str:
        return str(self.agent.fields.get("role", "default"))


def find_task(target: str, host: PluginHost) -> tuple[TaskFile, Path | None, str | None]:
    """`BUNDLE[:TASK]`, a bundle folder, or a task file → (task, bundle folder, bundle name).

    Without `:TASK`, a bundle's first default task (or its first task file). A task file in a bundle's `tasks/`
    folder is that bundle's, as for `agentenv run`: its relative paths (policies, scripts) are the bundle's."""
    if Path(target).is_file():
        owner = bundle_of_task_file(Path(target), host)
        if owner is not None and (problems := owner.requirement_problems(host)):
            raise TaskError("\n".join(problems))
        return read_task(Path(target)), owner.path if owner else None, owner.name if owner else None
    name, _, wanted = target.partition(":")
    bundle = find_bundle(name, host)
    problems = bundle.requirement_problems(host)
    if problems:
        raise TaskError("\n".join(problems))
    files = bundle.task_files()
    choice = wanted or (bundle.default_tasks[0] if bundle.default_tasks else next(iter(files), ""))
    if choice in files:
        return read_task(files[choice]), bundle.path, bundle.name
    for path in files.values():
        task = read_task(path)
        if task.name == choice:
            return task, bundle.path, bundle.name
    raise TaskError(f"bundle {bundle.name!r} has no task {choice!r} (tasks: {', '.join(files) or 'none'})")


def split_task(task: TaskFile, planned: dict[str, Planned]) -> TaskSplit:
    """Refuse, naming the step and the fix, a task whose agent part is not one deploy_agent + one prompt_agent
    followed only by verifiers."""
    where = f"{task.path}: "
    agents = [s for s in task.steps if s.type == AGENT_STEP]
    prompts = [s for s in task.steps if s.type == PROMPT_STEP]
    if len(agents) != 1 or len(prompts) != 1:
        raise EpisodeError(
            f"{where}an episode needs exactly one {AGENT_STEP} and one {PROMPT_STEP} step (this task has "
            f"{len(agents)} and {len(prompts)}); the policy being trained takes that agent's place"
        )
    agent, prompt = agents[0], prompts[0]
    deps = task.deps()
    after_agent = {s.id for s in task.steps if agent.id in ancestors(deps, s.id)} | {agent.id}
    setup, verifiers = [], []
    for decl in task.steps:
        if decl.id in (agent.id, prompt.id):
            continue
        if planned[decl.id].step.verifier:
            verifiers.append(decl)
        elif decl.id in after_agent:
            raise EpisodeError(
                f"{where}step {decl.id!r} ({decl.type}) runs after the agent and is not a verifier; an episode "
                "ends with the policy's answer and the verifiers only (move the step before deploy_agent)"
            )
        else:
            setup.append(decl)
    if prompt.fields.get("user"):
        raise EpisodeError(
            f"{where}step {prompt.id!r}: field `user`: simulated-user turns are not supported by episodes yet; "
            "use a task with a single prompt"
        )
    return TaskSplit(setup, agent, prompt, verifiers)
