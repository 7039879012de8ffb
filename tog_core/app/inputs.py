"""What a person types into the app's fields, checked before it is used: the longest text each field takes, a model
name, and a project folder (resolved, and kept inside TOG_PROJECT_ROOTS on a shared deployment).

Every refusal is one plain line that names the field and the fix (a ProjectError for the project folder, shown by
the sidebar as "Cannot open this project: …"). None of this imports Streamlit; explorer/ draws the fields with these
limits as their `max_chars`, which the browser enforces and Streamlit applies again to what a browser sends. A value
put in the session by the app itself (the address's ?project=, a saved run's question) is not cut by the widget:
the checks here and the engine's question limit (tog/limits.py) apply to it.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from tog_core.graphrag import project_env
from tog_core.graphrag.errors import ProjectError
from tog_core.tog.limits import MAX_QUESTION_CHARS

__all__ = ["KEY_MAX", "MAX_QUESTION_CHARS", "MODEL_MAX", "NAMES_MAX", "NAME_MAX", "PATH_MAX", "URL_MAX",
           "check_project_root", "model_problem", "project_roots", "resolve_project_path"]

MODEL_MAX = 200  # a LiteLLM model string ("openrouter/meta-llama/llama-3.1-405b-instruct:free" is 50)
NAME_MAX = 200  # an entity's name or a search: the graph's fuzzy search is linear in it (1 MB took 21 s)
NAMES_MAX = 500  # "Why not …?": a few names separated by ;
PATH_MAX = 1_000  # a project folder (Linux allows 4,096, but no project's path is near it)
URL_MAX = 1_000  # an API base or a PostgreSQL store
KEY_MAX = 4_096  # an API key (some providers' tokens run to a few thousand characters)

PROJECT_FIELD = "the GraphRAG project folder"
_MODEL_OK = re.compile(r"[A-Za-z0-9._\-/:@]+")


def model_problem(model: str) -> str | None:
    """Why the sidebar's Model field does not hold a model name (letters, digits and . _ - / : @, at most
    MODEL_MAX characters), else None; empty means the default. Checked before any client is built."""
    typed = (model or "").strip()
    if not typed:
        return None
    fix = "type a LiteLLM model string such as openai/gpt-4.1-mini, or `local`, or `none` (or leave it empty)"
    if len(typed) > MODEL_MAX:
        return f"Model: {len(typed):,} characters is not a model name (at most {MODEL_MAX}): {fix}."
    if not _MODEL_OK.fullmatch(typed):
        bad = list(dict.fromkeys(c for c in typed if not _MODEL_OK.fullmatch(c)))
        said = ", ".join("a space" if c == " " else repr(c) for c in bad[:5]) + (" …" if len(bad) > 5 else "")
        return (f"Model: not a model name; it may hold only letters, digits and . _ - / : @ (it holds {said}): "
                f"{fix}.")
    return None


def project_roots(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The folders projects may be opened from (TOG_PROJECT_ROOTS, os.pathsep-separated, resolved with symlinks
    followed); [] = anywhere. Read at call time. The same list open_project checks every file it reads against
    (links inside the folder leading out of these are refused there: graphrag/project.py)."""
    return list(project_env.project_roots(environ))


def resolve_project_path(path: str, *, base: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """A typed path made absolute: as given (~ expanded, relative to the working folder), else relative to
    `base` (the app's folder) when that exists. Raises ProjectError, naming the field and the fix, for what cannot
    be a folder's path: a NUL character, more than PATH_MAX characters, a path the system cannot resolve (`~` of no
    such user, a name too long). With TOG_PROJECT_ROOTS set (a shared deployment) a path starting with `~` is
    refused whoever it names, the server's own user included: nothing is looked up, so the field cannot tell
    whether an account exists."""
    typed = str(path).strip()
    if "\x00" in typed:
        raise ProjectError(f"{PROJECT_FIELD} holds a NUL character (\\x00), which no path can hold",
                           fix="type the folder's path again, without it")
    if len(typed) > PATH_MAX:
        raise ProjectError(f"{PROJECT_FIELD} is {len(typed):,} characters long; the limit is {PATH_MAX:,}",
                           fix="type the path of the project's folder (its root, or its output folder)")
    roots = project_roots(environ)
    if typed.startswith("~") and roots:
        raise ProjectError(f"{PROJECT_FIELD} starts with ~, which this shared server does not expand",
                           fix="type the full path of a project under " + ", ".join(str(r) for r in roots))
    try:
        p = Path(typed).expanduser()
        if not p.is_absolute() and not _exists(p) and base is not None and _exists(base / p):
            p = base / p
        return p.resolve()
    except (OSError, RuntimeError, ValueError) as err:  # ~ of no such user, a loop of links
        if roots:  # said as any path outside the roots is: nothing learnt about what is there
            raise _outside(typed, roots) from err
        raise ProjectError(f"{PROJECT_FIELD} is not a path this server can read", path=typed,
                           fix="type the full path of the project's folder") from err


def _exists(p: Path) -> bool:
    """Whether `p` exists; False when the system cannot say (a name too long, a folder it may not read)."""
    try:
        return p.exists()
    except OSError:
        return False


def _outside(path: str | Path, roots: list[Path]) -> ProjectError:
    return ProjectError("is outside the folders this server opens projects from", path=str(path),
                        fix="choose a project under " + ", ".join(str(r) for r in roots)
                        + " (the operator's TOG_PROJECT_ROOTS)")


def check_project_root(path: str | Path, *, environ: Mapping[str, str] | None = None) -> None:
    """Raise ProjectError unless `path`, resolved (symlinks followed, `..` applied), is inside an allowed root. The
    message is the same whether or not the path exists, so the field cannot be used to probe the server's files."""
    roots = project_roots(environ)
    if not roots:
        return
    try:
        p: Path | None = Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):  # ~ of no such user, a NUL: outside, said as any other path is
        p = None
    if p is None or not any(p == r or r in p.parents for r in roots):
        raise _outside(path, roots)
