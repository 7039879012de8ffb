"""Which variables a project's settings may read, and from where. A project folder is not the server's: its
settings.yaml must not be able to read the server's secrets (a PostgreSQL URL, a cloud key) and send them to an API
base of its choosing, or have them written into a trace as its model's name or API base.

- `${VAR}` in a model's `api_key` resolves from the project's own `.env`, or from the server's environment only for
  a variable the operator allows: `TOG_PROJECT_ENV_VARS` (comma- or space-separated names; default
  `GRAPHRAG_API_KEY`, GraphRAG's own convention) or the model's provider's usual key variable (`OPENAI_API_KEY` for
  an `openai` model, what LiteLLM would read anyway). GraphRAG's order holds for those: the real environment wins.
- A name like `TOG_*`, `PG*`, `AWS_*`, `*SECRET*`, `*PASSWORD*` is never read from the server's environment, even
  when listed.
- `${VAR}` anywhere else (model, api_base, api_version, deployment) resolves from the project's `.env` only.
- The `.env` file's own `${VAR}` expansion sees only that file's earlier lines, never the server's environment.

Nothing here writes os.environ, and no repr shows a value.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["PROJECT_ENV_VARS", "DEFAULT_PROJECT_ENV_VARS", "NEVER_READ", "ProjectEnv", "never_read",
           "operator_allowed", "provider_key_vars", "server_may_supply"]

PROJECT_ENV_VARS = "TOG_PROJECT_ENV_VARS"  # the operator's list of server variables a project's api_key may name
DEFAULT_PROJECT_ENV_VARS = ("GRAPHRAG_API_KEY",)
NEVER_READ = "TOG_*, PG*, AWS_*, *SECRET*, *PASSWORD*"  # as said to a person
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
    """The provider's usual key variables, the ones LiteLLM reads for it ("openai" -> OPENAI_API_KEY)."""
    p = (provider or "").strip().lower()
    if not p:
        return ()
    if p.startswith("azure"):
        return ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY")
    return (re.sub(r"[^A-Z0-9]", "_", p.upper()) + "_API_KEY",)


def server_may_supply(name: str, environ: Mapping[str, str], *, provider: str | None = None) -> bool:
    """Whether a project's api_key may take `name`'s value from the server's environment `environ`."""
    if not name or never_read(name):
        return False
    return name in operator_allowed(environ) or name in provider_key_vars(provider)


@dataclass(frozen=True)
class ProjectEnv:
    """What a project's settings may resolve `${VAR}` from: its own `.env` (`own`), and, for a key only, the
    variables of the server's environment (`server`) that `server_may_supply` allows."""

    own: Mapping[str, str] = field(default_factory=dict, repr=False)
    server: Mapping[str, str] = field(default_factory=dict, repr=False)

    def key(self, name: str, *, provider: str | None = None) -> str | None:
        """A key variable's value: the server's when it may supply it (the real environment wins, as in GraphRAG),
        else the project's .env's; None when neither has it."""
        if server_may_supply(name, self.server, provider=provider) and self.server.get(name):
            return self.server[name]
        return self.own.get(name) or None

    def key_readable(self, name: str, *, provider: str | None = None) -> bool:
        """Whether `name` may give a key here: the project's .env defines it, or the server may supply it."""
        return name in self.own or server_may_supply(name, self.server, provider=provider)

    def refusal(self, name: str, where: str) -> str:
        """Why `${name}` in `where` gives no key, and the fix, in words (the value is never read, never said)."""
        if never_read(name):
            why = f"a name like {NEVER_READ} is never read from the server's environment"
        else:
            listed = ", ".join(operator_allowed(self.server)) or "none"
            why = (f"a project's key is read from the server's environment only for the variables the operator "
                   f"lists in {PROJECT_ENV_VARS} (now: {listed}) or the provider's usual key variable")
        return (f"{where} names ${{{name}}}, which is not defined in the project's .env; {why}, so the model has no "
                f"key — define {name} in the project's .env file, or name an allowed variable such as "
                f"${{{DEFAULT_PROJECT_ENV_VARS[0]}}}")
