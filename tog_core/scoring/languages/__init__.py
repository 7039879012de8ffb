"""The language tables: the words the rule reader reads a question by, one TOML file per language in this folder
(`en.toml`, `fr.toml`, `zh.toml`; README.md here: the format, what reads each table, which rule switches it off).

Read once, at import, into `TABLES`. A file that is not as README.md says (a table missing or unknown, a list where
words are expected, an unknown stemmer) fails the import with a `LanguageTableError` naming the file and the table.
scoring/text.py, scoring/question.py and scoring/hops.py hold the rules that read the tables; nothing here decides
anything.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

import bm25s.stopwords as _bm25s_stop

# the languages the code reads by name: English is the language of a text without stop words (scoring/text.py:
# language), Chinese's particles give the number of hops in a script without spaces (scoring/hops.py: _cjk_hops)
NEEDED = {"en": "spaced", "zh": "unspaced"}
SUFFIXES = "suffixes"  # the stemmer name of scoring/text.py's own suffix stripper (_stem)

# what each kind of table holds, as an error message says it
_KINDS = {
    "name": 'a name in quotes ("" for none)',
    "words": 'words separated by spaces, in quotes ("" when the language has none)',
    "patterns": "a list of regular expressions in quotes ([] when the language has none)",
    "table": "a table of names to words separated by spaces",
}
_COMMON = {"script": "name", "bm25s_stop_words": "name", "stop_words": "words"}
# the tables of a language written with spaces, and of one written without
_SPACED = {**_COMMON, "stemmer": "name", "extra_stop_words": "words", "generic_nouns": "words",
           "question_words": "words", "type_asking": "words", "auxiliaries": "words", "kind_words": "words",
           "framing": "words", "verb_after_asking": "words", "articles": "words", "do_support": "words",
           "copulas": "words", "recurs": "patterns", "time_words": "words", "asks_for": "table",
           "type_words": "table"}
_UNSPACED = {**_COMMON, "possessive": "name", "copula": "name", "question_words": "words"}
_SCHEMAS = {"spaced": _SPACED, "unspaced": _UNSPACED}


class LanguageTableError(ValueError):
    """A language file that is not as languages/README.md says; the message names the file and the table."""


@dataclass(frozen=True, kw_only=True)
class Spaced:
    """A language written with spaces between its words (README.md: each table)."""

    code: str
    stemmer: str | None  # a Snowball algorithm (PyStemmer), or None: scoring/text.py's suffix stripper
    stop_words: frozenset[str]  # bm25s's list (when named) and the file's own
    extra_stop_words: frozenset[str]
    generic_nouns: frozenset[str]
    question_words: frozenset[str]
    type_asking: frozenset[str]
    auxiliaries: frozenset[str]
    kind_words: frozenset[str]
    framing: frozenset[str]
    verb_after_asking: frozenset[str]
    articles: frozenset[str]
    do_support: frozenset[str]
    copulas: frozenset[str]
    recurs: re.Pattern[str] | None  # the file's patterns as one, whole words, any case; None when it has none
    time_words: tuple[str, ...]
    asks_for: dict[str, str]  # question word -> words a type label or its description may contain
    type_words: dict[str, str]  # entity type (upper case) -> the words a question uses for it


@dataclass(frozen=True, kw_only=True)
class Unspaced:
    """A language written without spaces (README.md: each table)."""

    code: str
    stop_words: frozenset[str]  # characters no character pair may contain
    possessive: str
    copula: str
    question_words: tuple[str, ...]  # in the file's order: each is removed in turn, the longest first


@dataclass(frozen=True)
class Tables:
    """Every language file read: the spaced languages with the fallback (English) first, then by code."""

    spaced: dict[str, Spaced]
    unspaced: dict[str, Unspaced]


def parse(where: str, text: str) -> Spaced | Unspaced:
    """One language file's text (`where` names it in errors; the code is its name without `.toml`)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise LanguageTableError(f"{where}: not valid TOML ({e})") from None
    if "script" not in data:
        raise LanguageTableError(f"{where}: missing table 'script': add script = \"spaced\" or \"unspaced\"")
    script = data["script"]
    schema = _SCHEMAS.get(script) if isinstance(script, str) else None
    if schema is None:
        raise LanguageTableError(f"{where}: table 'script' must be \"spaced\" or \"unspaced\" (the language is "
                                 f"written with or without spaces between its words), not {script!r}")
    for key, kind in schema.items():
        if key not in data:
            raise LanguageTableError(f"{where}: missing table {key!r}: add it as {_KINDS[kind]}")
        _check(where, key, kind, data[key])
    unknown = sorted(set(data) - set(schema))
    if unknown:
        raise LanguageTableError(f"{where}: unknown table {unknown[0]!r}; a {script} language has: "
                                 f"{', '.join(schema)}")
    if script == "spaced":
        loose = [w for w in data["kind_words"].split() if w not in data["auxiliaries"].split()]
        if loose:
            raise LanguageTableError(f"{where}: table 'kind_words': {loose[0]!r} must be in 'auxiliaries' too "
                                     "(asked_type skips the kind words on its way to the noun)")
    code = where.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".toml")
    stop = _bm25s(where, data["bm25s_stop_words"]) | frozenset(data["stop_words"].split())
    if script == "unspaced":
        return Unspaced(code=code, stop_words=stop, possessive=data["possessive"], copula=data["copula"],
                        question_words=tuple(data["question_words"].split()))
    words = {key: frozenset(data[key].split()) for key, kind in _SPACED.items()
             if kind == "words" and key not in ("stop_words", "time_words")}
    return Spaced(code=code, stemmer=_stemmer(where, data["stemmer"]), stop_words=stop, **words,
                  recurs=_recurs(where, data["recurs"]), time_words=tuple(data["time_words"].split()),
                  asks_for={k: " ".join(v.split()) for k, v in data["asks_for"].items()},
                  type_words={k: " ".join(v.split()) for k, v in data["type_words"].items()})


def _check(where: str, key: str, kind: str, value: Any) -> None:
    """Raise when a table is not of its kind (or, for words, not lower case: questions are read lower-cased)."""
    ok = {"name": isinstance(value, str), "words": isinstance(value, str),
          "patterns": isinstance(value, list) and all(isinstance(v, str) for v in value),
          "table": isinstance(value, dict) and all(isinstance(v, str) for v in value.values())}[kind]
    if not ok:
        raise LanguageTableError(f"{where}: table {key!r} must be {_KINDS[kind]}, not {type(value).__name__} "
                                 f"{value!r:.60}")
    if kind == "words":
        upper = [w for w in value.split() if w != w.lower()]
        if upper:
            raise LanguageTableError(f"{where}: table {key!r}: {upper[0]!r} must be lower case (questions are "
                                     "read lower-cased)")
    if kind == "table" and key == "type_words":
        lower = [k for k in value if k != k.upper()]
        if lower:
            raise LanguageTableError(f"{where}: table 'type_words': {lower[0]!r} must be an entity type in upper "
                                     f"case ({lower[0].upper()!r}), as a graph's types are compared")
    if kind == "table" and key == "asks_for":
        upper = [k for k in value if k != k.lower()]
        if upper:
            raise LanguageTableError(f"{where}: table 'asks_for': {upper[0]!r} must be lower case (questions are "
                                     "read lower-cased)")


def _bm25s(where: str, name: str) -> frozenset[str]:
    """bm25s's stop list of that name ("french"), or nothing for ""."""
    if not name:
        return frozenset()
    found = getattr(_bm25s_stop, f"STOPWORDS_{name.upper()}", None)
    if found is None:
        known = sorted(n.removeprefix("STOPWORDS_").lower() for n in dir(_bm25s_stop) if n.startswith("STOPWORDS_"))
        raise LanguageTableError(f"{where}: table 'bm25s_stop_words': bm25s has no list {name!r}; choose from: "
                                 f"{', '.join(known)} (or \"\" for none)")
    return frozenset(found)


def _stemmer(where: str, name: str) -> str | None:
    if name == SUFFIXES:
        return None
    import Stemmer

    if name not in Stemmer.algorithms():
        raise LanguageTableError(f"{where}: table 'stemmer': {name!r} is no Snowball stemmer; choose "
                                 f"{SUFFIXES!r} (the English suffix stripper) or one of: "
                                 f"{', '.join(Stemmer.algorithms())}")
    return name


def _recurs(where: str, patterns: list[str]) -> re.Pattern[str] | None:
    for p in patterns:
        try:
            re.compile(p)
        except re.error as e:
            raise LanguageTableError(f"{where}: table 'recurs': {p!r} is no regular expression ({e})") from None
    return re.compile(r"\b(" + "|".join(patterns) + r")\b", re.IGNORECASE) if patterns else None


def load(folder: Traversable) -> Tables:
    """Every `*.toml` file of a folder, checked; the languages the code reads by name (NEEDED) must be there."""
    read = {p.name.removesuffix(".toml"): parse(str(p), p.read_text(encoding="utf-8"))
            for p in sorted(folder.iterdir(), key=lambda p: p.name) if p.name.endswith(".toml")}
    for code, script in NEEDED.items():
        if code not in read or not isinstance(read[code], Spaced if script == "spaced" else Unspaced):
            raise LanguageTableError(f"{folder}: {code}.toml (script = \"{script}\") is needed: the code reads it "
                                     "by name (languages/__init__.py: NEEDED)")
    spaced = {c: t for c, t in read.items() if isinstance(t, Spaced)}
    first = next(iter(NEEDED))  # the fallback language first: language() gives it a tie
    return Tables(spaced={first: spaced[first], **{c: t for c, t in spaced.items() if c != first}},
                  unspaced={c: t for c, t in read.items() if isinstance(t, Unspaced)})


TABLES = load(files(__name__))
