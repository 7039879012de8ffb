"""The HTTP side of the fake OpenAI server: a threading HTTP server bound to 127.0.0.1 and the request handler
that routes /v1/chat/completions (JSON or server-sent events), /v1/embeddings and /v1/models.

The handler keeps no state of its own: it asks its server's ``owner`` (a FakeOpenAIServer, see
:class:`Owner`) for the reply to each request and reports what it saw back to it.
"""
from __future__ import annotations

import base64
import json
import socket
import struct
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from tog_core.testing.wire import (TOKEN_RE, Handler, Reply, content_text, count_tokens, error_body,
                                   hashed_embedding)

__all__ = ["LoopbackHTTPServer", "OpenAIRequestHandler", "Owner", "MAX_BODY_BYTES", "BREAK_PAUSE_S"]

MAX_BODY_BYTES = 8 * 1024 * 1024
BREAK_PAUSE_S = 0.1  # pause between the last chunk and the dropped connection of a broken stream


class Owner(Protocol):
    """What the handler needs from the object that owns the server (FakeOpenAIServer)."""

    handler: Handler
    latency_s: float
    models: list[str]
    embedding_dim: int
    _stopping: threading.Event

    def _enter(self) -> bool: ...
    def _leave(self) -> None: ...
    def _record(self, body: dict, headers: Any) -> None: ...
    def _record_embedding(self, body: dict, headers: Any = None) -> None: ...
    def _record_error(self, exc: BaseException) -> None: ...
    def _next_id(self) -> int: ...


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: Owner):
        self.owner = owner
        super().__init__(("127.0.0.1", 0), OpenAIRequestHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up early (timeout tests do that on purpose) is not an error."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class OpenAIRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LoopbackHTTPServer
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
            self._send_json(404, error_body(f"no route GET {path}", "not_found"))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        owner = self.server.owner
        if not owner._enter():
            self._drain_body()
            self._send_json(503, error_body("fake server is at max_in_flight", "overloaded"))
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
                self._send_json(404, error_body(f"no route POST {path}", "not_found"))
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
            self._send_json(413, error_body("request body too large", "too_large"))
            return None
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, error_body(f"invalid JSON body: {exc}", "invalid_request_error"))
            return None
        if not isinstance(body, dict):
            self._send_json(400, error_body("body must be a JSON object", "invalid_request_error"))
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
            self._send_json(500, error_body(f"fake server handler raised: {detail}", "server_error"))
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
            self._send_json(reply.status, error_body(message, kind), reply.headers)
            return
        model = str(body.get("model", "fake-model"))
        prompt_tokens = reply.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = sum(count_tokens(content_text(m.get("content")))
                                for m in body.get("messages") or [])
        completion_tokens = reply.completion_tokens
        if completion_tokens is None:
            completion_tokens = count_tokens(reply.text)
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
            for n, piece in enumerate(TOKEN_RE.findall(reply.text)):
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
            self._send_json(400, error_body("input must be a string or a list of strings "
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
        tokens = sum(count_tokens(t) for t in inputs)
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model", "fake"),
                              "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
