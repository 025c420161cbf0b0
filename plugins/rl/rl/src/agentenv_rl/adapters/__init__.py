"""Thin adapters from episodes to trainers' interfaces; each speaks OpenAI chat messages with tool calls."""
