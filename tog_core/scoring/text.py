"""Text normalisation for the cheap scorers and the LLM-free policy: words, stems, stop words, first sentences.
A question's structure (which words each hop is about, what it asks for) is read in scoring/question.py.

Any script: a word is a run of Unicode letters and digits (an underscore separates words, as in
`place_of_death`); a run of a script written without spaces (Chinese, Japanese, Korean) becomes its characters
and character pairs. Each text's language is guessed by which stop-word list it hits most (English or French
here), and that language's stop words and stemmer apply: English keeps a small suffix stripper that lets
"director"/"directed" and "writer"/"written" meet, other languages use the Snowball stemmer (PyStemmer). No model, no
download. The word lists are data: one file per language in scoring/languages/ (its README.md says how to add one).
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from tog_core.scoring import rules
from tog_core.scoring.languages import TABLES

_WORD = re.compile(r"[^\W_]+")
# runs of a script written without spaces (Chinese, Japanese, Korean): titles and words may start anywhere there
UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_SPACED = TABLES.spaced  # the languages written with spaces, English (the fallback) first
# the generic nouns of every language ("film", "movies"): stop words for matching (film_nouns_stop) that still say
# what a question asks for (film_nouns_type)
_GENERIC_NOUNS = frozenset(w for t in _SPACED.values() for w in t.generic_nouns)
# the characters no pair of a script without spaces may contain (bm25s's Chinese list: 的 了 是 谁 哪 ...)
_CJK_STOP = frozenset(w for t in TABLES.unspaced.values() for w in t.stop_words)
# language -> (stop words, Snowball stemmer name or None for the English suffix stripper); built by _build_stop
LANGUAGES: dict[str, tuple[frozenset[str], str | None]] = {}


def _build_stop() -> None:
    """The stop lists, with the word-list rules that are on (scoring/rules.py): a language's stop words, its extra
    stop words (fr_stop_extra) and its generic nouns (film_nouns_stop)."""
    LANGUAGES.clear()
    for code, t in _SPACED.items():
        stop = (t.stop_words | (t.extra_stop_words if rules.on("fr_stop_extra") else frozenset())
                | (t.generic_nouns if rules.on("film_nouns_stop") else frozenset()))
        LANGUAGES[code] = (stop, t.stemmer)


_build_stop()


@lru_cache(maxsize=100_000)  # words repeat: a hub's 200,000 relation texts share a few thousand
def _stem(tok: str) -> str:
    """A tiny suffix stripper so "directed"/"director"/"directs", "release"/"released" and
    "writer"/"written" meet; no dictionary, no download."""
    if tok.isdigit():  # no suffix to strip (a hub's texts hold thousands of numbers: "ledger 1234")
        return tok[:-1] if len(tok) > 4 and tok[-1] == tok[-2] else tok
    for suf in ("ings", "ing", "ers", "er", "ed", "es", "en", "s", "ion", "or", "e"):
        if len(tok) > len(suf) + 3 and tok.endswith(suf):
            tok = tok[: -len(suf)]
            break
    if len(tok) > 4 and tok[-1] == tok[-2] and tok[-1] not in "aeiouls":  # "writt" -> "writ", not "fall" -> "fal"
        tok = tok[:-1]
    return tok


def language_of(text: str) -> str:
    """The language of a text (see `language`)."""
    return language([w.lower() for w in _WORD.findall(text)])


def language(words: list[str]) -> str:
    """The language with the most distinct stop words among the words (English on a tie). Distinct, and not single
    letters: "X 's son 's son" repeats the French "son" (his) and "s" (of "s'") but is English by "what is the"."""
    best, hits = "en", -1
    distinct = set(words)
    for lang, (stop, _) in LANGUAGES.items():
        n = len(distinct & _long_words(stop))
        if n > hits:
            best, hits = lang, n
    return best


@lru_cache(maxsize=16)
def _long_words(stop: frozenset[str]) -> frozenset[str]:
    """The stop words longer than one letter (language() does not count single letters)."""
    return frozenset(w for w in stop if len(w) > 1)


@lru_cache(maxsize=8)
def _snowball(name: str):  # noqa: ANN202
    import Stemmer

    return Stemmer.Stemmer(name)


def _cjk_tokens(run: str) -> list[str]:
    chars = [c for c in run if c not in _CJK_STOP]
    return chars + [a + b for a, b in zip(run, run[1:]) if a not in _CJK_STOP and b not in _CJK_STOP]


# every ASCII character that is not a letter or digit, as a space: _WORD's words of an ASCII text, split by str.split
_ASCII_GAPS = str.maketrans({chr(i): (chr(i) if chr(i).isalnum() else " ") for i in range(128)})


def read_tokens(text: str, lang: str | None = None) -> tuple[str, ...]:
    """tokens(), read afresh (not remembered): for a corpus read once, such as a hub's relation texts. `lang`: read
    as that language (one of LANGUAGES) instead of the one guessed from the text."""
    out: list[str] = []
    if text.isascii():  # no script without spaces; an ASCII word is a run of a-z 0-9 once lower-cased
        words = text.lower().translate(_ASCII_GAPS).split()
    else:
        for run in UNSPACED.findall(text):
            out += _cjk_tokens(run)
        words = [w.lower() for w in _WORD.findall(UNSPACED.sub(" ", text))]
    stop, stemmer = LANGUAGES[lang if lang in LANGUAGES else language(words)]
    kept = [w for w in words if w not in stop]
    out += _snowball(stemmer).stemWords(kept) if stemmer else map(_stem, kept)
    return tuple(out)


_tokens = lru_cache(maxsize=200_000)(read_tokens)


def tokens_in(text: str, lang: str) -> list[str]:
    """tokens() of `text` read as language `lang` (not guessed from it): a topic's title or the asked noun read the
    way the question they come from is ("Lucien" in a French question is stemmed as French)."""
    return list(_tokens(text, lang))


# every language's articles (scoring/languages/*.toml)
ARTICLES = frozenset(w for t in TABLES.spaced.values() for w in t.articles)


def without_article(text: str) -> str:
    """`text` without a leading article of any language ("the grave" -> "grave", "l'horloge" stays whole)."""
    words = text.strip().split(maxsplit=1)
    return words[1] if len(words) == 2 and words[0].lower() in ARTICLES else text.strip()


def tokens(text: str) -> list[str]:
    """Content words of a text, stemmed: stop words of its language out; characters and character pairs for
    scripts without spaces."""
    return list(_tokens(text))


_CJK_STOP_MARK = re.compile(r"[。！？]")
_FULL_STOP = re.compile(r"[.!?](?=\s|$)")


def words_as_written(question: str) -> dict[str, str]:
    """Each stemmed word of the question (`tokens`: "fath", "ment") -> the word as the question writes it ("father",
    "mentor"); a possessive reads as its word ("Tim's"). What a person is shown instead of a stem."""
    out: dict[str, str] = {}
    for raw in question.split():
        word = raw.strip(".,;:!?\"'()[]{}«»“”‘’")
        for stem in tokens(word):
            out.setdefault(stem, word)
    return out


def first_sentence(text: str, limit: int = 300) -> str:
    """The first sentence of a text, at most `limit` characters: up to a CJK full stop, or to the first . ! ?
    followed by a space after 20 characters (so "Mr. Fezziwig is ..." is not cut at "Mr.")."""
    text = (text or "").strip()
    ends = [m.end() for m in (_CJK_STOP_MARK.search(text), _FULL_STOP.search(text, 20)) if m]
    return text[: min(ends)][:limit] if ends else text[:limit]


def without_words(text: str, drop: Counter[str]) -> str:
    """`text` with the first occurrences of the given stemmed content words removed (as often as counted)."""
    left = Counter(drop)
    kept = []
    stop, stemmer = LANGUAGES[language([w.lower() for w in _WORD.findall(text)])]
    for m in _WORD.finditer(text):
        low = m.group(0).lower()
        stem = None if low in stop else (_snowball(stemmer).stemWord(low) if stemmer else _stem(low))
        if stem is not None and left[stem] > 0:
            left[stem] -= 1
            continue
        kept.append(m.group(0))
    return " ".join(kept)


@rules.on_change
def _rules_changed() -> None:
    """The stop lists rebuilt and every cache that read a word list cleared (bench/rule_table.py)."""
    _build_stop()
    _tokens.cache_clear()
