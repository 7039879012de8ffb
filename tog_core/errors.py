"""Errors every layer may raise for bad input from the person (the CLI exits 2 on them)."""
from __future__ import annotations


class UsageError(Exception):
    """Bad input: the message names the field or file and the fix."""
