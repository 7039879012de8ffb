"""Store URLs never show their password: `redact` (graphrag/pg_common), the one function every message, log line
and output that names a store goes through, masks passwords holding any reserved character (`# ? @ : / % [ ] ! $
& ' ( ) * + , ; =` and spaces), percent-encoded or not, in URLs (userinfo or `?password=`) and in libpq key=value
strings; `store list --json` and the "graph not in the store" error show the host but never the password.
"""
from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from tog_core.graphrag.pg_common import redact, scrub

RESERVED = list("#?@:/%[]!$&'()*+,;=") + [" "]


def _pw(c: str) -> str:
    return f"Pw{c}Secret{c}Tail"


def _forms(c: str) -> dict[str, str]:
    pw = _pw(c)
    kv_quoted = pw.replace("\\", "\\\\").replace("'", "\\'")
    return {
        "userinfo raw": f"postgresql://tog:{pw}@db.example:5432/tog",
        "userinfo encoded": f"postgresql://tog:{quote(pw, safe='')}@db.example:5432/tog",
        "userinfo raw, query": f"postgres://tog:{pw}@db.example/tog?sslmode=disable&application_name=x",
        "query raw": f"postgresql://tog@db.example:5432/tog?password={pw}&sslmode=disable",
        "query encoded": f"postgresql://tog@db.example:5432/tog?sslmode=disable&password={quote(pw, safe='')}",
        "key=value quoted": f"host=db.example port=5432 password='{kv_quoted}' dbname=tog",
        "key=value raw": f"host=db.example password={pw} dbname=tog",
        "key=value spaced": f"host=db.example password = {pw}",
    }


@pytest.mark.parametrize("c", RESERVED, ids=[f"{ord(c):02x}" for c in RESERVED])
def test_redact_masks_a_password_with_every_reserved_character(c):
    for form, url in _forms(c).items():
        shown = redact(url)
        for part in ("Secret", "Tail", quote(_pw(c), safe="")):
            assert part not in shown, (form, url, shown)
        assert "***" in shown, (form, shown)
        if form in ("userinfo encoded", "query encoded", "key=value quoted"):  # what libpq reads as meant
            assert "db.example" in shown and "tog" in shown, (form, shown)


@pytest.mark.parametrize("c", RESERVED, ids=[f"{ord(c):02x}" for c in RESERVED])
def test_scrub_removes_the_password_from_a_driver_message(c):
    for form, url in _forms(c).items():
        msg = f'connection to "{url}" failed: password "{_pw(c)}" ({quote(_pw(c), safe="")}) rejected'
        out = scrub(msg, url)
        assert "Secret" not in out and "Tail" not in out, (form, out)


def test_redact_keeps_what_has_no_password():
    for url in ("postgresql://tog@db.example:5432/tog", "postgresql:///tog?host=/tmp/sock", "host=db dbname=tog",
                "postgresql://db.example/tog?sslmode=require"):
        assert redact(url) == url
    assert redact("") == ""


# ------------------------------------------------------------------------------------- against a real server



@pytest.mark.parametrize("encoded", [False, True])
def test_store_list_and_missing_graph_error_never_show_the_password(pg_url, capsys, encoded):
    from tog_core.cli.main import main

    pw = "Pw#Secret?Tail:[]!$&'()*+,;=" if not encoded else quote("Pw#Secret?@/% Tail", safe="")
    url = pg_url.replace("postgresql://postgres@", f"postgresql://postgres:{pw}@")  # trust auth: libpq connects
    assert main(["store", "list", "--store", url, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "Secret" not in out["store"] and "Tail" not in out["store"] and "127.0.0.1" in out["store"]
    assert main(["inspect", "no-such-graph", "--store", url]) == 2
    err = capsys.readouterr().err
    assert "is not in the store" in err and "Secret" not in err and "Tail" not in err and "***" in err
