"""The response cache of the LLM client: an in-memory LRU in front of one JSON file per response.

Keys are the sha256 of everything that determines a reply (model, api_base, messages, temperature,
max_tokens, schema). A disk entry that cannot be read (damaged, other version) is ignored with a warning,
never trusted; a write goes through a temp file and os.replace, so readers never see half an entry.

A reply comes from a server that may be anyone's (a person can type an API base of their own), so every part is
bounded: an entry's text is at most :data:`ENTRY_MAX_CHARS` (a longer one is never stored, and a file larger than such
an entry can be is never read); the memory holds at most :data:`MEMORY_CACHE_ENTRIES` entries and
:data:`MEMORY_CACHE_CHARS` characters of text per cache (the least recently used go first); the folder holds at most
``TOG_LLM_CACHE_MB`` megabytes (:data:`DISK_CACHE_MB` unset; 0: no files, the memory only), the oldest files (least
recently written or read) removed when a write goes past it, down to :data:`PRUNE_TO` of it, in a background thread.
The folder's size is counted per process (scanned at its first write, then added to), so processes sharing a folder
may each go past the bound by what they wrote since their last scan; every prune scans the folder again.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

__all__ = ["ResponseCache", "cache_key", "CACHE_FORMAT_VERSION", "MEMORY_CACHE_ENTRIES", "MEMORY_CACHE_CHARS",
           "ENTRY_MAX_CHARS", "DISK_CACHE_MB", "CACHE_MB_SETTING", "disk_limit_bytes"]

log = logging.getLogger(__name__)

CACHE_FORMAT_VERSION = 1
MEMORY_CACHE_ENTRIES = 4096
MEMORY_CACHE_CHARS = 8_000_000  # characters of reply text held in memory per cache (~4,000 replies of 2,000)
ENTRY_MAX_CHARS = 1_000_000  # the client's hard ceiling on one reply (llm/reply_limit.py: REPLY_MAX_CHARS)
_ENTRY_MAX_BYTES = 6 * ENTRY_MAX_CHARS + 4096  # the JSON of the longest entry (\uXXXX escapes 6 bytes a character)
CACHE_MB_SETTING = "TOG_LLM_CACHE_MB"
DISK_CACHE_MB = 256.0  # ~150,000 replies of the usual size (1-2 kB a file)
PRUNE_TO = 0.9  # a prune removes the oldest files down to this share of the bound (so not at every write)


def cache_key(*, model: str, api_base: str | None, messages: list[dict], temperature: float,
              max_tokens: int, json_schema: dict | None) -> str:
    payload = json.dumps([model, api_base, messages, temperature, max_tokens, json_schema],
                         sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def disk_limit_bytes(environ: dict[str, str] | None = None) -> int:
    """The bound of the cache folder in bytes, from ``TOG_LLM_CACHE_MB`` (megabytes, 0: no files); a value that is
    not a number >= 0 is the default, with a warning."""
    raw = ((os.environ if environ is None else environ).get(CACHE_MB_SETTING) or "").strip()
    megabytes = DISK_CACHE_MB
    if raw:
        try:
            megabytes = float(raw)
            if not megabytes >= 0 or megabytes == float("inf"):
                raise ValueError(raw)
        except ValueError:
            log.warning("%s=%r is not a number of megabytes >= 0; using %g", CACHE_MB_SETTING, raw[:40], DISK_CACHE_MB)
            megabytes = DISK_CACHE_MB
    return int(megabytes * 1_000_000)


class _Memory:
    """A least-recently-used map of entries bounded by their count and the characters of their text."""

    def __init__(self, entries: int, chars: int) -> None:
        self.entries, self.chars = max(1, entries), max(0, chars)
        self._d: OrderedDict[str, dict] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> dict | None:
        with self._lock:
            entry = self._d.get(key)
            if entry is not None:
                self._d.move_to_end(key)
            return entry

    def put(self, key: str, entry: dict) -> None:
        size = len(entry["text"])
        with self._lock:
            old = self._d.pop(key, None)
            if old is not None:
                self._held -= len(old["text"])
            if size > self.chars:
                return
            self._d[key] = entry
            self._held += size
            while len(self._d) > self.entries or self._held > self.chars:
                self._held -= len(self._d.popitem(last=False)[1]["text"])


class _Folder:
    """How many bytes of cache files one folder holds, as this process counts them. The folder is scanned, and its
    oldest files removed past the bound, in a background thread, so a write never waits for it (a scan reads about
    200,000 file sizes a second; a prune of 10 % of 256 MB removes some 17,000 files in a few seconds)."""

    _all: dict[Path, _Folder] = {}
    _all_lock = threading.Lock()

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.held: int | None = None  # None: not scanned yet
        self.since = 0  # bytes written while a scan was in flight
        self.lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @classmethod
    def of(cls, directory: Path) -> _Folder:
        key = Path(os.path.abspath(directory))
        with cls._all_lock:
            return cls._all.setdefault(key, cls(key))

    def files(self) -> list[tuple[float, int, str]]:
        """(modified, size, path) of every entry file."""
        out: list[tuple[float, int, str]] = []
        try:
            shards = [d.path for d in os.scandir(self.directory) if d.is_dir(follow_symlinks=False)]
        except OSError:
            return out
        for shard in shards:
            try:
                for f in os.scandir(shard):
                    if f.name.endswith(".json") and f.is_file(follow_symlinks=False):
                        st = f.stat(follow_symlinks=False)
                        out.append((st.st_mtime, st.st_size, f.path))
            except OSError:
                continue
        return out

    def wrote(self, size: int, limit: int) -> None:
        """`size` bytes were written: at the first write, or past `limit`, scan (and prune) in the background."""
        with self.lock:
            if self._thread is not None:
                self.since += size
                return
            if self.held is not None:
                self.held += size
                if self.held <= limit:
                    return
            self.since = 0
            self._thread = threading.Thread(target=self._settle, args=(limit,), name="tog-llm-cache-prune",
                                            daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a scan or prune in flight (tests; a process about to exit)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _settle(self, limit: int) -> None:
        held: int | None = None
        try:
            for _ in range(3):  # a file that cannot be removed must not keep the thread going
                held = self._prune(limit)
                with self.lock:  # what was written meanwhile may have been counted by the scan too: a little over
                    held, self.since = held + self.since, 0
                    if held <= limit:
                        return
        finally:
            with self.lock:
                self.held, self._thread = held, None

    def _prune(self, limit: int) -> int:
        """Remove the oldest files until the folder holds PRUNE_TO of `limit` (nothing when within it): bytes held."""
        files = sorted(self.files())
        held = sum(s for _, s, _ in files)
        if held <= limit:
            return held
        target, removed = int(limit * PRUNE_TO), 0
        for _, size, path in files:
            if held <= target:
                break
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError:
                continue
            held, removed = held - size, removed + 1
        log.info("llm_cache_pruned: removed the %d oldest replies of %s to stay within %s=%g", removed,
                 self.directory, CACHE_MB_SETTING, limit / 1_000_000)
        return held


class ResponseCache:
    """Thread-safe get/put of reply entries (dicts with at least ``text``) for one model."""

    def __init__(self, *, model: str, directory: Path | None, enabled: bool = True,
                 memory_entries: int = MEMORY_CACHE_ENTRIES, memory_chars: int = MEMORY_CACHE_CHARS,
                 disk_bytes: int | None = None) -> None:
        self.model = model
        self.enabled = enabled
        self.memory_entries = memory_entries
        self.disk_bytes = disk_limit_bytes() if disk_bytes is None else disk_bytes
        self.directory = directory if self.disk_bytes > 0 else None
        self._memory = _Memory(memory_entries, memory_chars)
        self._folder = _Folder.of(self.directory) if self.directory is not None else None

    def path(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / key[:2] / f"{key}.json"

    def settle(self, timeout: float | None = None) -> None:
        """Wait for the folder's scan or prune in flight, if any (it runs in the background)."""
        if self._folder is not None:
            self._folder.wait(timeout)

    def get(self, key: str) -> dict | None:
        if not self.enabled:
            return None
        remembered = self._memory.get(key)
        if remembered is not None:
            return remembered
        path = self.path(key)
        if path is None or not path.exists():
            return None
        try:
            if path.stat().st_size > _ENTRY_MAX_BYTES:
                log.warning("cache_file_unreadable: ignoring %s (larger than any reply kept)", path)
                return None
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            log.warning("cache_file_unreadable: ignoring %s (%s)", path, exc)
            return None
        if not isinstance(entry, dict) or entry.get("version") != CACHE_FORMAT_VERSION \
                or not isinstance(entry.get("text"), str) or len(entry["text"]) > ENTRY_MAX_CHARS:
            log.warning("cache_file_unreadable: ignoring %s (unexpected content)", path)
            return None
        try:
            os.utime(path)  # read now: the last to go when the folder is pruned
        except OSError:
            pass
        self._memory.put(key, entry)
        return entry

    def put(self, key: str, entry: dict) -> None:
        """Keep a reply; one whose text is over ENTRY_MAX_CHARS is never kept (the client refuses it before)."""
        if not self.enabled:
            return
        if len(str(entry.get("text", ""))) > ENTRY_MAX_CHARS:
            log.warning("llm_cache_refused: a reply of %d characters is over %d; not cached", len(entry["text"]),
                        ENTRY_MAX_CHARS)
            return
        entry = {"version": CACHE_FORMAT_VERSION, "model": self.model, **entry}
        self._memory.put(key, entry)
        path = self.path(key)
        if path is None:
            return
        data = json.dumps(entry, ensure_ascii=False).encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if self._folder is not None:
            self._folder.wrote(len(data), self.disk_bytes)
