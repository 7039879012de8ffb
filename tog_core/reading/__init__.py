"""How a question was read: one value, made once per question by a reader, recorded in the trace (`reading`) and
read by every stage of the LLM-free policy instead of re-reading the wording.

Readers: `readers.read` (the wording rules of scoring/question.py and scoring/hops.py), `readers.gold` (a data set's own
hops, answer type and relation path: what a perfect reading is worth, `bench kgqa --reader gold`). A person may
correct a reading in the app (the number of hops, what the question asks for): `edited` names what was changed.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from tog_core.scoring import rules as wording

READERS = ("rules", "llm", "gold")  # who may have made a reading (`by`); "person" is added when one edits it


@dataclass(frozen=True, kw_only=True)
class QuestionReading:
    """What the question is about and what it asks, as the search uses it."""

    question: str
    language: str = "en"  # the language whose stop words and stemmer apply (scoring/text.py: LANGUAGES)
    topics: tuple[str, ...] = ()  # the topic entities' titles the reading was made with
    spans: tuple[tuple[int, int], ...] = ()  # where each topic is named in the question ([start, end) characters)
    asked: tuple[str, ...] = ()  # stems of what the question asks for ("person", "town"); () when it does not say
    asked_named: bool = False  # the question names it ("which town") rather than implying it ("who")
    phrases: tuple[str, ...] = ()  # the relation phrases in the order a chain walks them, from the topic outward
    near: str = ""  # the words by the topic (the first hops' focus); "" when the question was not split
    far: str = ""  # the words by the question word (the last hop's focus)
    hops: int = 1  # how many relations the question chains (at least 1)
    words: dict[str, int] = field(default_factory=dict)  # the content words a chain's relations should match
    by: str = "rules"  # rules | llm | gold (+ "person" in `edited` when corrected)
    fallback: str = ""  # why the reader asked for could not read it and the rule reader did ("" when it did)
    edited: tuple[str, ...] = ()  # the fields a person changed (hops, asked)

    @property
    def want(self) -> Counter[str]:
        """The content words with multiplicity ("the director of X also directed which films" names "direct" twice)."""
        return Counter(self.words)

    def bands(self, hops: int) -> list[str]:
        """The focus of each of `hops` hops for the cheap scorers: one phrase per hop when the question names as many
        (the rule bands_from_phrases), else the near words for hops 1..hops-1 and the far words for the last. []
        for one hop or an unsplit question."""
        if hops < 2:
            return []
        if wording.on("bands_from_phrases") and len(self.phrases) == hops:
            return list(self.phrases)
        if not (self.near or self.far):
            return []
        return [self.near] * (hops - 1) + [self.far]

    def edit(self, **changes: Any) -> QuestionReading:
        """The reading with a person's corrections (hops, asked), named in `edited`."""
        for name in changes:
            if name not in ("hops", "asked"):
                raise ValueError(f"a person may change the number of hops or what is asked, not {name!r}")
        if "hops" in changes and int(changes["hops"]) < 1:
            raise ValueError("the number of hops must be at least 1")
        if "asked" in changes:
            changes["asked"] = tuple(changes["asked"])
            changes.setdefault("asked_named", bool(changes["asked"]))
        edited = tuple(dict.fromkeys([*self.edited, *(k for k in changes if k != "asked_named")]))
        return replace(self, **changes, edited=edited)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["spans"] = [list(s) for s in self.spans]
        for k in ("topics", "asked", "phrases", "edited"):
            d[k] = list(d[k])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> QuestionReading:
        """Tolerant of missing fields (an older trace) and of lists for tuples (JSON)."""
        if not isinstance(d, dict) or not isinstance(d.get("question"), str):
            raise ValueError("a reading needs at least its question (a string)")
        words = d.get("words") or {}
        return cls(question=d["question"], language=str(d.get("language") or "en"),
                   topics=tuple(str(t) for t in d.get("topics") or ()),
                   spans=tuple((int(a), int(b)) for a, b in d.get("spans") or ()),
                   asked=tuple(str(a) for a in d.get("asked") or ()), asked_named=bool(d.get("asked_named")),
                   phrases=tuple(str(p) for p in d.get("phrases") or ()), near=str(d.get("near") or ""),
                   far=str(d.get("far") or ""), hops=max(1, int(d.get("hops") or 1)),
                   words={str(k): int(v) for k, v in words.items()} if isinstance(words, dict) else {},
                   by=str(d.get("by") or "rules"), fallback=str(d.get("fallback") or ""),
                   edited=tuple(str(e) for e in d.get("edited") or ()))
