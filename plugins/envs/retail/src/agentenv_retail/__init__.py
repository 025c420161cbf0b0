"""agentenv-retail: τ²-bench's retail customer-service domain as an agentenv env.

Kept import-free so plugin discovery stays fast; the env lives in `agentenv_retail.env`, the public names other
distributions use in `agentenv_retail.api`.
"""

__version__ = "0.1.0"
