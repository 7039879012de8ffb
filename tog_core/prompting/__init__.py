"""Prompts ToG sends and the tolerant reading of the replies: below scoring (the LLM scorer uses both) and tog."""
