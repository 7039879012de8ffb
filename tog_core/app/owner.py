"""Whose runs these are: on a deployment several people share, each person's runs kept apart (`TOG_RUN_OWNER`).

Unset (the default), the app has no accounts and every run is everyone's (docs/operations.md). Set, each request
must say who is asking, and the run store the pages get lists, opens, resumes, exports and deletes only that
person's runs and records new ones as theirs (runs/files.RunStore.for_owner, runs/postgres.PgRunStore.for_user):

* `TOG_RUN_OWNER=header:X-Forwarded-User` — the header an authenticating proxy in front of the app sets (oauth2-proxy,
  a corporate gateway). Only safe when nobody can reach the app but through that proxy: a header is whatever the
  client sends;
* `TOG_RUN_OWNER=st.user` — Streamlit's own sign-in (`[auth]` in .streamlit/secrets.toml, `st.login`): the signed-in
  person's e-mail when the provider says it verified it (`email_verified` true), else the provider's issuer and the
  person's subject id there (`signed_in_person`).

A request that names nobody gets no run store at all (`OwnerUnknown`, said on the page): falling back to the shared
runs would show everyone's questions to whoever reached the app around the proxy. Streamlit-free: explorer/ui.py
passes the request's headers and `st.user`.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tog_core.errors import UsageError

log = logging.getLogger(__name__)

SETTING = "TOG_RUN_OWNER"
OWNER_MAX = 256  # characters of an identity kept (a longer header is refused, not cut: two people could share a cut)
OIDC = "oidc"  # how a signed-in person without a verified e-mail is named: "oidc ISSUER SUBJECT"
_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}\Z")  # an HTTP token (RFC 9110 field name)


class OwnerUnknown(UsageError):
    """Runs are kept per person, and this request does not say who is asking: the message says what to fix."""


def owner_setting(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """("header", name) or ("st.user", "") from `TOG_RUN_OWNER`, None when unset. A value of another form is a
    UsageError naming the setting and the two forms it takes (never ignored: the runs would be shared)."""
    raw = (environ.get(SETTING) or "").strip()
    if not raw:
        return None
    if raw == "st.user":
        return ("st.user", "")
    kind, _, name = raw.partition(":")
    if kind.strip().lower() == "header" and _HEADER_NAME.match(name.strip()):
        return ("header", name.strip())
    raise UsageError(f"{SETTING}={raw[:80]!r} is not a setting the app reads: set it to header:NAME (the header an "
                     "authenticating proxy sets, e.g. header:X-Forwarded-User) or to st.user (Streamlit's sign-in), "
                     "or unset it to share every run")


def run_owner(environ: Mapping[str, str], headers: Mapping[str, str | Sequence[str]] | None,
              user: Any = None) -> str | None:
    """Who is asking, as runs are recorded under it; None when runs are not kept per person. `headers`: the request's
    (any case; a list holds every value a header was sent with); `user`: Streamlit's `st.user` (a mapping with
    `is_logged_in`, `email`, `email_verified`, `iss`, `sub`: `signed_in_person`). Raises OwnerUnknown when runs are
    kept per person and the request names nobody, or names someone twice. Its words do not name the header (the
    person reading them reached the app around the proxy): the log does, for the operator."""
    setting = owner_setting(environ)
    if setting is None:
        return None
    kind, name = setting
    if kind == "header":
        want = name.lower()
        sent = [v for k, vs in (headers or {}).items() if str(k).lower() == want
                for v in ([vs] if isinstance(vs, str) else list(vs))]
        value = str(sent[0]) if len(sent) == 1 else ""
        if len(sent) > 1:  # a proxy that appends its header to the client's: which one is the proxy's is unknown
            log.warning("%s: the %s header came %d times in one request; no runs for it", SETTING, name, len(sent))
        elif not value.strip():
            log.warning("%s: a request without the %s header; no runs for it", SETTING, name)
        where = "the sign-in in front of this app"
        fix = "open the app through the address your organisation gave you, where you sign in"
    else:
        value = signed_in_person(user)
        where = "Streamlit's sign-in (st.user)"
        fix = "sign in first (st.login), with [auth] set in .streamlit/secrets.toml"
    value = value.strip()
    most = OWNER_MAX if kind == "header" else len(OIDC) + 2 * OWNER_MAX + 2  # an issuer and a subject of 256 each
    if not value or len(value) > most or any(ord(c) < 32 or ord(c) == 127 for c in value):
        problem = "does not say who is asking" if not value else "names someone the app cannot keep runs under"
        raise OwnerUnknown(f"This app keeps each person's runs apart ({SETTING}), and {where} {problem} for this "
                           f"request, so no run can be listed or saved: {fix}.")
    return value


def signed_in_person(user: Any) -> str:
    """Who `user` (Streamlit's `st.user`) is, as runs are kept under; "" when not signed in, or when its ID token names
    no issuer or subject. The e-mail only when the provider says it verified it (`email_verified` true, as JSON or as
    text) and it reads as one address: an address the provider did not verify, or a provider that sends no such claim
    (some let a person type any address), could be anyone's, and two accounts would share one person's runs.
    Otherwise "oidc ISSUER SUBJECT": a subject id is unique only within its issuer, and the spaces keep it from
    reading as an e-mail address (a verified person's folder is named by the address alone, as before)."""
    if user is None or not _get(user, "is_logged_in"):
        return ""
    email = _get(user, "email")
    verified = _get(user, "email_verified")
    if (verified is True or str(verified).strip().lower() == "true") and _address(email):
        return str(email)
    iss, sub = (str(_get(user, k) or "").strip() for k in ("iss", "sub"))
    if not iss or not sub or any(c.isspace() for c in iss):
        log.warning("%s=st.user: a signed-in person without a verified e-mail whose ID token names no issuer or "
                    "subject; no runs for them", SETTING)
        return ""
    return f"{OIDC} {iss} {sub}"


def _address(email: Any) -> bool:
    """Whether a verified claim reads as one e-mail address: one "@" with text on both sides and no space (so it can
    never read as another person's "oidc ISSUER SUBJECT")."""
    if not isinstance(email, str):
        return False
    local, at, domain = email.partition("@")
    return bool(at and local and domain) and "@" not in domain and not any(c.isspace() for c in email)


def _get(user: Any, key: str) -> Any:
    try:
        return user.get(key) if hasattr(user, "get") else getattr(user, key, None)
    except Exception:  # noqa: BLE001 - st.user raises on attributes its provider does not give
        return None
