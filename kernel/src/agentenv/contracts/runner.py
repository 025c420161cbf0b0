"""Runners execute many task runs (in this process, across processes or machines)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from agentenv.contracts.base import Contribution


class Runner(Contribution, ABC):
    @abstractmethod
    def run_many(self, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Run each job (a task reference with seed and overrides); return one run summary per job."""
