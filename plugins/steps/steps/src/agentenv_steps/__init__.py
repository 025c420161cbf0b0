"""agentenv-steps: the core step types of agentenv tasks and the `hello` bundle.

Kept light on purpose: the step classes are imported only when the kernel asks for the `steps` registry.
"""

__version__ = "0.1.0"
