"""The public API of agentenv-steps for other plugins: import from here, not from the other modules.

Verifier steps of other plugins (agentenv-workspace's `tests_verifier`) return the same rows and score shape
as the verifiers here, so they build them with the same helpers.
"""

from agentenv_steps.verifiers.results import Row, make_row, verdict

__all__ = ["Row", "make_row", "verdict"]
