"""The env SDK: an `Env` subclass with `@tool` methods and packaged artifacts (import them from `agentenv_runtime`)."""
