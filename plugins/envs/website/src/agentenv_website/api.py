"""The public API of agentenv-website for other plugins and tests: import from here, not from the other modules."""

from agentenv_website.env import WebsiteEnv
from agentenv_website.mounts import TOOLS_KEY
from agentenv_website.settings import WebsiteSettings
from agentenv_website.started import DOCKER_LABEL, WebsiteError

__all__ = ["DOCKER_LABEL", "TOOLS_KEY", "WebsiteEnv", "WebsiteError", "WebsiteSettings"]
