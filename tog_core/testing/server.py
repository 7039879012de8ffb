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
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import socket
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAIServer", "Reply", "script", "hashed_embedding", "last_user_message"]

MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_EMBEDDING_DIM = 64
BREAK_PAUSE_S = 0.1  # pause between the last chunk and the dropped connection of a broken stream
_TOKEN_RE = re.compile(r"\S+\s*|\s+")
_WORD_RE = re.compile(r"\w+", re.UNICODE)


@dataclass(kw_only=True)
class Reply:
    """A scripted reply with optional fault injection.

    ``raw_body`` (bytes or str) replaces the JSON body entirely (for malformed-response tests).
    ``break_stream_after`` sends that many content chunks of a streamed reply, then drops the
    connection without finishing the chunked body.
    """

    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw_body: bytes | str | None = None
    break_stream_after: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"


Handler = Callable[[dict], "str | Reply"]


def last_user_message(request: dict) -> str:
    """The text of the last ``user`` message of a chat request ('' when there is none)."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI "content parts"
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def script(rules: Iterable[tuple[str, str | Reply]], default: str | Reply = "") -> Handler:
    """A handler that answers with the first rule whose regex matches the last user message."""
    compiled = [(re.compile(pattern, re.IGNORECASE | re.DOTALL), reply) for pattern, reply in rules]

    def handler(request: dict) -> str | Reply:
        text = last_user_message(request)
        for pattern, reply in compiled:
            if pattern.search(text):
                return reply
        return default

    return handler


def hashed_embedding(text: str, dim: int = DEFAULT_EMBEDDING_DIM) -> list[float]:
    """A deterministic unit vector: signed feature hashing of lower-cased words.

    Texts sharing words get positively correlated vectors, so similarity-based code has something
    meaningful to rank; the empty text maps to a fixed unit vector.
    """
    vec = [0.0] * dim
    words = _WORD_RE.findall(text.lower()) or ["<empty>"]
    for word in words:
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        sign = 1.0 if digest[4] & 1 else -1.0
        vec[index] += sign
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def _count_tokens(text: str) -> int:
    return len(_TOKEN_RE.findall(text))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: FakeOpenAIServer):
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _RequestHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up early (timeout tests do that on purpose) is not an error."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 30  # idle keep-alive connections are closed after this many seconds

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return  # quiet: tests read ``requests`` instead

    # --- routing -----------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                    for m in self.server.owner.models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, _error_body(f"no route GET {path}", "not_found"))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        owner = self.server.owner
        if not owner._enter():
            self._drain_body()
            self._send_json(503, _error_body("fake server is at max_in_flight", "overloaded"))
            return
        try:
            path = self.path.split("?", 1)[0].rstrip("/")
            body = self._read_json()
            if body is None:
                return
            if path in ("/v1/chat/completions", "/chat/completions"):
                owner._record(body, self.headers)
                self._chat(body)
            elif path in ("/v1/embeddings", "/embeddings"):
                owner._record_embedding(body, self.headers)
                self._embeddings(body)
            else:
                self._send_json(404, _error_body(f"no route POST {path}", "not_found"))
        finally:
            owner._leave()

    # --- helpers -----------------------------------------------------------------------------
    def _drain_body(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if 0 < length <= MAX_BODY_BYTES:
            self.rfile.read(length)

    def _read_json(self) -> dict | None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            self._send_json(413, _error_body("request body too large", "too_large"))
            return None
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, _error_body(f"invalid JSON body: {exc}", "invalid_request_error"))
            return None
        if not isinstance(body, dict):
            self._send_json(400, _error_body("body must be a JSON object", "invalid_request_error"))
            return None
        return body

    def _send_bytes(self, status: int, payload: bytes, headers: dict[str, str] | None = None,
                    content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(obj).encode("utf-8"), headers)

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n")
        self.wfile.flush()

    # --- endpoints ---------------------------------------------------------------------------
    def _chat(self, body: dict) -> None:
        owner = self.server.owner
        try:
            result = owner.handler(body)
        except Exception as exc:  # a bug in a test's handler: report it loudly, as a 500
            owner._record_error(exc)
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self._send_json(500, _error_body(f"fake server handler raised: {detail}", "server_error"))
            return
        reply = result if isinstance(result, Reply) else Reply(text=str(result))
        total_delay = owner.latency_s + reply.delay_s
        if total_delay > 0 and owner._stopping.wait(total_delay):
            self.close_connection = True
            return  # server is shutting down: abandon the request
        if reply.raw_body is not None:
            raw = reply.raw_body.encode("utf-8") if isinstance(reply.raw_body, str) else reply.raw_body
            self._send_bytes(reply.status, raw, reply.headers)
            return
        if reply.status >= 400:
            kind = "rate_limit_exceeded" if reply.status == 429 else "server_error"
            message = reply.text or f"injected HTTP {reply.status}"
            self._send_json(reply.status, _error_body(message, kind), reply.headers)
            return
        model = str(body.get("model", "fake-model"))
        prompt_tokens = reply.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = sum(_count_tokens(_content_text(m.get("content")))
                                for m in body.get("messages") or [])
        completion_tokens = reply.completion_tokens
        if completion_tokens is None:
            completion_tokens = _count_tokens(reply.text)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        completion_id = f"chatcmpl-fake-{owner._next_id()}"
        if body.get("stream"):
            self._stream(body, reply, model, completion_id, usage)
            return
        payload = {
            "id": completion_id, "object": "chat.completion", "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                         "message": {"role": "assistant", "content": reply.text}}],
            "usage": usage,
        }
        self._send_json(reply.status, payload, reply.headers)

    def _stream(self, body: dict, reply: Reply, model: str, completion_id: str,
                usage: dict) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        created = int(time.time())

        def event(choices: list[dict], extra: dict | None = None) -> bytes:
            chunk = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                     "model": model, "choices": choices, **(extra or {})}
            return b"data: " + json.dumps(chunk).encode("utf-8") + b"\n\n"

        try:
            self._write_chunk(event([{"index": 0, "delta": {"role": "assistant", "content": ""},
                                      "finish_reason": None}]))
            for n, piece in enumerate(_TOKEN_RE.findall(reply.text)):
                if reply.break_stream_after is not None and n >= reply.break_stream_after:
                    # let the client consume what was sent before the connection drops
                    self.server.owner._stopping.wait(BREAK_PAUSE_S)
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self._write_chunk(event([{"index": 0, "delta": {"content": piece},
                                          "finish_reason": None}]))
            self._write_chunk(event([{"index": 0, "delta": {},
                                      "finish_reason": reply.finish_reason}]))
            if (body.get("stream_options") or {}).get("include_usage"):
                self._write_chunk(event([], {"usage": usage}))
            self._write_chunk(b"data: [DONE]\n\n")
            self._write_chunk(b"")  # terminating zero-length chunk
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _embeddings(self, body: dict) -> None:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            self._send_json(400, _error_body("input must be a string or a list of strings "
                                             "(token-id inputs are not supported)",
                                             "invalid_request_error"))
            return
        dim = int(body.get("dimensions") or self.server.owner.embedding_dim)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(inputs):
            vector = hashed_embedding(text, dim)
            value: Any = vector
            if as_base64:
                value = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode("ascii")
            data.append({"object": "embedding", "index": index, "embedding": value})
        tokens = sum(_count_tokens(t) for t in inputs)
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model", "fake"),
                              "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


def _error_body(message: str, kind: str) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


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
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        if self._server is not None:
            raise RuntimeError("FakeOpenAIServer already started")
        self._stopping.clear()
        self._server = _Server(self)
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
