"""A TCP listener on 127.0.0.1 that counts the connections made to it: where a typed address must never be reached
(tests/test_app_hardening.py, tests/test_shared_app_bases.py)."""
from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def counting_listener() -> Iterator[tuple[int, list[bool]]]:
    """(its port, a list that gets one item per connection accepted); closed at the end of the block."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    calls: list[bool] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            calls.append(True)
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1], calls
    finally:
        stop.set()
        listener.close()
