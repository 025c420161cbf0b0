"""agentenv-mobile: a simulated smartphone as an agentenv env, with semantic and screen-level tools and bundles."""

__version__ = "0.1.0"
