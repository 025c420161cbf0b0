"""agentenv-tau2: the tau2-retail bundle (τ²-bench's retail tasks, graded as τ² grades them).

Kept import-free so plugin discovery stays fast; public names are in `agentenv_tau2.api`.
"""

__version__ = "0.1.0"
