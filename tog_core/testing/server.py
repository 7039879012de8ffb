"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 for tests, benchmarks and demos.

It speaks just enough of the OpenAI wire format for LiteLLM's own client code to run end to end:

* ``POST /v1/chat/completions`` — plain JSON or ``stream: true`` server-sent events (with a final
  usage chunk when ``stream_options.include_usage`` is set);
* ``POST /v1/embeddings`` — deterministic hashed bag-of-words vectors (float list or base64);
* ``GET /v1/models`` — one model entry per name in ``models``.

The reply to a chat request comes from ``handler(request_json)``: a string is the assistant's text;
a :class:`Reply` injects faults (status code, headers such as ``Retry-After``, a delay, a raw body,
a stream that breaks half way). Only the standard library is used. The server runs in a background
thread, records every request, measures peak concurrency, and stops cleanly on ``close()``.
The wire format lives in ``testing/wire.py`` and the HTTP handler in ``testing/handler.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from tog_core.testing.handler import LoopbackHTTPServer
from tog_core.testing.wire import DEFAULT_EMBEDDING_DIM, Handler, Reply, hashed_embedding, last_user_message, script

__all__ = ["FakeOpenAIServer", "Reply", "script", "hashed_embedding", "last_user_message"]


class FakeOpenAIServer:
    """Context manager running the fake server in a background thread on 127.0.0.1:<free port>.

    Attributes: ``base_url`` (``http://127.0.0.1:PORT/v1``), ``requests`` (chat request bodies in
    arrival order), ``embedding_requests``, ``auth_headers``, ``max_concurrent`` (peak number of
    POST requests in flight), ``handler_errors`` (exceptions raised by the handler).
    """

    def __init__(self, handler: Handler | None = None, *, latency_s: float = 0.0,
                 models: Iterable[str] = ("test-model",), embedding_dim: int = DEFAULT_EMBEDDING_DIM,
                 max_in_flight: int = 256):
        self.handler: Handler = handler or (lambda request: "")
        self.latency_s = latency_s
        self.models = list(models)
        self.embedding_dim = embedding_dim
        self.max_in_flight = max_in_flight
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._requests: list[dict] = []
        self._embedding_requests: list[dict] = []
        self._embedding_auth_headers: list[str | None] = []
        self._auth_headers: list[str | None] = []
        self._handler_errors: list[BaseException] = []
        self._in_flight = 0
        self._max_concurrent = 0
        self._ids = 0
        self._server: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        if self._server is not None:
            raise RuntimeError("FakeOpenAIServer already started")
        self._stopping.clear()
        self._server = LoopbackHTTPServer(self)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name=f"fake-openai-{self.port}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- public views ------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeOpenAIServer is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict]:
        with self._lock:
            return list(self._requests)

    @property
    def embedding_requests(self) -> list[dict]:
        with self._lock:
            return list(self._embedding_requests)

    @property
    def auth_headers(self) -> list[str | None]:
        with self._lock:
            return list(self._auth_headers)

    @property
    def handler_errors(self) -> list[BaseException]:
        with self._lock:
            return list(self._handler_errors)

    @property
    def max_concurrent(self) -> int:
        with self._lock:
            return self._max_concurrent

    def reset(self) -> None:
        """Forget recorded requests and the concurrency peak."""
        with self._lock:
            self._requests.clear()
            self._embedding_requests.clear()
            self._embedding_auth_headers.clear()
            self._auth_headers.clear()
            self._handler_errors.clear()
            self._max_concurrent = self._in_flight

    # --- internal bookkeeping (called from handler threads) ----------------------------------
    def _enter(self) -> bool:
        with self._lock:
            if self._in_flight >= self.max_in_flight:
                return False
            self._in_flight += 1
            self._max_concurrent = max(self._max_concurrent, self._in_flight)
            return True

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _record(self, body: dict, headers: Any) -> None:
        with self._lock:
            self._requests.append(body)
            self._auth_headers.append(headers.get("Authorization") or headers.get("api-key"))

    def _record_embedding(self, body: dict, headers: Any = None) -> None:
        with self._lock:
            self._embedding_requests.append(body)
            if headers is not None:
                self._embedding_auth_headers.append(headers.get("Authorization") or headers.get("api-key"))

    @property
    def embedding_auth_headers(self) -> list[str | None]:
        with self._lock:
            return list(self._embedding_auth_headers)

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self._handler_errors.append(exc)

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids
