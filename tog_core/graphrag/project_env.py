"""Which variables a project's settings may read, and from where; which files of a project may be read at all. A
project folder is not the server's: its settings.yaml must not be able to read the server's secrets (a PostgreSQL
URL, a cloud key) and send them to an API base of its choosing, or have them written into a trace as its model's
name or API base.

- `${VAR}` in a model's `api_key` resolves from the project's own `.env`, or from the server's environment only for
  a variable the operator allows: `TOG_PROJECT_ENV_VARS` (comma- or space-separated names; default
  `GRAPHRAG_API_KEY`, GraphRAG's own convention) or the usual key variable of a provider GraphRAG itself supports
  (`GRAPHRAG_PROVIDER_KEYS`: `OPENAI_API_KEY` for `openai`, `AZURE_API_KEY`/`AZURE_OPENAI_API_KEY` for `azure`).
  Another provider's variable (`GITHUB_API_KEY` for a project naming `model_provider: github`) is read only when
  the operator lists it: the names are never made from the project's own text. GraphRAG's order holds for those:
  the real environment wins.
- A name like `TOG_*`, `PG*`, `AWS_*`, `*SECRET*`, `*PASSWORD*` is never resolved for a project: not from the
  server's environment, even when listed, nor from the project's `.env` (which may be a copy or a link of the
  server's own env file).
- `${VAR}` anywhere else (model, api_base, api_version, deployment) resolves from the project's `.env` only.
- The `.env` file's own `${VAR}` expansion sees only that file's earlier lines, never the server's environment.
- Files: a project's settings and `.env` are read only when they lie, links followed, in the project's folder
  (`open_inside`); with `TOG_PROJECT_ROOTS` set (`project_roots`), every file read (settings, `.env`, tables) must
  lie in those folders, links followed, checked again on the file actually opened.

Nothing here writes os.environ, and no repr shows a value.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

__all__ = ["PROJECT_ENV_VARS", "DEFAULT_PROJECT_ENV_VARS", "GRAPHRAG_PROVIDER_KEYS", "NEVER_READ", "PROJECT_ROOTS",
           "ProjectEnv", "never_read", "open_inside", "operator_allowed", "project_roots", "provider_key_vars",
           "real_path", "server_may_supply", "within"]

PROJECT_ENV_VARS = "TOG_PROJECT_ENV_VARS"  # the operator's list of server variables a project's api_key may name
DEFAULT_PROJECT_ENV_VARS = ("GRAPHRAG_API_KEY",)
NEVER_READ = "TOG_*, PG*, AWS_*, *SECRET*, *PASSWORD*"  # as said to a person
# the providers GraphRAG itself supports (model_provider openai / azure, its openai_* and azure_openai_* types) and
# the variables LiteLLM reads for them: the only provider keys a project may read without the operator listing them
GRAPHRAG_PROVIDER_KEYS: Mapping[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",), "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY")}
PROJECT_ROOTS = "TOG_PROJECT_ROOTS"  # the operator's folders projects may be opened (and their files read) from
_NEVER = re.compile(r"^(TOG_|PG|AWS_)|SECRET|PASSWORD|PASSWD|DATABASE_URL", re.IGNORECASE)


def never_read(name: str) -> bool:
    """Whether `name` is a server variable no project may read (the server's own settings and secrets)."""
    return bool(_NEVER.search(name))


def operator_allowed(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The names the operator lets a project's api_key read from the server's environment (TOG_PROJECT_ENV_VARS;
    unset: GRAPHRAG_API_KEY; set but empty: none)."""
    raw = environ.get(PROJECT_ENV_VARS)
    if raw is None:
        return DEFAULT_PROJECT_ENV_VARS
    return tuple(n for n in raw.replace(",", " ").split() if n)


def provider_key_vars(provider: str | None) -> tuple[str, ...]:
    """The provider's usual key variables, the ones LiteLLM reads for it ("openai" -> OPENAI_API_KEY). A name to say
    and to look for in the project's .env; the server's environment is read for it only as `server_may_supply`
    allows (a provider GraphRAG supports, or a name the operator lists)."""
    p = (provider or "").strip().lower()
    if not p:
        return ()
    if p in GRAPHRAG_PROVIDER_KEYS:
        return GRAPHRAG_PROVIDER_KEYS[p]
    return (re.sub(r"[^A-Z0-9]", "_", p.upper()) + "_API_KEY",)


def server_may_supply(name: str, environ: Mapping[str, str], *, provider: str | None = None) -> bool:
    """Whether a project's api_key may take `name`'s value from the server's environment `environ`: a name the
    operator lists (TOG_PROJECT_ENV_VARS), or the usual key of the project's provider when GraphRAG supports that
    provider (openai, azure). Never a name made from the project's text alone, never a name like NEVER_READ."""
    if not name or never_read(name):
        return False
    fixed = GRAPHRAG_PROVIDER_KEYS.get((provider or "").strip().lower(), ())
    return name in operator_allowed(environ) or name in fixed


def project_roots(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The folders projects may be opened from (TOG_PROJECT_ROOTS, os.pathsep-separated, resolved with symlinks
    followed); () = anywhere. Read at call time."""
    raw = (os.environ if environ is None else environ).get(PROJECT_ROOTS, "")
    return tuple(Path(r.strip()).expanduser().resolve() for r in raw.split(os.pathsep) if r.strip())


def real_path(path: str | os.PathLike[str]) -> Path | None:
    """`path` with every link followed (whether or not it leads anywhere), None when the system cannot say."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return None


def within(path: Path | None, folders: Iterable[Path]) -> bool:
    """Whether `path` (already real) is one of `folders` or lies under one of them."""
    return path is not None and any(path == f or f in path.parents for f in folders)


def open_inside(path: Path, folders: Sequence[Path]) -> IO[bytes] | None:
    """`path` opened for reading when the file it leads to, links followed, lies in one of `folders` (resolved);
    None when it does not, whether or not that file exists. The file actually opened is checked again (through
    /proc where there is one), so a link swapped in after the check is not followed out. OSError as open's."""
    real = real_path(path)
    if not within(real, folders) or real is None:
        return None
    f = open(real, "rb")  # noqa: SIM115 - returned open, closed by the caller
    try:
        opened = real_path(os.readlink(f"/proc/self/fd/{f.fileno()}"))
    except OSError:  # no /proc: the same file as the real path checked, or refused
        st, now = os.fstat(f.fileno()), os.stat(real)
        opened = real if (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino) else None
    if not within(opened, folders):
        f.close()
        return None
    return f


@dataclass(frozen=True)
class ProjectEnv:
    """What a project's settings may resolve `${VAR}` from: its own `.env` (`own`), and, for a key only, the
    variables of the server's environment (`server`) that `server_may_supply` allows."""

    own: Mapping[str, str] = field(default_factory=dict, repr=False)
    server: Mapping[str, str] = field(default_factory=dict, repr=False)

    def key(self, name: str, *, provider: str | None = None) -> str | None:
        """A key variable's value: the server's when it may supply it (the real environment wins, as in GraphRAG),
        else the project's .env's; None when neither has it, and always for a name like NEVER_READ."""
        if never_read(name):
            return None
        if server_may_supply(name, self.server, provider=provider) and self.server.get(name):
            return self.server[name]
        return self.own.get(name) or None

    def key_readable(self, name: str, *, provider: str | None = None) -> bool:
        """Whether `name` may give a key here: the project's .env defines it, or the server may supply it; never a
        name like NEVER_READ."""
        if never_read(name):
            return False
        return name in self.own or server_may_supply(name, self.server, provider=provider)

    def refusal(self, name: str, where: str, *, provider: str | None = None) -> str:
        """Why `${name}` in `where` gives no key, and the fix, in words (the value is never read, never said)."""
        if never_read(name):
            return (f"{where} names ${{{name}}}: a name like {NEVER_READ} is never read for a project's key, neither "
                    f"from the server's environment nor from the project's .env, so the model has no key — name "
                    f"the key variable otherwise (such as ${{{DEFAULT_PROJECT_ENV_VARS[0]}}}) in the settings and "
                    f"the project's .env")
        return (f"{where} names ${{{name}}}, which is not defined in the project's .env; {self._why(name, provider)}"
                f", so the model has no key — define {name} in the project's .env file, or name an allowed variable "
                f"such as ${{{DEFAULT_PROJECT_ENV_VARS[0]}}}{self._operator_fix(name)}")

    def provider_refusal(self, name: str, provider: str, where: str) -> str:
        """Why a model of `provider` with no api_key gets no key from the server's `name` (its usual variable)."""
        return (f"{where}: model_provider {provider} has no api_key, and its usual variable {name} is not defined in "
                f"the project's .env; {self._why(name, provider)}, so the model has no key — define {name} in the "
                f"project's .env (or give the model api_key: ${{{DEFAULT_PROJECT_ENV_VARS[0]}}})"
                f"{self._operator_fix(name)}")

    def _why(self, name: str, provider: str | None) -> str:
        listed = ", ".join(operator_allowed(self.server)) or "none"
        return (f"a project's key is read from the server's environment only for the variables the operator lists "
                f"in {PROJECT_ENV_VARS} (now: {listed}) and the usual key of a provider GraphRAG supports ("
                + ", ".join(f"{p}: {'/'.join(v)}" for p, v in GRAPHRAG_PROVIDER_KEYS.items()) + ")")

    def _operator_fix(self, name: str) -> str:
        listed = ",".join(dict.fromkeys([*operator_allowed(self.server), name]))
        return f"; or the server's operator allows it: {PROJECT_ENV_VARS}={listed}"
