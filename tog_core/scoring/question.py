"""A question's structure, read by wording rules over the per-language word lists: which words each hop of the
search is about (`hop_phrases`, `question_split`), what the question asks for (`asked_type`: the question word, the
type it names, "which town", or stands for, "who" -> a person; `type_matches`: whether an entity type fits it;
`asked_in`: the question's own words that name it), and which words name no relation (`_relation_word`, read by
scoring/hops.py).

The word lists are data (scoring/languages/*.toml); each rule has an off-switch (scoring/rules.py) so that
bench/rule_table.py can measure it. Words, stems and stop words come from scoring/text.py.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from functools import lru_cache

from tog_core.scoring import rules
from tog_core.scoring.text import (_GENERIC_NOUNS, _SPACED, _WORD, LANGUAGES, UNSPACED, _stem, language, language_of,
                                   tokens, tokens_in)

# the question words a far band sits by, of every language, read in any question (a title may be in another)
_WH_WORDS = frozenset(w for t in _SPACED.values() for w in t.question_words)


def hop_phrases(question: str, topics: list[str]) -> list[str]:
    """The question's relation phrases in the order a path walks them: the possessive chain after the topic first
    ("X 's spouse 's heir": spouse, heir), then the phrases before the topic from the nearest out ("the child of
    the heir of X": heir, child), then the rest after it ("… X act in"). Runs of content words, as expected_hops
    counts them. [] when no topic occurs or the text has no spaces."""
    low = question.lower()
    at = min((low.find(t.lower()) for t in topics if t and t.lower() in low), default=-1)
    if at < 0 or UNSPACED.search(question):
        return []
    end = max(low.find(t.lower()) + len(t) for t in topics if t and t.lower() in low)
    lang = language([w.lower() for w in _WORD.findall(question)])

    def runs(text: str) -> list[tuple[bool, str]]:
        """(follows a possessive 's, phrase) for each run of content words."""
        out: list[tuple[bool, str]] = []
        cur: list[str] = []
        prev, poss = "", False
        found = list(re.finditer(r"'s\b|[^\W_]+(?:_[^\W_]+)*", text))
        for k, m in enumerate(found):
            w = m.group(0).lower()
            content = _relation_word(w, prev, lang, found[k + 1].group(0).lower() if k + 1 < len(found) else "")
            if content:
                cur.append(m.group(0))
            elif cur:
                out.append((poss, " ".join(cur)))
                cur = []
            if not content:
                poss = w == "'s"
            prev = w
        if cur:
            out.append((poss, " ".join(cur)))
        return out

    left = runs(question[:at])
    right = runs(question[end:])
    possessive = [p for is_poss, p in right if is_poss]
    rest = [p for is_poss, p in right if not is_poss]
    return possessive + [p for _, p in reversed(left)] + rest


class _Gaps:
    """Characters between a word (at pos) and the nearest of some marked spans (a, b): a - pos - len(word) to a
    span that starts after pos, max(0, pos - b) to one that starts at or before it. Binary search over the spans
    sorted by start (with the running furthest end), so a long question costs n log n, not words x marks."""

    def __init__(self, marks: list[tuple[int, int]]) -> None:
        ordered = sorted(marks)
        self.starts = [a for a, _ in ordered]
        self.reach: list[int] = []  # furthest end among the spans up to each one
        for _, b in ordered:
            self.reach.append(max(b, self.reach[-1]) if self.reach else b)

    def __call__(self, pos: int, word: str = "") -> int:
        k = bisect.bisect_right(self.starts, pos)  # spans [0, k) start at or before pos
        best = max(0, pos - self.reach[k - 1]) if k else None
        if k < len(self.starts):
            after = self.starts[k] - pos - len(word)
            best = after if best is None else min(best, after)
        return best  # type: ignore[return-value]


def question_split(question: str, topics: list[str]) -> tuple[str, str]:
    """(near, far): relation words next to the topic mention tend to name the first hops ("films acted by the actors
    in X"), the words next to the question word the last ("who directed …", "… are written by who"). Each content
    word goes to whichever is nearer: the topic (near) or a question word (far); when no content word sits by a
    question word, the question word itself is the far part ("when …" asks for a year). Without a question word the
    content words are split by distance from the topic into a near and a far half. ("", "") when no topic title
    occurs in the question or it has fewer than two content words."""
    low = question.lower()
    spans = [(low.find(t.lower()), low.find(t.lower()) + len(t)) for t in topics if t and t.lower() in low]
    if not spans:
        return "", ""
    stop = LANGUAGES[language([w.lower() for w in _WORD.findall(question)])][0]
    content = [(m.start(), m.group(0)) for m in _WORD.finditer(question)
               if m.group(0).lower() not in stop and not any(a <= m.start() < b for a, b in spans)]
    if len(content) < 2:
        return "", ""

    gap = _Gaps(spans)
    wh = [(m.start(), m.end()) for m in _WORD.finditer(question)
          if m.group(0).lower() in _WH_WORDS and rules.on("bands_by_question_word")]
    if wh:  # the answer's words sit by the question word ("… are written by who"), the first hop's by the topic
        gap_wh = _Gaps(wh)
        far_w = [(p, w) for p, w in content if gap_wh(p, w) < gap(p, w)]
        near_w = [(p, w) for p, w in content if gap_wh(p, w) >= gap(p, w)]
        if near_w and not far_w:  # nothing sits by the question word: "when …" alone says what the answer is
            far_w = [(a, question[a:b]) for a, b in wh]
        if far_w and near_w:
            return " ".join(w for _, w in near_w), " ".join(w for _, w in far_w)
    ranked = sorted(content, key=lambda pw: gap(pw[0], pw[1]))
    half = -(-len(ranked) // 2)
    return " ".join(w for _, w in sorted(ranked[:half])), " ".join(w for _, w in sorted(ranked[half:]))


# per language (scoring/languages/*.toml; README.md there says what each holds): words between a question word and
# the type it names ("what are the genres of"), question words after which the next word names the answer's type
# ("which town"), the words of "what kind of X" (AUXILIARIES skips them; "what types are the films …" asks for kinds),
# words that frame a question without naming a relation ("what is the name of")
AUXILIARIES = {code: t.auxiliaries for code, t in _SPACED.items()}
TYPE_ASKING = {code: t.type_asking for code, t in _SPACED.items()}
KIND_WORDS = {code: t.kind_words for code, t in _SPACED.items()}
FRAMING = {code: t.framing for code, t in _SPACED.items()}


def _relation_word(w: str, prev: str, lang: str, nxt: str = "") -> bool:
    """Whether a (lower-case) word may name a relation: not a stop word or a framing word of its language ("name
    of"), not the noun right after "which/what" (the answer's type: "which town") unless an English article
    follows it (then it is a verb: "what killed the X's spouse"), not a single letter or "'s"."""
    return (len(w) > 1 and w != "'s" and w not in LANGUAGES[lang][0]
            and not (rules.on("framing_words") and w in FRAMING.get(lang, ()))
            and (not rules.on("asking_noun_is_type") or prev not in TYPE_ASKING.get(lang, ())
                 or _verb_after_asking(nxt, lang, w)))


# per language: words that, right after "what/which" and one more word, show that word to be a verb ("what killed
# the X's spouse": an article; an English type noun is followed by a verb or "of"). Not French, whose subject
# follows the noun ("dans quelle ville la Banque Mercier a-t-elle son siège").
VERB_AFTER_ASKING = {code: t.verb_after_asking for code, t in _SPACED.items()}


def _is_type_word(w: str) -> bool:
    """Whether a word names an entity type in TYPE_WORDS ("town", "man", "year", "films")."""
    return bool(set(_type_words(w)) & _all_type_words())


@lru_cache(maxsize=1)
def _all_type_words() -> frozenset[str]:
    """Every word of TYPE_WORDS, as _type_words reads it (built on first use: _type_words is defined below)."""
    return frozenset(w for label in TYPE_WORDS for w in _type_words(_label_words(label)))


def _verb_after_asking(nxt: str, lang: str, w: str = "") -> bool:
    """Whether the word `w` after "what/which" is a verb, read from the word after it (VERB_AFTER_ASKING); never a
    word that names an entity type ("in which town the fair takes place")."""
    return (rules.on("verb_after_asking") and nxt in VERB_AFTER_ASKING.get(lang, frozenset())
            and not (w and _is_type_word(w)))


# what each question word asks for, per language, as words a type label or its description may contain
ASKS_FOR = {code: t.asks_for for code, t in _SPACED.items()}
# words a question uses for a time ("at what hour", "on which day", "en quelle année"), every language's
_TIME_WORDS = frozenset(w for t in _SPACED.values() for w in t.time_words)
# the types a time word names: GraphRAG's default types have no time (its extractor types MIDNIGHT, SUNDAY as EVENT);
# a custom graph may
_TIME_TYPES = ("EVENT", "DATE", "TIME", "YEAR")


def _merged_type_words() -> dict[str, str]:
    """Entity type -> the words every language's questions use for it (its type_words, and its time words for the
    _TIME_TYPES), as one text (tokens() reads a text in one language: the one most of its stop words belong to)."""
    out: dict[str, list[str]] = {}
    for t in _SPACED.values():
        for label, words in t.type_words.items():
            out.setdefault(label, []).extend(words.split())
        for label in _TIME_TYPES:
            out.setdefault(label, []).extend(t.time_words)
    return {label: " ".join(words) for label, words in out.items()}


# GraphRAG's default entity types (and MOVIE), in words a question uses for them (any other type reads as its own name)
TYPE_WORDS = _merged_type_words()


def asked_type(question: str) -> tuple[list[str], bool]:
    """Stems of what the question asks for, read at its question word (the first that is no pronoun opening a
    relative clause: "the dealer who told …; which garment" reads "which"), and whether the question names it:
    the next content word after "which/what" ("which town", "what are the genres of": named), else what the
    question word usually stands for ("who" -> person, "where" -> place: not named). ([], False) when it does
    not say. English and French (Chinese question words read no type: docs/rules.md)."""
    found = list(_WORD.finditer(question))
    words = [m.group().lower() for m in found]
    lang = language(words)
    asking = TYPE_ASKING.get(lang, frozenset()) if rules.on("named_type") else frozenset()
    wh = ASKS_FOR.get(lang, {}) if rules.on("asks_for") else {}
    at_wh = [k for k, w in enumerate(words) if w in asking or w in wh]
    if not at_wh:
        return [], False
    first = at_wh[0]
    if rules.on("relative_wh"):  # "the old dealer who told …; which garment …": the question word is "which"
        stop = LANGUAGES.get(lang, (frozenset(), None))[0]
        first = next((k for k in at_wh if not (words[k] in wh and _relative(question, found, k, stop))), first)
    if words[first] in wh:
        return tokens(wh[words[first]]), False
    aux = AUXILIARIES.get(lang, frozenset()) if rules.on("auxiliaries") else frozenset()
    at = next((k for k in range(first + 1, len(words)) if words[k] not in aux), None)  # "what are the genres"
    if (rules.on("kind_words") and at is not None and at > first + 1 and words[first + 1] in KIND_WORDS.get(lang, ())
            and words[at] != "of"):
        return [], False  # "what types are the films …" asks for the films' kinds, not films ("what type of film")
    noun = words[at] if at is not None else None
    if at == first + 1 and at + 1 < len(words) and _verb_after_asking(words[at + 1], lang):
        return [], False  # "what killed the X's spouse": a verb, the question says no type
    named = _type_words(noun) if noun else []  # "which of": a stop word names no type
    return (named, True) if named else ([], False)


# what may end a clause between two words: a stop (. ; : ? ! …), a comma ("Among the guests, who danced …" asks; a
# "Scrooge, who …" is left as a question word too), a dash (— or –, or a hyphen or two with a space beside)
_CLAUSE_START = re.compile(r"[.,;:?!\u2026\u2014\u2013]|\s-|-\s|--")


def _relative(question: str, found: list[re.Match[str]], k: int, stop: frozenset[str]) -> bool:
    """Whether the pronoun at `found[k]` (who, where, qui, où …; never which/what + noun, which ask wherever they
    stand: "Fred invited which guests") opens a relative clause ("the dealer who …", "a shop where …"; "Scrooge,
    who …" is not read as one) rather than the question: it follows a content word (not a stop word such as "to" in
    "to whom"), with no clause break (a stop, a comma or a dash) between them. The first word never does."""
    if k == 0:
        return False
    gap = question[found[k - 1].end():found[k].start()]
    return not _CLAUSE_START.search(gap) and found[k - 1].group().lower() not in stop


def type_matches(asked: list[str], entity_type: str) -> bool | None:
    """Whether an entity type fits what the question asks for; None when either says nothing."""
    if not asked or not entity_type:
        return None
    label = entity_type.upper()
    words = set(_type_words(_label_words(label) + " " + entity_type.replace("_", " ")))
    return bool(words & set(asked))


def _label_words(label: str) -> str:
    """The words TYPE_WORDS gives an (upper-case) type label, with the word-list rules that are on."""
    text = TYPE_WORDS.get(label, "") if rules.on("type_words") else ""
    if not rules.on("film_nouns_type") and label == "MOVIE":
        return ""
    if not rules.on("time_words"):
        text = " ".join(w for w in text.split() if w not in _TIME_WORDS)
    return text


def _type_words(text: str) -> list[str]:
    """tokens(), keeping the generic nouns the stop words drop: "in which movies" asks for movies."""
    generic = _GENERIC_NOUNS if rules.on("film_nouns_type") else frozenset()
    return tokens(text) + [_stem(w) for w in _WORD.findall(text.lower()) if w in generic]


def asked_in(question: str, asked: Sequence[str]) -> frozenset[str]:
    """The question's own stems (read in its language, as its content words are) of the words that name what it
    asks for: the words whose type stems (`asked_type` reads the asked noun alone) are among `asked`. "Quelle
    rivière …" asks for "rivièr" read alone, "rivi" as the question's French word."""
    if not asked:
        return frozenset()
    lang = language_of(question)
    wanted = set(asked)
    return frozenset(stem for w in _WORD.findall(question) if wanted & set(_type_words(w.lower()))
                     for stem in tokens_in(w, lang))


@rules.on_change
def _rules_changed() -> None:
    """The type words re-read with the rules now on (bench/rule_table.py); scoring/text.py's hook, registered first
    (this module imports it), has rebuilt the stop lists already."""
    _all_type_words.cache_clear()
