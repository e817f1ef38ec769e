"""What the user typed or chose, read and checked before any model loads: texts within the length limit and valid
Unicode, candidates and references within their limits, directions that have the inputs they need, and the prompt
menu's choice. Every problem is a ValueError that names the field."""

from __future__ import annotations

import bart_score
from bart_score.inputs import check_text

MAX_CANDIDATES = 6  # also the most system columns in an uploaded file
MIN_CANDIDATES = 2
MAX_REFERENCES = 8
MAX_PROMPT_CHARS = 200

# The prompt menu: (label, value); parse_prompt reads the value.
PROMPT_CHOICES = (
    [("none", "none")]
    + [
        (f"{name} ({len(phrases)} phrase{'s' if len(phrases) > 1 else ''})", name)
        for name, phrases in bart_score.PROMPT_SETS.items()
    ]
    + [("custom phrase", "custom")]
)


def parse_references(text):
    """One reference per non-blank line."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def parse_prompt(choice, phrase):
    """The engine's prompt argument for the prompt menu's choice: None, a set name, or a one-phrase list."""
    if choice == "none":
        return None
    if choice == "custom":
        if not (phrase or "").strip():
            raise ValueError("Enter a custom prompt phrase, or choose another prompt")
        check_field(phrase.strip(), "The custom prompt phrase", MAX_PROMPT_CHARS)
        return [phrase.strip()]  # a list, so that a lowercase single word is a phrase, not a set name
    if choice in bart_score.PROMPT_SETS:
        return choice
    raise ValueError(
        f"Unknown prompt {choice!r}; choose none, custom, or one of the sets {', '.join(bart_score.PROMPT_SETS)}"
    )


def custom_phrase(choice, prompt):
    """[(where, phrase)] for a custom prompt phrase, [] for a prompt set or none: the phrase to check like a text."""
    return [("The custom prompt phrase", prompt[0])] if choice == "custom" else []


def check_field(text, what, max_chars):
    """A text the user typed: within the length limit, and valid Unicode (JSON can carry lone surrogates)."""
    if len(text) > max_chars:
        raise ValueError(f"{what} has {len(text)} characters; the limit is {max_chars}")
    check_text(text, what)


def check_directions(directions, *, has_source, has_references):
    """The directions in canonical order, or a message saying which input a chosen direction lacks."""
    if not directions:
        raise ValueError("Choose at least one direction")
    for direction in directions:
        if direction not in bart_score.DIRECTIONS:
            raise ValueError(f"Unknown direction {direction!r}; choose from {', '.join(bart_score.DIRECTIONS)}")
    if "faithfulness" in directions and not has_source:
        raise ValueError("faithfulness (source → candidate) needs a source: enter one, or untick faithfulness")
    needing_references = [d for d in directions if d != "faithfulness"]
    if needing_references and not has_references:
        verb = "needs" if len(needing_references) == 1 else "need"
        raise ValueError(f"{', '.join(needing_references)} {verb} at least one reference: enter one, or untick it")
    return [d for d in bart_score.DIRECTIONS if d in directions]


def collect_candidates(texts, max_chars):
    """(name, text) for each non-blank candidate box; a box keeps its number, so names match what the user sees."""
    candidates = [(f"Candidate {number}", text.strip()) for number, text in enumerate(texts, 1) if (text or "").strip()]
    if len(candidates) < MIN_CANDIDATES:
        raise ValueError(f"Enter at least {MIN_CANDIDATES} candidates to compare (found {len(candidates)})")
    if len(candidates) > MAX_CANDIDATES:
        raise ValueError(f"At most {MAX_CANDIDATES} candidates can be compared (found {len(candidates)})")
    for name, text in candidates:
        check_field(text, name, max_chars)
    return candidates


def check_references(references, max_chars):
    if len(references) > MAX_REFERENCES:
        raise ValueError(f"At most {MAX_REFERENCES} references are allowed (found {len(references)})")
    for number, reference in enumerate(references, 1):
        check_field(reference, f"Reference {number}", max_chars)


def prompt_count(prompt):
    """How many phrases the engine's prompt argument scores each pair with (1 without a prompt)."""
    if prompt is None:
        return 1
    return len(bart_score.PROMPT_SETS[prompt] if isinstance(prompt, str) else prompt)


def pairs_per_text(directions, has_source, references):
    """The (condition, text) pairs one candidate or system output needs: 1 for faithfulness (given a source), and one
    per reference for each of precision and recall (F needs both)."""
    sides = ("precision" in directions or "f_score" in directions) + ("recall" in directions or "f_score" in directions)
    return ("faithfulness" in directions and has_source) + sides * references


def refuse_too_much_work(pairs, max_pairs, *, what, counted, advice):
    """Refuses a request that needs more than max_pairs scored pairs, before any model is used, saying how many and
    the limit, so that one request cannot hold the scoring slot that every user shares."""
    if pairs > max_pairs:
        raise ValueError(
            f"Scoring {what} needs {pairs:,} scored pairs ({counted}); the limit here is {max_pairs:,}. Use {advice}"
        )
