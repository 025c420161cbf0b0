"""Conformance kits that plugins subclass in their own tests (`agentenv.testing.stores`, ...)."""
