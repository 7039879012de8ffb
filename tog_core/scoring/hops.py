"""How many relations a question chains, read from its wording alone (`expected_hops`): the LLM-free search plans
its depth from it on typed graphs (policy/cheap.py: CheapPolicy.planned_depth). Per-language word lists (data:
scoring/languages/); English, French and Chinese (possessive particles) are read, any other language falls back to
the English lists."""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from tog_core.scoring import rules
from tog_core.scoring.languages import TABLES
from tog_core.scoring.text import _WORD, LANGUAGES, UNSPACED, language
from tog_core.scoring.question import FRAMING, TYPE_ASKING, VERB_AFTER_ASKING, _is_type_word, _relation_word

# per language: a relation named once but walked twice ("the films that share actors with X", "also directed")
RECURS = {code: t.recurs for code, t in TABLES.spaced.items() if t.recurs is not None}
_ZH = TABLES.unspaced["zh"]
_CJK_OF = _ZH.possessive  # Chinese possessive: X的A的B names two relations
_CJK_ASKING = _ZH.question_words  # in order, the longest first
_CJK_CLAUSE = re.compile(r"[，,；;]")


def _cjk_hops(text: str) -> int:
    """Chinese: one relation per possessive 的 inside each clause, one more for a clause without 的 that says
    something besides the question word and the copula 是. (A final 的 read as a particle and a predicate after the
    last noun read as one more relation changed no dev question: docs/rules.md.)"""
    text = text.rstrip(" ？?。.!！")
    hops = 0
    for clause in _CJK_CLAUSE.split(text):
        parts = clause.split(_CJK_OF)
        rest = parts[-1]
        for w in _CJK_ASKING:
            rest = rest.replace(w, "")
        rest = rest.replace(_ZH.copula, "").replace("\x00", "").strip()
        hops += len(parts) - 1
        hops += bool(rest) and len(parts) == 1
    return max(1, hops)


# per language: the auxiliary of a question whose subject comes before its main verb ("where does X 's wife come
# from"), and the copulas of "which T is X 's R" (T is an attribute of X's R, not only the answer's type)
DO_SUPPORT = {code: t.do_support for code, t in TABLES.spaced.items()}
COPULAS = {code: t.copulas for code, t in TABLES.spaced.items()}


def _attribute_after_asking(words: list[str], k: int, lang: str, possessive: bool) -> bool:
    """Whether words[k], right after "what/which", is an attribute asked of what follows the copula, not only the
    answer's type: a word that names no entity type ("nationality", "genres"; not "city", "man", "year"), then a
    copula, then the topic where it takes a possessive ("which nationality is X 's mom") or an article and a noun
    that a content word describes ("what genres are the films written by X"; not "the capital of France", "the
    film Alien", "the bay where")."""
    if not (rules.on("attribute_after_asking") and k >= 1 and words[k - 1] in TYPE_ASKING.get(lang, ())
            and k + 2 < len(words) and words[k + 1] in COPULAS.get(lang, ()) and not _is_type_word(words[k])):
        return False
    if words[k + 2] == "\x00":
        return possessive
    stop = LANGUAGES[lang][0]
    return (words[k + 2] in VERB_AFTER_ASKING.get(lang, ()) and k + 4 < len(words) and words[k + 3] != "\x00"
            and words[k + 4] not in stop and words[k + 4] != "\x00")


@lru_cache(maxsize=16)
def _phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for a graph's relation names of several words, longest first, whole words, any case."""
    alts = "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alts})(?!\w)", re.IGNORECASE)


def _names_the_topic(words: list[str], k: int, stop: frozenset[str], framing: frozenset[str]) -> bool:
    """Whether the run of content words starting at k runs straight into the topic's name (no stop word between)."""
    j = k
    while j < len(words) and words[j] != "\x00" and words[j] not in stop and words[j] not in framing:
        j += 1
    return j < len(words) and words[j] == "\x00"


def expected_hops(question: str, topics: list[str], phrases: Sequence[str] = ()) -> int:
    """How many relations the question chains, read from its wording alone: one per run of content words (stop
    words and the topic's name separate runs; the noun right after a question word is the answer's type, not a
    relation), one more when a relation recurs ("share", "also"). Where the topic takes a possessive ("X 's"), two
    English patterns name one relation more: "which T is X 's R" (T is asked of X's R) and "where does X 's R
    <verb>" (the verb after the possessive's noun). `phrases`: the graph's own names of relations of several words
    ("place of birth"), each read as one word wherever the question says it. In a script without spaces, one per
    possessive particle inside the question. At least 1. A guess: the engine combines it with what the graph
    shows."""
    text = question
    for t in sorted((t for t in topics if t), key=len, reverse=True):
        text = re.sub(re.escape(t), " \x00 ", text, flags=re.IGNORECASE)
    if phrases:  # after the topics (a topic may be called "Cause of Death"); longest first: "place of birth"
        text = _phrase_pattern(tuple(phrases)).sub(lambda m: m.group(0).replace(" ", "_"), text)
    if UNSPACED.search(text) and not _WORD.search(UNSPACED.sub(" ", text).replace("\x00", "")):
        return _cjk_hops(text)
    words = [w.lower() for w in re.findall(r"\x00|[^\W_]+(?:_[^\W_]+)*", text)]
    lang = language(words)
    stop, framing = LANGUAGES[lang][0], FRAMING.get(lang, frozenset())
    runs, in_run, prev = 0, False, ""
    possessive = bool(re.search("\x00\\s*['’]\\s*s\\b", text))  # "X 's ...", not "Aliens" after "Alien"
    run_len, after_possessive = 0, False
    for k, w in enumerate(words):
        # the topic's mark and the "s" of "'s" are single characters
        nxt = words[k + 1] if k + 1 < len(words) else ""
        content = _relation_word(w, prev, lang, nxt)
        if not content and _attribute_after_asking(words, k, lang, possessive):
            content = True  # "which nationality is X 's mom": the mom's nationality, two relations
        if content and not in_run and rules.on("title_before_name") and _names_the_topic(words, k, stop, framing):
            content = False  # "the captain Jules Caradec": a title standing right before the name, not a relation
        if content and in_run and after_possessive and run_len == 1:
            runs += 1  # "where does X 's wife come from": the wife, then where she comes from
        if content and not in_run:  # a run right after "does X 's" (the auxiliary governs this possessive)
            after_possessive = (rules.on("do_support") and possessive and prev == "s" and k >= 3
                                and words[k - 2] == "\x00" and words[k - 3] in DO_SUPPORT.get(lang, ()))
        runs += content and not in_run
        run_len = run_len + 1 if content else 0
        in_run, prev = content, w
    recur = RECURS.get(lang) if rules.on("recurs_hops") else None
    return max(1, runs + (1 if recur is not None and recur.search(question) else 0))


