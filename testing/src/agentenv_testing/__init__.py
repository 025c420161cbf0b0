"""agentenv-testing: conformance kits and a pytest plugin for authors of agentenv plugins."""

__version__ = "0.1.0"
