"""A scripted stand-in model server: Anthropic Messages, OpenAI Responses and Chat Completions on loopback.

Kept free of imports so loading the plugin costs nothing; the public names live in
`agentenv_model_standin.api`.
"""

__version__ = "0.1.0"
