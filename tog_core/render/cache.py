"""Pictures built once and reused: a small process-wide LRU of page strings, keyed by what the caller says the
picture depends on (run id, steps taken, depth, options). A click in Explore then costs a dictionary look-up,
not a pyvis build. Thread-safe (Streamlit serves sessions from several threads); run ids are unique, so
sessions never see each other's pictures by accident.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any
from collections.abc import Callable, Hashable

MAX_PICTURES = 48  # each page is ~0.7 MB (vis-network is inlined), so at most ~35 MB


class PictureCache:
    def __init__(self, max_entries: int = MAX_PICTURES) -> None:
        self.max_entries = max_entries
        self._pages: OrderedDict[Hashable, str] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.builds = 0

    def get_or_build(self, key: Hashable, build: Callable[[], str]) -> str:
        with self._lock:
            page = self._pages.get(key)
            if page is not None:
                self._pages.move_to_end(key)
                self.hits += 1
                return page
        page = build()  # outside the lock: two sessions may build the same picture once each, never wait
        with self._lock:
            self.builds += 1
            self._pages[key] = page
            self._pages.move_to_end(key)
            while len(self._pages) > self.max_entries:
                self._pages.popitem(last=False)
        return page

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()


PICTURES = PictureCache()


def trace_key(trace: dict[str, Any]) -> tuple:
    """What identifies a trace's pictures cheaply: its run, how far it got, how it ended, its overrides and
    whether it carries evidence text."""
    steps = trace.get("steps") or []
    run = trace.get("run_id") or hashlib.sha1(json.dumps(  # no run id (a hand-made trace): its content names it
        [trace.get(k) for k in ("question", "seeds", "steps", "chains")], default=str).encode()).hexdigest()
    return (run, trace.get("created_at"), len(steps), trace.get("stop_reason"),
            len(trace.get("answer") or ""), sum(len(s.get("overrides") or []) for s in steps),
            len(trace.get("chains") or []), bool(trace.get("evidence")))
