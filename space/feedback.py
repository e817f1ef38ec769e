"""What a scoring request ends with, told to the page and to API clients alike.

A handler's work runs inside `attempt`, which never raises: it returns an Outcome holding the work's result, or the
problem in words (the page's words, without server paths: guards.public_message) with the field at fault, and the
notes to show (the library's tokenization and rescaling warnings, which a user can act on, by their class, said in
the page's words with the page's own advice: note_for_users; the work's own notes). Each tab says what messages name
in its own words (naming.PageNaming: the Compare tab's boxes, the Batch tab's file columns).
API clients get a problem as gr.Error and notes as gr.Warning (`answer`); the page keeps them in the status line
beside the button until the next action, and marks the field at fault (`status_line`, `field_marks`). Gradio renders
messages as HTML, and messages quote what the user sent, so every message is escaped (`as_text`)."""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import gradio as gr

from bart_score.errors import BARTScoreError, FewerReferencePairsWarning, RescaleWarning, TokenizationWarning

from .batch import MISSING_SHOWN
from .form import FieldError
from .guards import memory_returned_after, public_message
from .naming import COMPARE_PAGE, OPTION_FIELDS, PageNaming

AT_FAULT = "at-fault"  # the CSS class of a field the status line's problem is about

# The library's warnings that the page shows: what tokenizing did to the texts, and the rescaling's notes. Not its
# long-source notes, which are about the operator's settings (BARTSCORE_APP_LONG_SOURCE), nor any other library's.
SHOWN_WARNINGS = (TokenizationWarning, RescaleWarning)


@dataclass
class Outcome:
    value: Any = None
    problem: str | None = None  # the message, path-free and not yet escaped
    field: str | None = None  # the element id of the field at fault
    notes: list[str] = dataclass_field(default_factory=list)


def attempt(work: Callable[..., Any], *args: Any, naming: PageNaming = COMPARE_PAGE) -> Outcome:
    """Runs work(*args) (its result may carry `notes`, a list of strings) and returns what happened, said in the words
    of `naming` (the tab's); whatever the work raises becomes a message, with the field at fault (a FieldError's, or
    the field of the option a library error is about), and the memory it freed is returned to the system
    (guards.memory_returned_after)."""
    with warnings.catch_warnings(record=True) as caught, memory_returned_after():
        warnings.simplefilter("always")
        try:
            value = work(*args)
        except gr.Error as error:
            return Outcome(problem=str(error.message))
        except Exception as error:  # anything else a handler calls: a message, with the details in the server's log
            return Outcome(problem=public_message(error, naming), field=field_at_fault(error))
    notes = [note_for_users(warning.message, naming) for warning in caught]
    return Outcome(value=value, notes=[*(note for note in notes if note is not None), *getattr(value, "notes", [])])


def field_at_fault(error: BaseException) -> str | None:
    """The element id of the field an error is about: a FieldError's own, or the field that sets the option or gives
    the input that a library error names (its `option`, OPTION_FIELDS)."""
    if isinstance(error, FieldError):
        return error.field
    return OPTION_FIELDS.get(error.option or "") if isinstance(error, BARTScoreError) else None


def note_for_users(warning: Warning | str, naming: PageNaming = COMPARE_PAGE) -> str | None:
    """A warning as the page shows it (None: not shown): the library's tokenization and rescaling notes (SHOWN_WARNINGS)
    in the page's words, but FewerReferencePairsWarning (the Space asks for more reference pairs than a few texts give,
    and every pair they give is scored: nothing is missing, and a user cannot change it). A rescaling note
    ends with what a user of the page can do: its problem and "read its raw scores instead", where the engine's remedy
    is for a library caller; one without a remedy says what its rescaled scores are, which the tables show as
    MISSING_SHOWN. A tokenization note is its problem alone: its remedy for a cut source, long_source="windows", is an
    operator's setting here, not a user's."""
    if not isinstance(warning, SHOWN_WARNINGS) or isinstance(warning, FewerReferencePairsWarning):
        return None
    if not isinstance(warning, RescaleWarning):
        return warning.problem(naming)
    if warning.remedy:
        return f"{warning.problem(naming)}; read its raw scores instead"
    return f"{warning.said(naming)} (shown as {MISSING_SHOWN}): read its raw scores"


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
