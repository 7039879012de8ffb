"""Errors every layer may raise for bad input from the person (the CLI exits 2 on them), and what of a URL any layer
may show or record (`public_url`)."""
from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


class UsageError(Exception):
    """Bad input: the message names the field or file and the fix."""


def public_url(url: str | None) -> str | None:
    """An API base as it may be shown or recorded: without user:password@ and without the query string (either may
    carry a secret). None and "" stay as they are."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", "")) if parts.scheme else url.split("?", 1)[0]
