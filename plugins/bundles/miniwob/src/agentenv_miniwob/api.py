"""The public names of agentenv-miniwob: other distributions import only this module."""

from __future__ import annotations

from agentenv_miniwob.env import Instance, MiniwobEnv, MiniwobSettings
from agentenv_miniwob.pages import PagesMissing, html_dir, pages_url, task_names
from agentenv_miniwob.reference import BROWSERGYM_HOME, browsergym_python, run_browsergym
from agentenv_miniwob.seeding import page_seed
from agentenv_miniwob.solvers import SOLUTIONS, play

__all__ = [
    "BROWSERGYM_HOME",
    "SOLUTIONS",
    "Instance",
    "MiniwobEnv",
    "MiniwobSettings",
    "PagesMissing",
    "browsergym_python",
    "html_dir",
    "page_seed",
    "pages_url",
    "play",
    "run_browsergym",
    "task_names",
]
