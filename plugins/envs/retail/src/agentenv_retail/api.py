"""The public names of agentenv-retail: other distributions import only this module."""

from __future__ import annotations

from agentenv_retail.env import RetailEnv, policy
from agentenv_retail.store import canonical

__all__ = ["RetailEnv", "canonical", "policy"]
