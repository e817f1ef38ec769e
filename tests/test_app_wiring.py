"""The Space's one declaration of each event's inputs (space/wiring.py): the order Gradio lists the components in,
the values a handler reads, and the handlers' signatures, so the API's parameters, all come from it. Expected orders
and names are written out by hand here."""

import asyncio
import inspect
from dataclasses import dataclass
from typing import Generic

import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from support.lazy import LazyModule

import bart_score
import space.wiring
from space.wiring import T, Wired, run_of, takes

# Gradio and what imports it, imported by the first test that uses them (support/lazy.py).
app = LazyModule("app")
space_handlers = LazyModule("space.handlers")
space_requests = LazyModule("support.space_requests")


@dataclass
class Inner(Wired, Generic[T]):
    first: T
    second: T


@dataclass
class Outer(Wired, Generic[T]):
    inner: Inner[T]
    middle: T
    boxes: tuple[T, ...] = run_of("box", 3)
    last: T = "unset"


def test_a_wired_class_lists_reads_and_names_its_values_in_one_order():
    outer = Outer(Inner("a", "b"), "c", ("d", "e", "f"), "g")
    assert list(outer) == ["a", "b", "c", "d", "e", "f", "g"]
    assert Outer.read(["a", "b", "c", "d", "e", "f", "g"]) == outer
    parameters = Outer.parameters()
    assert [parameter.name for parameter in parameters] == [
        "first",
        "second",
        "middle",
        "box_1",
        "box_2",
        "box_3",
        "last",
    ]
    assert [parameter.default for parameter in parameters][-2:] == [inspect.Parameter.empty, "unset"]


class Handlers:
    @takes(Inner)
    def check(self, inner: Inner, extra, more="default"):
        return inner, extra, more

    @takes(Outer)
    async def entry(self, outer: Outer, progress=None):
        return outer, progress


def test_a_handler_that_takes_wired_inputs_is_called_and_described_with_them_spread():
    handlers = Handlers()
    assert handlers.check("a", "b", "x") == (Inner("a", "b"), "x", "default")
    assert handlers.check("a", "b", "x", "y") == (Inner("a", "b"), "x", "y")
    assert list(inspect.signature(Handlers.check).parameters) == ["self", "first", "second", "extra", "more"]
    assert inspect.iscoroutinefunction(Handlers.entry)  # Gradio awaits it on its event loop, not in a thread
    values = ["a", "b", "c", "d", "e", "f", "g"]
    assert asyncio.run(handlers.entry(*values, "tracker")) == (Outer.read(values), "tracker")
    # bound as the signature says: a trailing input left out takes its default, as an API caller may leave it out
    assert asyncio.run(handlers.entry(*values[:-1])) == (Outer.read([*values[:-1], "unset"]), None)
    assert asyncio.run(handlers.entry(*values[:3], box_1="d", box_2="e", box_3="f", progress="p")) == (
        Outer.read([*values[:-1], "unset"]),
        "p",
    )
    with pytest.raises(TypeError):  # an input without a default may not be left out
        asyncio.run(handlers.entry(*values[:2]))
    names = ["self", "first", "second", "middle", "box_1", "box_2", "box_3", "last", "progress"]
    assert list(inspect.signature(Handlers.entry).parameters) == names
    assert list(inspect.signature(handlers.entry).parameters) == names[1:]  # bound, as Gradio inspects it


SETTINGS = ["model", "directions", "aggregation", "prompt_choice", "prompt_phrase", "prompt_side"]
CANDIDATES = [f"candidate_{number}" for number in range(1, 7)]


def test_the_handlers_take_the_settings_first_in_the_wirings_order():
    def names(method):
        return [name for name in inspect.signature(method).parameters if name != "self"]

    assert [parameter.name for parameter in space.wiring.SettingsInputs.parameters()] == SETTINGS
    assert names(space_handlers.CompareHandlers.check) == [*SETTINGS, "source", "references", "texts"]
    assert names(space_handlers.BatchHandlers.check) == [*SETTINGS, "file", "rescale_choice"]
    assert names(space_handlers.CompareHandlers.page) == [*SETTINGS, "source", "references", *CANDIDATES]
    assert names(space_handlers.BatchHandlers.page) == [*SETTINGS, "file", "rescale_choice", "progress"]


@pytest.mark.slow
def test_each_scoring_event_is_named_and_shows_progress_as_its_entry_says(app_settings):
    """Gradio names an event's parameters from its function's signature, and tracks the engine's progress bar where a
    parameter's default is a gr.Progress. The Batch page's entry took *values: Gradio saw neither its parameters nor
    its progress, so a file scored from the page showed no progress bar."""
    demo = app.build_demo(app_settings)
    scoring = {fn.api_name: fn for fn in demo.fns.values() if fn.concurrency_id == app.SCORING_SLOT}
    compare_names = [*SETTINGS, "source", "references", *CANDIDATES]
    batch_names = [*SETTINGS, "file", "rescale_choice"]
    assert {name: fn.input_parameter_names for name, fn in scoring.items()} == {
        "compare": compare_names,
        "page": compare_names,
        "score_file": batch_names,
        "page_1": batch_names,
    }
    assert {name: fn.tracks_progress for name, fn in scoring.items()} == {
        "compare": False,
        "page": False,
        "score_file": True,
        "page_1": True,
    }
    api = demo.get_api_info()["named_endpoints"]
    assert [parameter["parameter_name"] for parameter in api["/compare"]["parameters"]] == compare_names
    assert [parameter["parameter_name"] for parameter in api["/score_file"]["parameters"]] == batch_names
    # the settings' fields start at the options table's defaults, which API callers get when they leave one out
    defaults = {
        parameter["parameter_name"]: parameter["parameter_default"] for parameter in api["/compare"]["parameters"]
    }
    assert defaults["aggregation"] == bart_score.ScoringOptions().aggregation == "mean"
    assert defaults["prompt_side"] == bart_score.ScoringOptions().prompt_side == "encoder"
    # what the tests send for a setting they leave alone (support/space_requests.py) is what the page starts with
    assert [defaults[name] for name in SETTINGS] == space_requests.settings_inputs()
