"""The Space's page: what it says about a model (found without loading it), its own entries (a problem stays in the
status line and marks the field at fault), the order of its inputs, the wording of counts, and its colours' contrast."""

import asyncio
import dataclasses
import html
import inspect
import json
import re

import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from support.app_server import MAX_CHARS
from support.contrast import contrast
from support.lazy import LazyModule
from support.space_inputs import CANDIDATES, SOURCE
from support.space_requests import REFERENCE_LINES, candidate_boxes, parse, settings_inputs, write

import bart_score
import bart_score.inputs
import space.form
import space.menu
import space.wiring
from bart_score.baselines import files as baseline_files
from bart_score.baselines.build import build_baseline

# Gradio and what imports it, imported by the first test that uses them (support/lazy.py).
gr = LazyModule("gradio")
app = LazyModule("app")
space_feedback = LazyModule("space.feedback")
space_handlers = LazyModule("space.handlers")


# ---------------------------------------------------------------------------------------------------------------------
# What the page says about a model, found without loading it


@pytest.mark.parametrize(
    "config, kind",
    [
        ({"model_type": "bart", "is_encoder_decoder": True}, "BART"),
        ({"model_type": "t5", "is_encoder_decoder": True}, "T5"),
        ({"model_type": "llama"}, "causal language model"),
        ({"model_type": "something-new", "is_encoder_decoder": True}, "model"),
    ],
)
def test_labels_follow_the_models_family(tmp_path, config, kind):
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert space.menu.model_kind(str(tmp_path)) == kind
    info = space_handlers.model_info(kind)
    assert ("BART" in info) == (kind == "BART") and info.endswith("that does the scoring")


def test_a_model_whose_configuration_cannot_be_read_is_called_a_model(tmp_path, tiny_checkpoint, empty_hf_cache):
    assert space.menu.model_kind(tiny_checkpoint) == "BART"
    assert space.menu.model_kind(str(tmp_path / "nothing")) == "model"
    assert space.menu.model_kind("org/not-cached") == "model"
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    assert space.menu.model_kind(str(tmp_path)) == "model"


def test_the_saved_baseline_is_offered_only_for_a_model_that_has_one(app_settings, scorer, tmp_path, monkeypatch):
    monkeypatch.setenv(baseline_files.BASELINE_FOLDER_ENV, str(tmp_path / "baselines"))
    descriptions = space_handlers.ModelDescriptions(app_settings)
    offered = lambda model, choice="baseline": descriptions.describe(model, choice)[1]  # noqa: E731
    assert [value for _, value in offered("tiny")["choices"]] == ["none", "corpus"]
    assert offered("tiny")["value"] == "none"  # a choice no longer offered falls back to none
    texts = ["the cat sat", "the rain fell", "a road", "the dog"]
    corpus_file = tmp_path / "texts.txt"
    corpus_file.write_text("\n".join(texts) + "\n", encoding="utf-8")
    document = build_baseline(scorer, texts=texts, corpus_file=str(corpus_file))
    baseline_files.write_baseline(document, baseline_files.default_baseline_path(document["settings"]))
    assert [value for _, value in offered("tiny")["choices"]] == ["none", "corpus", "baseline"]
    assert offered("tiny")["value"] == "baseline"
    assert [value for _, value in offered("copier")["choices"]] == ["none", "corpus"]  # another model's: not its own
    assert descriptions.describe("tiny", "none")[0]["info"] == "the BART checkpoint that does the scoring"


# ---------------------------------------------------------------------------------------------------------------------
# The page's own entries: problems stay in the status line and mark the field at fault


def page_entry(handlers_class, settings, *inputs):
    return asyncio.run(handlers_class(settings).page(*inputs))


@pytest.mark.parametrize(
    "arguments, field, message",
    [
        (dict(candidates=["only one"]), "candidate-2", "Enter at least 2 candidates to compare (found 1)"),
        (dict(candidates=["a", "b" * (MAX_CHARS + 1)]), "candidate-2", "Candidate 2 has"),
        (dict(source="s" * (MAX_CHARS + 1)), "source", "The source has"),
        (dict(references="ok\nA <s> <b>reference</b>"), "references", "Reference 2 contains &lt;s&gt;"),
        (dict(directions=[]), "directions", "Choose at least one direction"),
        (
            dict(source="", directions=["faithfulness", "recall"]),
            "directions",
            "direction 'faithfulness' (source -> prediction) needs Source, which",
        ),
        (dict(prompt_choice="custom", prompt_phrase=" "), "prompt-phrase", "Enter a custom prompt phrase"),
        (dict(model="missing"), "model", "The model &#x27;missing&#x27; is not available"),
    ],
)
def test_the_page_keeps_a_problem_in_the_status_line_and_marks_the_field(app_settings, arguments, field, message):
    candidates = arguments.pop("candidates", CANDIDATES[:2])
    inputs = [
        *settings_inputs(**{k: v for k, v in arguments.items() if k not in ("source", "references")}),
        arguments.get("source", SOURCE),
        arguments.get("references", REFERENCE_LINES),
        *candidate_boxes(*candidates),
    ]
    outputs = page_entry(space_handlers.CompareHandlers, app_settings, *inputs)
    shown, (results, _, status, accordion, settings_status), marks = outputs[:6], outputs[6:11], outputs[11:]
    assert all(update == gr.skip() for update in shown) and results == {"__type__": "update", "visible": False}
    assert status.startswith('<div class="status problem" role="alert"><strong>Not scored:</strong> ')
    assert html.escape(html.unescape(message), quote=False) in status or message in status
    assert "<b>" not in status  # what the user sent is escaped
    marked = [name for name, mark in zip(space_handlers.COMPARE_FIELDS, marks) if mark["elem_classes"]]
    assert marked == [field]
    in_the_settings = field in space_handlers.SETTINGS_FIELDS
    assert accordion == ({"__type__": "update", "open": True} if in_the_settings else gr.skip())
    # a problem with the settings is said beside them too (on a phone, far above the button's status line)
    assert settings_status == (status if in_the_settings else space_feedback.status_line(None))


def test_the_page_shows_a_result_with_its_notes_and_unmarks_every_field(app_settings, tmp_path):
    path = write(tmp_path, "blank.csv", "source,reference_1,reference_2,A,B\nthe cat,the dog,,a,b\nthe mat,x,y,c,d\n")
    outputs = page_entry(
        space_handlers.BatchHandlers, app_settings, *settings_inputs(directions=["precision"]), path, "none"
    )
    pairs_cards, rows_cards, results, rescaled_tab, _, status, _, settings_status = outputs[7:15]
    assert outputs[3]["datatype"][:4] == ["number", "str", "str", "number"]  # row, system, output, precision
    assert results == {"__type__": "update", "visible": True} and rescaled_tab["visible"] is False
    assert status.startswith('<div class="status done" role="status">Done.<span class="note">Note: 1 blank reference')
    assert settings_status == space_feedback.status_line(None)
    assert all(mark["elem_classes"] == [] for mark in outputs[15:])
    assert len(outputs[15:]) == len(space_handlers.BATCH_FIELDS)
    assert '<p class="card-head">1 · A</p>' in rows_cards and "<dt>precision</dt>" in rows_cards
    assert '<p class="card-head">precision: A vs B</p>' in pairs_cards


def wired_names(wired_class, candidates=0):
    """The names of a space.wiring class's fields, spread as Gradio lists them (a tuple field as its candidates)."""
    names = []
    for item in dataclasses.fields(wired_class):
        if item.name == "settings":
            names += [setting.name for setting in dataclasses.fields(space.wiring.SettingsInputs)]
        elif item.name == "candidates":
            names += [f"candidate_{number}" for number in range(1, candidates + 1)]
        else:
            names.append(item.name)
    return names


def test_the_wiring_orders_the_inputs_as_the_api_names_them():
    """The page's entry reads its inputs by space.wiring's field order, the API by its parameters: one order."""
    compare = [name for name in inspect.signature(space_handlers.CompareHandlers.api).parameters if name != "self"]
    batch = [name for name in inspect.signature(space_handlers.BatchHandlers.api).parameters if name != "self"]
    assert wired_names(space.wiring.CompareInputs, space.form.MAX_CANDIDATES) == compare
    assert wired_names(space.wiring.BatchInputs) == [name for name in batch if name != "progress"]
    values = list(range(len(compare)))  # each input's value is its place in the API
    read = space.wiring.CompareInputs.read(values)
    boxes = tuple(compare.index(f"candidate_{number}") for number in range(1, space.form.MAX_CANDIDATES + 1))
    assert read.source == compare.index("source") and read.candidates == boxes and list(read) == values
    settings = [item.name for item in dataclasses.fields(read.settings)]
    assert [getattr(read.settings, name) for name in settings] == [compare.index(name) for name in settings]
    batch_values = [place for place, name in enumerate(batch) if name != "progress"]
    assert list(space.wiring.BatchInputs.read(batch_values)) == batch_values


def test_counts_are_written_with_the_number_their_noun_takes(tmp_path):
    assert [bart_score.inputs.counted(n, "field") for n in (0, 1, 2)] == ["0 fields", "1 field", "2 fields"]
    assert bart_score.inputs.counted(1, "reply", "replies") == "1 reply"
    path = write(tmp_path, "ragged.csv", "source,sys,other\na,b,c\nd\n")
    with pytest.raises(ValueError, match=re.escape("ragged.csv line 3 has 1 field but the header has 3")):
        parse(path)
    with pytest.raises(ValueError, match=re.escape("rows.csv has more than 1 row; the limit is 1")):
        parse(write(tmp_path, "rows.csv", "source,sys\na,b\nc,d\n"), max_rows=1)
    one = [label for label, value in space.form.PROMPT_CHOICES if value in bart_score.PROMPT_SETS]
    assert not any(re.search(r"\b1 phrases\b", label) for label in one)


# ---------------------------------------------------------------------------------------------------------------------
# Contrast


def hexadecimal(colour):
    """(r, g, b) of a "#rrggbb" colour."""
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def test_the_colours_the_page_sets_have_aa_contrast():
    """The colours app.py sets, against the backgrounds they are drawn on (WCAG AA: at least 4.5:1 for text)."""
    white, gradio_dark = "#ffffff", "#0b0f19"
    pairs = [
        (app.HELP_TEXT_COLOUR, white),
        (app.HELP_TEXT_COLOUR_DARK, gradio_dark),
        (white, app.PRIMARY_BUTTON_COLOUR),
        (white, app.PRIMARY_BUTTON_HOVER),
        (app.PROBLEM_TEXT_COLOUR, app.PROBLEM_BACKGROUND),
        (app.DONE_TEXT_COLOUR, white),
        (app.NOTE_TEXT_COLOUR, white),
        (app.FAULT_COLOUR, white),
    ]
    for foreground, background in pairs:
        assert contrast(hexadecimal(foreground), hexadecimal(background)) >= 4.5, (foreground, background)
    assert contrast(hexadecimal("#bbbbc2"), hexadecimal(white)) < 2  # the theme's own help text, which this replaces
