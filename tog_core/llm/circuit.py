"""A circuit breaker per run, and the one line that names a provider failure.

A provider that accepts a request and never answers costs each call its whole deadline (1.5 x 20 s by default), and
a run makes up to 2·N·D + D + 1 calls one stage after another: 17 calls, over five minutes a question. A provider
that refuses the key, fails with 5xx after every retry or cannot be reached fails every later call the same way.
So after the first call of a run that failed for a reason that is the provider's, not the prompt's (timeout, server
error, cannot connect, auth, no such model or path: HTTP 404), the :class:`Circuit` opens and every later call of
the run raises at once with ``circuit open: …``; the caller falls back by name as for any failed call, and the
fallback's detail says why. One failed call is enough: it has already used its retries (a timeout its whole
deadline), and measured at a hung loopback listener a second one only doubles the cost
(tests/test_provider_failures.py counts the calls). Rate limiting (the provider is up, only busy), a bad request and
an unreadable reply (a prompt's, not the provider's) never open it.

Each client view is its own circuit: the CLI makes one client per run, the app one view per session and rerun
(``LLMClient.for_session``), so a run starts with a closed circuit. Calls in flight when it opens end on their own
deadlines (the same window as the call that opened it).

:func:`failure_line` is the one line a front door prints: the kind in plain words, the model and the API base,
never the key.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from tog_core.errors import public_url
from tog_core.llm.errors import LLMError

__all__ = ["OPENS_ON", "Circuit", "Tripped", "failure_line", "failure_record", "KIND_WORDS"]

OPENS_ON = ("timeout", "server", "connection", "auth", "model")

# a failure kind in the words a person reads first
KIND_WORDS = {"timeout": "timeout", "server": "server error", "connection": "cannot connect", "auth": "auth",
              "model": "no such model or path", "rate_limit": "rate limited", "bad_request": "request rejected",
              "bad_response": "unreadable reply"}
_WHY = {"timeout": "provider timed out", "server": "provider failed with a server error",
        "connection": "provider cannot be reached", "auth": "provider rejected the key",
        "model": "provider has no such model or path"}


@dataclass(frozen=True, kw_only=True)
class Tripped:
    """What opened the circuit: the failure's kind and HTTP status."""

    kind: str
    status: int | None = None
    first: str = ""  # what the failed call said (its first sentence, keys already scrubbed)


def _first_part(message: str) -> str:
    """An LLMError's message without the model prefix and the Detail: "no reply within 20s a try ..."."""
    return " ".join(message.split(" — ", 1)[-1].split(". Detail:", 1)[0].split())[:200]


class Circuit:
    """Closed until :meth:`trip` is told of a failure in :data:`OPENS_ON`; then :meth:`check` raises for every call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.tripped: Tripped | None = None
        self.first_failure: LLMError | None = None  # the run's first failed call, whatever its kind
        self.refused = 0  # calls not made because the circuit was open

    def record(self, err: LLMError) -> None:
        """A call failed (after its retries): keep the first failure; open on a provider's failure."""
        with self._lock:
            if self.first_failure is None:
                self.first_failure = err
            if self.tripped is None and self._opens(err):
                self.tripped = Tripped(kind=err.kind, status=err.status, first=_first_part(str(err)))

    @staticmethod
    def _opens(err: LLMError) -> bool:
        """A provider's failure; "auth" only when the provider said so (401/403): a key missing here was never
        sent, costs nothing, and may be set before the next call (it is read at call time)."""
        if err.kind not in OPENS_ON or getattr(err, "circuit_open", False):
            return False
        return err.kind != "auth" or err.status is not None

    def check(self, model: str) -> None:
        """LLMError (kind of the failure that opened it, ``circuit_open`` set) when the circuit is open."""
        with self._lock:
            tripped = self.tripped
            if tripped is None:
                return
            self.refused += 1
        err = LLMError(tripped.kind, f"{model}: circuit open: {_WHY[tripped.kind]} earlier in this run "
                                     f"({tripped.first}); not called again until the next run", model=model,
                       status=tripped.status, attempts=0)
        err.circuit_open = True  # type: ignore[attr-defined]
        raise err


def failure_record(llm: object) -> dict | None:
    """What a trace records of a run's provider failure (None when every call went through): kind, status, model,
    API base (public part), how many calls the open circuit refused, and the one line to print."""
    circuit = getattr(llm, "circuit", None)
    err = getattr(circuit, "first_failure", None)
    if circuit is None or err is None:
        return None
    api_base = getattr(getattr(llm, "config", None), "api_base", None)
    return {"kind": err.kind, "status": err.status, "model": err.model, "api_base": public_url(api_base),
            "circuit_open": circuit.tripped is not None, "refused_calls": circuit.refused,
            "message": failure_line(err, api_base=api_base)}


def failure_line(err: LLMError, *, api_base: str | None) -> str:
    """One line naming a provider failure: kind in words (HTTP status), model, API base, and the fix. The message of
    an LLMError is scrubbed of keys by the client; only its first sentence is kept here."""
    kind = KIND_WORDS.get(err.kind, err.kind) + (f" (HTTP {err.status})" if err.status else "")
    where = public_url(api_base) or "the provider's default endpoint"
    return f"LLM provider failed: {kind} — model {err.model} at {where}: {_first_part(str(err))}"[:500]
