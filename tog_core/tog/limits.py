"""Limits on what a person may ask, read by every front door (the CLI, the app's Ask page, the engine itself).

MAX_QUESTION_CHARS: a question longer than this is refused with one line naming the limit. ToG's questions are a
sentence or two (the dev sets' longest is under 200 characters); 4,000 characters is a long paragraph. The
question's reading is n log n in its length (scoring/question.py), but every stage re-reads the question, each LLM
prompt carries it and a trace stores it, so an unbounded one costs time and tokens for nothing.
"""
from __future__ import annotations

__all__ = ["MAX_QUESTION_CHARS", "question_too_long", "check_question"]

MAX_QUESTION_CHARS = 4_000


def question_too_long(question: str) -> str | None:
    """The one-line refusal for a question past MAX_QUESTION_CHARS (after trimming spaces), else None."""
    n = len(question.strip())
    if n <= MAX_QUESTION_CHARS:
        return None
    return (f"the question is {n:,} characters long; the limit is {MAX_QUESTION_CHARS:,} "
            f"(MAX_QUESTION_CHARS): shorten it to the question itself")


def check_question(question: str) -> None:
    """ValueError (one line naming the limit) for a question past MAX_QUESTION_CHARS."""
    problem = question_too_long(question)
    if problem:
        raise ValueError(problem)
