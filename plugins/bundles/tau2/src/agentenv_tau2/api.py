"""The public names of agentenv-tau2: other distributions import only this module."""

from __future__ import annotations

from agentenv_tau2.grading import Grade, gold_digest, grade, replay
from agentenv_tau2.reference import TAU2_HOME, data_dir, run_reference, tau2_python
from agentenv_tau2.tasks import TaskDataError, Tau2Task, parse_tasks, retail_splits, retail_task, retail_tasks

__all__ = [
    "TAU2_HOME",
    "Grade",
    "TaskDataError",
    "Tau2Task",
    "data_dir",
    "gold_digest",
    "grade",
    "parse_tasks",
    "replay",
    "retail_splits",
    "retail_task",
    "retail_tasks",
    "run_reference",
    "tau2_python",
]
