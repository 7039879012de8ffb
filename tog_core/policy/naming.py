"""What the question names of a candidate: a question says its context and asks for its answer.

A person asking "Within which complex is the bay where the encrypted radio transmitter is kept?" names the bay (the
way to the answer) and not the complex (the answer). So a candidate whose title the question uses is more likely a
step on the way than the end:

* `named_in`: the whole title, as whole words of the question (the topic entities' own titles aside). Read by
  ranking.order, which puts such candidates after every one the question does not name, as a topic entity is left
  out of the answers.
* `title_named`: the share of the title's words the question uses ("EQUIPMENT BAY": "bay", one of two), a ranking
  feature (policy/ranking.py). GraphRAG titles are often made of the words the text uses around the thing
  ("CAROLINE'S HUSBAND", "SCROOGE'S NIECE'S SISTERS"), so a question naming the step names part of its title.

Both read only the question and the titles: no word list. The topic entities' titles are set aside (the question
names them by design), and for `title_named` the noun naming what is asked too ("which complex": MILITARY COMPLEX
is a complex, not named by the question).
"""
from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from tog_core.scoring.text import UNSPACED, tokens_in, without_article

_WORD = re.compile(r"\w+", re.UNICODE)


def named_in(question: str, title: str, topic_titles: Sequence[str]) -> bool:
    """Whether the question names `title` itself, outside the topic entities' own titles: the whole title (a
    leading article aside) as whole words of the question, or, in a script written without spaces, as a piece of it.
    Such an entity is what the question says, not what it asks ("…with the old man, surrounded by their children's
    children?"), as a topic entity is; "Dulce" inside the topic "Dulce base" is the topic's, not named apart."""
    text = question.lower()
    for t in sorted((t.lower() for t in topic_titles if t), key=len, reverse=True):
        text = text.replace(t, " | ") if UNSPACED.search(t) else re.sub(rf"(?<!\w){re.escape(t)}(?!\w)", " | ", text)
    name = without_article(title.lower()).strip()
    if UNSPACED.search(name):
        return len(name) >= 2 and name in text
    words = _WORD.findall(name)
    return len("".join(words)) >= 3 and f" {' '.join(words)} " in f" {' '.join(_WORD.findall(text))} "


def title_named(question: str, title: str, topic_titles: Sequence[str], asked: Collection[str],
                language: str) -> float:
    """The share of `title`'s content words (stems, read in `language`) that the question uses, the topic entities'
    title words and the asked noun's stems (`asked`) set aside on both sides. 0 for a title with no such word, and
    when the question or the title holds a character of a script written without spaces (UNSPACED: Chinese,
    Japanese; also Hangul, so Korean reads 0): there a stem is a run of two characters, and the question reading
    names no asked noun to set aside, so the asked thing itself ("哪家制陶坊", which pottery) would count as named.
    Known limits: only the reading's asked noun is set aside ("Which wine merchant …" asked as "wine" counts
    "merchant" as named), and accents are not folded ("Ecole" is not "école")."""
    if UNSPACED.search(question) or UNSPACED.search(title):
        return 0.0
    aside = _stems(" ".join(topic_titles), language) | set(asked)
    own = _stems(title, language) - aside
    if not own:
        return 0.0
    return len(own & _stems(question, language)) / len(own)


def _stems(text: str, language: str) -> set[str]:
    """The content words' stems, without the one-letter pieces a possessive leaves ("master's": "mast", "s")."""
    return {w for w in tokens_in(text, language) if len(w) > 1}
