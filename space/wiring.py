"""The order of the inputs and outputs of each event that has several, written once: a dataclass with one field per
Gradio component, which app.py fills with the components it wires and the handlers with the values Gradio passes and
gets. Gradio lists both by position; iterating one of these gives them in the order of its fields."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar

T = TypeVar("T")  # a Gradio component (app.py) or its value (the handlers)
Flat = TypeVar("Flat", bound="Wired")


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
        """One value for each field, taken in order from what Gradio passed (a class with a Wired or tuple field
        overrides this to read it)."""
        values = iter(values)
        return cls(*(next(values) for _ in fields(cls)))

    @classmethod
    def filled(cls: type[Flat], value: Any) -> Flat:
        """Every field the same value (gr.skip(): leave every component as it is)."""
        return cls(*(value for _ in fields(cls)))


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
    candidates: tuple[T, ...]  # every candidate box, shown or not

    @classmethod
    def read(cls, values: Iterable[Any]) -> CompareInputs:
        values = iter(values)
        return cls(SettingsInputs.read(values), next(values), next(values), tuple(values))


@dataclass
class BatchInputs(Wired, Generic[T]):
    settings: SettingsInputs[T]
    file: T
    rescale_choice: T

    @classmethod
    def read(cls, values: Iterable[Any]) -> BatchInputs:
        values = iter(values)
        return cls(SettingsInputs.read(values), next(values), next(values))


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
