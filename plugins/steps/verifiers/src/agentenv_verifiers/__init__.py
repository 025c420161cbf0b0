"""agentenv-verifiers: the verifier step types that turn a run into a score.

Kept light on purpose: the entry module imports nothing but the hook marker, and the step classes are
imported inside the registration hook.
"""

__version__ = "0.1.0"
