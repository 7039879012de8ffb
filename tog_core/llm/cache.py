"""The response cache of the LLM client: an in-memory LRU in front of one JSON file per response.

Keys are the sha256 of everything that determines a reply (model, api_base, messages, temperature,
max_tokens, schema). A disk entry that cannot be read (damaged, other version) is ignored with a warning,
never trusted; a write goes through a temp file and os.replace, so readers never see half an entry.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from tog_core.lru import LRU, MISSING

__all__ = ["ResponseCache", "cache_key", "CACHE_FORMAT_VERSION", "MEMORY_CACHE_ENTRIES"]

log = logging.getLogger(__name__)

CACHE_FORMAT_VERSION = 1
MEMORY_CACHE_ENTRIES = 4096


def cache_key(*, model: str, api_base: str | None, messages: list[dict], temperature: float,
              max_tokens: int, json_schema: dict | None) -> str:
    payload = json.dumps([model, api_base, messages, temperature, max_tokens, json_schema],
                         sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Thread-safe get/put of reply entries (dicts with at least ``text``) for one model."""

    def __init__(self, *, model: str, directory: Path | None, enabled: bool = True,
                 memory_entries: int = MEMORY_CACHE_ENTRIES) -> None:
        self.model = model
        self.directory = directory
        self.enabled = enabled
        self.memory_entries = memory_entries
        self._memory: LRU[str, dict] = LRU(memory_entries)

    def path(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        if not self.enabled:
            return None
        remembered = self._memory.get(key)
        if remembered is not MISSING:
            return remembered
        path = self.path(key)
        if path is None or not path.exists():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            log.warning("cache_file_unreadable: ignoring %s (%s)", path, exc)
            return None
        if not isinstance(entry, dict) or entry.get("version") != CACHE_FORMAT_VERSION \
                or not isinstance(entry.get("text"), str):
            log.warning("cache_file_unreadable: ignoring %s (unexpected content)", path)
            return None
        self._memory.put(key, entry)
        return entry

    def put(self, key: str, entry: dict) -> None:
        if not self.enabled:
            return
        entry = {"version": CACHE_FORMAT_VERSION, "model": self.model, **entry}
        self._memory.put(key, entry)
        path = self.path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
