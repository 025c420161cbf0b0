"""Docker sandbox provider for agentenv.

Kept light on purpose: the `docker` SDK is imported inside the functions that talk to the engine, and the
provider and step classes are imported by the plugin's registration hooks, not here.
"""

__version__ = "0.1.0"
