"""The page's input fields, which refuse values of the wrong type before any handler sees them.

Gradio's own components turn what an API client sends into their Python value loosely: a Textbox takes a list, a
dict or a number as its str() (so that "['a', 'b']" would be scored as a text), a CheckboxGroup takes a dict or a
string as the choices it iterates. `typed` gives a component a preprocess step that checks the type first and
refuses with a message naming the field by its label. (Subclasses would do the same, but Gradio writes a .pyi stub
beside the module of every component subclass it sees, into the Space's folder.)"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import gradio as gr
from gradio.data_classes import FileData

from bart_score.inputs import describe

Component = TypeVar("Component", bound=gr.components.Component)


def refused(label: str | None, expected: str, given: Any) -> gr.Error:
    """The error for a value of the wrong type (or, in a list, for its first item of the wrong type)."""
    return gr.Error(f"{label or 'A field'} must be {expected}, got {describe(given)}", print_exception=False)


def text_problem(payload: Any) -> tuple[str, Any] | None:
    return None if payload is None or isinstance(payload, str) else ("text (a string)", payload)


def choice_problem(payload: Any) -> tuple[str, Any] | None:
    return None if payload is None or isinstance(payload, str) else ("one of its choices, given as a string", payload)


def choices_problem(payload: Any) -> tuple[str, Any] | None:
    expected = "a list of its choices, each a string"
    if not isinstance(payload, list):
        return expected, payload
    wrong = [item for item in payload if not isinstance(item, str)]
    return (expected, wrong[0]) if wrong else None


def upload_problem(payload: Any) -> tuple[str, Any] | None:
    if payload is None or isinstance(payload, FileData):
        return None
    return "an uploaded file (gradio_client.handle_file)", payload


# What each kind of component must be given, by its class.
PROBLEMS: dict[type, Callable[[Any], tuple[str, Any] | None]] = {
    gr.Textbox: text_problem,
    gr.Dropdown: choice_problem,
    gr.Radio: choice_problem,
    gr.CheckboxGroup: choices_problem,
    gr.File: upload_problem,
}


def typed(component: Component) -> Component:
    """The component, its API values checked for type before its own preprocess runs."""
    problem_of = PROBLEMS[type(component)]
    if isinstance(component, gr.Dropdown) and component.multiselect:
        problem_of = choices_problem
    preprocess = component.preprocess

    @functools.wraps(preprocess)
    def checked(payload: Any) -> Any:
        problem = problem_of(payload)
        if problem is not None:
            raise refused(component.label, *problem)
        return preprocess(payload)

    component.preprocess = checked  # type: ignore[method-assign]
    return component
