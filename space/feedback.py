"""What a scoring request ends with, told to the page and to API clients alike.

A handler's work runs inside `attempt`, which never raises: it returns an Outcome holding the work's result, or the
problem in words (a path-free message, see guards.public_message) with the field at fault, and the notes to show (the
library's tokenization and rescaling warnings, which a user can act on, by their category; the work's own notes).
API clients get a problem as gr.Error and notes as gr.Warning (`answer`); the page keeps them in the status line
beside the button until the next action, and marks the field at fault (`status_line`, `field_marks`). Gradio renders
messages as HTML, and messages quote what the user sent, so every message is escaped (`as_text`)."""

from __future__ import annotations

import html
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import gradio as gr

from bart_score.errors import RescaleWarning, TokenizationWarning
from bart_score.options import OPTION_CLASSES

from .guards import memory_returned_after, public_message

AT_FAULT = "at-fault"  # the CSS class of a field the status line's problem is about

# The library's warnings that the page shows: what tokenizing did to the texts, and the rescaling's notes. Not its
# long-source notes, which are about the operator's settings (BARTSCORE_APP_LONG_SOURCE), nor any other library's.
SHOWN_WARNINGS = (TokenizationWarning, RescaleWarning)
# What the page makes of the notices it shows, each a (pattern, replacement): replacement None hides a notice about a
# choice the Space makes, which a user cannot change; the others end with what a user of the page can do, where the
# engine's own advice is for a library caller.
NOTICES_FOR_USERS = (
    # The Space asks for up to 1000 reference pairs, and every pair the texts give is scored: nothing is missing.
    (re.compile(r"BARTScore: \d+ reference pairs were asked for, but the texts give only \d+ distinct ones"), None),
    (re.compile(r"; its rescaled scores are NaN$"), "; it has no 0–1 values here: read its raw scores"),
    (re.compile(r"; make the reference points from more varied texts$"), "; read its raw scores instead"),
)


# The library's options that a field of the page sets (the table's field entries, bart_score.options) and the inputs
# the page's fields give: the library's InputError about one (its `option`) marks that field.
OPTION_FIELDS = {
    **{
        options_class.PREFIX + name: spec.field
        for options_class in OPTION_CLASSES
        for name, spec in options_class.TABLE.items()
        if spec.field is not None
    },
    "sources": "source",
    "references": "references",
}


@dataclass
class Outcome:
    value: Any = None
    problem: str | None = None  # the message, path-free and not yet escaped
    field: str | None = None  # the element id of the field at fault
    notes: list[str] = dataclass_field(default_factory=list)


def attempt(work: Callable[..., Any], *args: Any) -> Outcome:
    """Runs work(*args) (its result may carry `notes`, a list of strings) and returns what happened; whatever the
    work raises becomes a message, the memory it freed is returned to the system (guards.memory_returned_after)."""
    with warnings.catch_warnings(record=True) as caught, memory_returned_after():
        warnings.simplefilter("always")
        try:
            value = work(*args)
        except gr.Error as error:
            return Outcome(problem=str(error.message))
        except MemoryError:
            return Outcome(problem="The server ran out of memory for this request; send fewer or shorter texts")
        except Exception as error:  # anything else a handler calls: a message, with the details in the server's log
            field = getattr(error, "field", None) or OPTION_FIELDS.get(getattr(error, "option", None))
            return Outcome(problem=public_message(error), field=field)
    notices = (note_for_users(str(w.message)) for w in caught if issubclass(w.category, SHOWN_WARNINGS))
    notes = [public_message(notice) for notice in notices if notice is not None]
    return Outcome(value=value, notes=[*notes, *getattr(value, "notes", [])])


def note_for_users(notice: str) -> str | None:
    """A library notice as the page shows it (NOTICES_FOR_USERS), or None when a user can do nothing about it."""
    for pattern, replacement in NOTICES_FOR_USERS:
        if pattern.search(notice):
            return None if replacement is None else pattern.sub(replacement, notice)
    return notice


def as_text(message: str) -> str:
    """A message that a browser shows as written, whatever markup it quotes."""
    return html.escape(message, quote=False)


def answer(outcome: Outcome) -> Any:
    """For API clients: the result, with notes as warnings; a problem raised as gr.Error."""
    if outcome.problem is not None:
        raise gr.Error(as_text(outcome.problem), print_exception=False)
    for note in outcome.notes:
        gr.Warning(as_text(note))
    return outcome.value


def status_line(outcome: Outcome | None, done: str = "Done.") -> str:
    """The status line's HTML: the problem (announced to screen readers), or `done` with the notes; for no outcome
    yet, an empty line."""
    if outcome is None:
        return '<div class="status" role="status"></div>'
    if outcome.problem is not None:
        return f'<div class="status problem" role="alert"><strong>Not scored:</strong> {as_text(outcome.problem)}</div>'
    notes = "".join(f'<span class="note">Note: {as_text(note)}</span>' for note in outcome.notes)
    return f'<div class="status done" role="status">{as_text(done)}{notes}</div>'


def working_line(what: str) -> str:
    return f'<div class="status working" role="status">{as_text(what)}</div>'


def field_marks(fields: tuple[str, ...], outcome: Outcome | None) -> list[dict]:
    """One update per field: the field at fault marked, every other unmarked."""
    fault = outcome.field if outcome is not None and outcome.problem is not None else None
    return [gr.update(elem_classes=[AT_FAULT] if name == fault else []) for name in fields]
