"""First-party agent kinds: `scripted` (a deterministic policy file) and `llm` (an OpenAI-compatible endpoint).

Kept free of imports so loading the plugin costs nothing; import the kinds from their modules:
`agentenv_agents.scripted.ScriptedAgent`, `agentenv_agents.llm.LlmAgent`, and the shared
`{{ dotted.path }}` templating from `agentenv_agents.templating`.
"""

__version__ = "0.1.0"
