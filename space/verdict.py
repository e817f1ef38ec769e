"""The Compare tab's verdict: one sentence saying which candidate comes first, on which scale and in which directions,
and when the directions disagree, which candidate each one puts first and which question each direction answers.
The numbers are the engine's, rounded to two decimals. The sentence is plain text (the page escapes it)."""

from __future__ import annotations

import math

from .candidates import DIRECTION_LABELS, Comparison, ranked_values, winners

# What each direction asks of a candidate (the paper's reading of its conditional direction).
QUESTIONS = {
    "faithfulness": "whether a candidate says only what the source supports",
    "precision": "whether what it says is in the references",
    "recall": "whether it covers what the references say",
}
# How a value is shown in the sentence, by scale.
SHOWN = {
    "rescaled": "{} on the 0–1 scale from an unrelated text (0) to a copy (1)",
    "raw": "raw score {}, a mean log-probability per token: no 0–1 scale here",
}


def number(value: float) -> str:
    """A value as the sentence shows it: two decimals, with a true minus sign."""
    return f"{value:.2f}".replace("-", "−")


def names(comparison: Comparison, indices: list[int]) -> str:
    return joined([comparison.names[index] for index in indices])


def joined(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def achievement(direction: str) -> str:
    """What coming first in a direction is called."""
    if direction == "faithfulness":
        return "is the most faithful to the source"
    return f"scores highest on {DIRECTION_LABELS[direction]}"


def verdict(comparison: Comparison) -> str:
    """The sentence above the table (see the module's text)."""
    firsts = {direction: first for direction, first in winners(comparison).items() if first}
    if not firsts:
        return "No candidate can be ranked: no direction gave a score that is a number."
    groups: dict[tuple, list[str]] = {}
    for direction, first in firsts.items():
        groups.setdefault(tuple(first), []).append(direction)
    if len(groups) == 1:
        return agreeing(comparison, list(firsts), next(iter(groups)))
    return disagreeing(comparison, groups)


def agreeing(comparison: Comparison, directions: list[str], first: tuple) -> str:
    """Every direction puts the same candidate(s) first: the first direction's values, with the runner-up's."""
    lead = directions[0]
    values, scale = ranked_values(comparison, lead)
    who = names(comparison, list(first))
    tie = len(first) > 1
    shown = SHOWN[scale].format(number(values[first[0]]))
    others = [index for index in range(len(values)) if index not in first and not math.isnan(values[index])]
    if others:
        runner = max(others, key=lambda index: values[index])
        shown += f"; next: {comparison.names[runner]}, {number(values[runner])}"
    if not tie:
        head = f"{who} {achievement(lead)}"
    elif lead == "faithfulness":
        head = f"{who} tie as the most faithful to the source"
    else:
        head = f"{who} tie for first on {DIRECTION_LABELS[lead]}"
    rest = [DIRECTION_LABELS[direction] for direction in directions[1:]]
    tail = f" and {'score' if tie else 'scores'} highest on {joined(rest)} too" if rest else ""
    return f"{head} ({shown}){tail}."


def disagreeing(comparison: Comparison, groups: dict[tuple, list[str]]) -> str:
    """The directions put different candidates first: who is first in each, and what each direction asks."""
    parts, scales = [], set()
    for first, directions in groups.items():
        shown = []
        for direction in directions:
            values, scale = ranked_values(comparison, direction)
            scales.add(scale)
            unit = "" if scale == "rescaled" else " (raw)"
            shown.append(f"{DIRECTION_LABELS[direction]} {number(values[first[0]])}{unit}")
        verb = "come first" if len(first) > 1 else "comes first"
        parts.append(f"{names(comparison, list(first))} {verb} on {joined(shown)}")
    scale = " (0–1 scale: 0 = an unrelated text, 1 = a copy)" if "rescaled" in scales else ""
    directions = [direction for group in groups.values() for direction in group]
    return f"The directions disagree: {'; '.join(parts)}{scale}. {questions(directions)}"


def questions(directions: list[str]) -> str:
    """Which question each direction answers, as one sentence."""
    asked = [direction for direction in directions if direction in QUESTIONS]
    clauses = [f"{DIRECTION_LABELS[d]}{' asks' if i == 0 else ''} {QUESTIONS[d]}" for i, d in enumerate(asked)]
    if "f_score" in directions:
        clauses.append("F averages precision and recall")
    sentence = joined(clauses) if clauses else ""
    return sentence[:1].upper() + sentence[1:] + "."
