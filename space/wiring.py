"""The order of the inputs and outputs of each event that has several, written once: a dataclass with one field per
Gradio component, which app.py fills with the components it wires and the handlers with the values Gradio passes and
gets. Gradio lists both by position; iterating one of these gives them in the order of its fields, and a handler that
`takes` one has its signature, so the API's parameters, from it too."""

from __future__ import annotations

import functools
import inspect
import itertools
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Generic, TypeVar

from .form import MAX_CANDIDATES

T = TypeVar("T")  # a Gradio component (app.py) or its value (the handlers)
Flat = TypeVar("Flat", bound="Wired")
Method = TypeVar("Method", bound=Callable[..., Any])


def run_of(item: str, count: int) -> Any:
    """A field holding a run of `count` like components (the candidates' boxes), which the API names item by item:
    `item`_1, `item`_2, ..."""
    return field(metadata={"item": item, "count": count})


class Wired:
    """Iterates over its fields in order, as Gradio lists them: a field holding another Wired gives its own fields in
    place, and a tuple field (a run of like components, such as the candidates' boxes) its items."""

    def __iter__(self) -> Iterator[Any]:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, (Wired, tuple)):
                yield from value
            else:
                yield value

    def as_tuple(self) -> tuple:
        return tuple(self)

    @classmethod
    def read(cls: type[Flat], values: Iterable[Any]) -> Flat:
        """The fields' values taken in order from what Gradio passed, each as many as it spreads over (parameters)."""
        values = iter(values)
        given: dict[str, Any] = {}
        for item in fields(cls):
            nested = _wired_class(cls, item)
            if nested is not None:
                given[item.name] = nested.read(values)
            elif "count" in item.metadata:
                given[item.name] = tuple(itertools.islice(values, item.metadata["count"]))
            else:
                given[item.name] = next(values)
        return cls(**given)

    @classmethod
    def filled(cls: type[Flat], value: Any) -> Flat:
        """Every field the same value (gr.skip(): leave every component as it is)."""
        return cls(*(value for _ in fields(cls)))

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        """A parameter for each component, in Gradio's order, named as the API names it: a field by its name, a Wired
        field's own fields in its place, a run's items by run_of's names; a field's default is its parameter's."""
        listed: list[inspect.Parameter] = []
        for item in fields(cls):
            nested = _wired_class(cls, item)
            if nested is not None:
                listed += nested.parameters()
            elif "count" in item.metadata:
                names = (f"{item.metadata['item']}_{number}" for number in range(1, item.metadata["count"] + 1))
                listed += [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in names]
            else:
                default = inspect.Parameter.empty if item.default is MISSING else item.default
                listed.append(inspect.Parameter(item.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
        return listed


def _wired_class(cls: type, item: Field) -> type[Wired] | None:
    """The Wired class a field holds, or None."""
    held = typing.get_origin(typing.get_type_hints(cls)[item.name])
    return held if isinstance(held, type) and issubclass(held, Wired) else None


def takes(inputs: type[Wired]) -> Callable[[Method], Method]:
    """For a handler method whose first parameter (after self) is one `inputs`: its callers (Gradio, API clients,
    tests) give the values spread, in Gradio's order, and its signature says so, `inputs`' parameters in that one's
    place, so that Gradio names the API's parameters, and fills in its own (a gr.Progress), from the wiring. The
    arguments are bound to that signature, defaults and all; those after `inputs`' own go to the method's further
    parameters."""

    def decorate(method: Method) -> Method:
        own, _, *further = inspect.signature(method).parameters.values()
        spread = inputs.parameters()
        signature = inspect.Signature([own, *spread, *further])

        def arguments(self: Any, values: tuple, keywords: dict) -> tuple:
            bound = signature.bind(self, *values, **keywords)
            bound.apply_defaults()
            given = list(bound.arguments.values())[1:]  # after self
            return inputs.read(given[: len(spread)]), *given[len(spread) :]

        if inspect.iscoroutinefunction(method):

            async def taking(self: Any, *values: Any, **keywords: Any) -> Any:
                return await method(self, *arguments(self, values, keywords))

        else:

            def taking(self: Any, *values: Any, **keywords: Any) -> Any:
                return method(self, *arguments(self, values, keywords))

        functools.update_wrapper(taking, method)
        taking.__signature__ = signature
        return taking

    return decorate


@dataclass
class SettingsInputs(Wired, Generic[T]):
    """The settings both tabs score with."""

    model: T
    directions: T
    aggregation: T
    prompt_choice: T
    prompt_phrase: T
    prompt_side: T


@dataclass
class CompareInputs(Wired, Generic[T]):
    settings: SettingsInputs[T]
    source: T
    references: T
    candidates: tuple[T, ...] = run_of("candidate", MAX_CANDIDATES)  # every candidate box, shown or not


@dataclass
class BatchInputs(Wired, Generic[T]):
    settings: SettingsInputs[T]
    file: T
    rescale_choice: T = "none"  # what an API caller who leaves it out gets (the page's radio starts at it)


@dataclass
class CompareOutputs(Wired, Generic[T]):
    """The Compare tab's results: what API clients get, and the first of the page's outputs."""

    verdict: T
    rescaled: T  # the 0–1 table
    raw: T  # the raw scores' table
    chart: T
    heatmap: T
    signature: T


@dataclass
class BatchOutputs(Wired, Generic[T]):
    """The Batch tab's results: what API clients get, and the first of the page's outputs."""

    summary: T
    rescaled_summary: T
    pairs: T
    rows: T  # the per-row table
    download: T  # the CSV file
    signature: T
    intervals: T  # the plot of means with confidence intervals


@dataclass
class ComparePageOutputs(Wired, Generic[T]):
    """What the page's Compare entry updates."""

    results: CompareOutputs[T]
    results_column: T  # shown after the first result
    score_tabs: T  # the selected table: the 0–1 one, or the raw one when no direction has a scale
    status: T
    settings_accordion: T  # opened when the field at fault is in it
    settings_status: T  # the problem again, beside the settings, when the field at fault is one of them
    marks: tuple[T, ...]  # one per field a problem can be about (handlers.COMPARE_FIELDS)


@dataclass
class BatchPageOutputs(Wired, Generic[T]):
    """What the page's Batch entry updates."""

    results: BatchOutputs[T]
    pairs_cards: T  # the pairs' and the rows' tables as a phone shows them, cards instead of wide tables
    rows_cards: T
    results_column: T  # shown after the first result
    rescaled_tab: T  # the 0–1 summary's tab, shown when rescaled scores were asked for
    summary_tabs: T  # the selected summary
    status: T
    settings_accordion: T  # opened when the field at fault is in it
    settings_status: T  # the problem again, beside the settings, when the field at fault is one of them
    marks: tuple[T, ...]  # one per field a problem can be about (handlers.BATCH_FIELDS)


@dataclass
class ScoringStartedOutputs(Wired, Generic[T]):
    """What a Score button's click updates before the job runs."""

    button: T  # disabled until the job ends
    status: T
    settings_status: T  # emptied
    marks: tuple[T, ...]  # one per field a problem can be about, all unmarked


@dataclass
class CandidateBoxesOutputs(Wired, Generic[T]):
    """What adding or removing a candidate updates."""

    count: T  # how many candidate boxes are shown
    status: T
    boxes: tuple[T, ...]  # every candidate box, shown or not


@dataclass
class ExampleOutputs(Wired, Generic[T]):
    """What choosing an example updates."""

    count: T  # how many candidate boxes are shown
    source: T
    references: T
    directions: T
    prompt_choice: T
    prompt_side: T
    results_column: T  # hidden: the results shown are not the example's
    status: T
    boxes: tuple[T, ...]  # every candidate box, shown or not


@dataclass
class ModelOutputs(Wired, Generic[T]):
    """What choosing a model updates."""

    model: T  # the menu, its help text saying what kind of model it is
    rescale_choice: T  # the Batch tab's choices, "the saved baseline" only where one exists
