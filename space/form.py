"""What the user typed or chose, read and checked before any model loads: texts within the length limit and valid
Unicode, candidates and references within their limits, the prompt menu's choice, and the form's settings as one
ScoringOptions, which the library checks (directions that have the inputs they need among them). Every problem of the
form's own is a FieldError: its message names the field, and its `field` says which one of the page's fields is at
fault (its element id), so that the page can mark it; the library's InputError marks the field of the option it
names (naming.OPTION_FIELDS)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bart_score
from bart_score.errors import InputError
from bart_score.inputs import check_text, counted
from bart_score.messages import Mention, Naming
from bart_score.options import ScoringOptions

from .naming import COMPARE_PAGE

MAX_CANDIDATES = 6  # also the most system columns in an uploaded file
MIN_CANDIDATES = 2
MAX_REFERENCES = 8
MAX_PROMPT_CHARS = 200
# The directions as the page names them (its checkboxes, tables and messages).
DIRECTION_LABELS = {"faithfulness": "faithfulness", "precision": "precision", "recall": "recall", "f_score": "F"}


class FieldError(InputError):
    """A problem with what the user entered in one field of the page (`field`: its element id, such as "source",
    "candidate-2", "directions" or "upload")."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


# The prompt menu: (label, value); parse_prompt reads the value.
PROMPT_CHOICES = (
    [("none", "none")]
    + [(f"{name} ({counted(len(phrases), 'phrase')})", name) for name, phrases in bart_score.PROMPT_SETS.items()]
    + [("custom phrase", "custom")]
)


def parse_references(text: str | None) -> list[str]:
    """One reference per non-blank line."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def parse_prompt(choice: str, phrase: str | None) -> str | list[str] | None:
    """The engine's prompt argument for the prompt menu's choice: None, a set name, or a one-phrase list."""
    if choice == "none":
        return None
    if choice == "custom":
        if not (phrase or "").strip():
            raise FieldError("Enter a custom prompt phrase, or choose another prompt", "prompt-phrase")
        check_field(phrase.strip(), "The custom prompt phrase", MAX_PROMPT_CHARS, "prompt-phrase")
        return [phrase.strip()]  # a list, so that a lowercase single word is a phrase, not a set name
    if choice in bart_score.PROMPT_SETS:
        return choice
    raise FieldError(
        f"Unknown prompt {choice!r}; choose none, custom, or one of the sets {', '.join(bart_score.PROMPT_SETS)}",
        "prompt",
    )


def form_options(
    directions: list[str],
    aggregation: str,
    prompt: str | list[str] | None,
    prompt_side: str,
    *,
    has_source: bool,
    has_references: bool,
    rescale: str | None = None,
    show_progress: bool = False,
    long_source: Mapping[str, Any] | None = None,
    naming: Naming = COMPARE_PAGE,
) -> tuple[ScoringOptions, list[str]]:
    """The form's settings as one checked ScoringOptions, passed down whole to the engine, and the notes to show with
    its result: the directions as the form gave them, the prompt as parse_prompt did, the rescaling as the Batch tab's
    choice gave it (batch.parse_rescale), and the operator's long-source options (settings.Settings.long_source). Every
    direction ticked, as the page opens, asks for what the inputs allow, as the command line's default does: the
    directions the inputs (a source, references) cannot give are left out, and a note says which and what they need
    (in the tab's words, `naming`). A narrower choice is the user's, checked by the library against the inputs. The
    library's checks are the only checks of these settings. An empty choice of directions is refused in the form's
    words, to tick one: the library's message for it advises leaving the option out, which the page cannot do."""
    if not directions:
        raise FieldError("Choose at least one direction", "directions")
    every = set(directions) == set(bart_score.DIRECTIONS)
    options = ScoringOptions(
        directions=None if every else tuple(directions),
        aggregation=aggregation,
        prompt=prompt,
        prompt_side=prompt_side,
        rescale=rescale,
        show_progress=show_progress,
        **(long_source or {}),
    )
    given = options.directions_for(has_references=has_references, has_sources=has_source)
    left_out = [direction for direction in bart_score.DIRECTIONS if direction not in given]
    if every:
        options = options.replace(directions=given)
    return options, [left_out_note(left_out, naming)] if every and left_out else []


def left_out_note(directions: list[str], naming: Naming) -> str:
    """What the page says of the directions that the inputs could not give (faithfulness, without a source; or
    precision, recall and F, without references): which, and what they need."""
    names = [DIRECTION_LABELS[direction] for direction in directions]
    needed = naming.mention(Mention("sources" if directions == ["faithfulness"] else "references"))
    if len(names) == 1:
        return f"{names[0]} was left out: it needs {needed}"
    return f"{', '.join(names[:-1])} and {names[-1]} were left out: they need {needed}"


def custom_phrase(choice: str, prompt) -> list[tuple[str, str, str]]:
    """[(where, phrase, field)] for a custom prompt phrase, [] for a prompt set or none: the phrase to check like a
    text."""
    return [("The custom prompt phrase", prompt[0], "prompt-phrase")] if choice == "custom" else []


def check_field(text: str, what: str, max_chars: int, field: str) -> None:
    """A text the user typed in `field`: within the length limit, and valid Unicode (JSON can carry lone
    surrogates)."""
    if len(text) > max_chars:
        raise FieldError(f"{what} has {counted(len(text), 'character')}; the limit is {max_chars}", field)
    try:
        check_text(text, what)
    except InputError as error:
        raise FieldError(error.said(COMPARE_PAGE), field) from None


def collect_candidates(texts: list[str], max_chars: int) -> list[tuple[str, str]]:
    """(name, text) for each non-blank candidate box; a box keeps its number, so names match what the user sees."""
    candidates = [(f"Candidate {number}", text.strip()) for number, text in enumerate(texts, 1) if (text or "").strip()]
    blank = next((f"candidate-{number}" for number, text in enumerate(texts, 1) if not (text or "").strip()), None)
    if len(candidates) < MIN_CANDIDATES:
        raise FieldError(
            f"Enter at least {MIN_CANDIDATES} candidates to compare (found {len(candidates)})", blank or "candidate-1"
        )
    if len(candidates) > MAX_CANDIDATES:
        raise FieldError(f"At most {MAX_CANDIDATES} candidates can be compared (found {len(candidates)})", "candidates")
    for name, text in candidates:
        check_field(text, name, max_chars, candidate_field(name))
    return candidates


def candidate_field(name: str) -> str:
    """The element id of the box of a candidate named "Candidate <n>"."""
    return "candidate-" + name.rsplit(" ", 1)[-1]


def check_references(references: list[str], max_chars: int) -> None:
    if len(references) > MAX_REFERENCES:
        raise FieldError(f"At most {MAX_REFERENCES} references are allowed (found {len(references)})", "references")
    for number, reference in enumerate(references, 1):
        check_field(reference, f"Reference {number}", max_chars, "references")


def pairs_per_text(directions, has_source: bool, references: int) -> int:
    """The (condition, text) pairs one candidate or system output needs: 1 for faithfulness (given a source), and one
    per reference for each of precision and recall (F needs both)."""
    sides = ("precision" in directions or "f_score" in directions) + ("recall" in directions or "f_score" in directions)
    return ("faithfulness" in directions and has_source) + sides * references


def refuse_too_much_work(
    pairs: int, max_pairs: int, *, what: str, breakdown: str, advice: str, up_to: bool = False
) -> None:
    """Refuses a request that needs more than max_pairs scored pairs, before any model is used, saying how many
    (`up_to`: at most that many, an upper estimate) and the limit, so that one request cannot hold the scoring slot
    that every user shares."""
    if pairs > max_pairs:
        needs = "may need up to" if up_to else "needs"
        raise InputError(
            f"Scoring {what} {needs} {pairs:,} scored pairs ({breakdown}); the limit here is {max_pairs:,}. "
            f"Use {advice}"
        )
