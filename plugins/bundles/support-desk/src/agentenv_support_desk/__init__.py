"""Bundles for the support-desk world; see `agentenv run` with no argument."""
