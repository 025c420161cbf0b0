"""The verifier step types: the steps that turn a run into a score (see VERIFIERS.md)."""
