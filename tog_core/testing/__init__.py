"""Test doubles for ToG Explorer, a supported API (like numpy.testing): a fake OpenAI-compatible server on
127.0.0.1 so LiteLLM's own code runs in tests, and a scripted chat model that needs no server at all.
Production modules never import this package."""
from __future__ import annotations

from tog_core.testing.scripted import ScriptedLLM
from tog_core.testing.server import FakeOpenAIServer, Reply, hashed_embedding, last_user_message, script

__all__ = ["FakeOpenAIServer", "Reply", "ScriptedLLM", "hashed_embedding", "last_user_message", "script"]
