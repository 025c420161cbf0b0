"""agentenv-game: connect-four for two players as an agentenv env, with a scripted opponent and a graded bundle."""

__version__ = "0.1.0"
