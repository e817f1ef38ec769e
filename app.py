"""The BARTScore Space: compare candidate outputs side by side, see which tokens the model finds unlikely, and score
whole files of system outputs with confidence intervals and paired significance tests.

Run it with `python app.py` (or as a Hugging Face Space: `app_file: app.py`). All scoring is done by
`bart_score.BARTScorer`. This file is the page's layout and its texts: one function per part of the page (the settings,
each tab), each wiring its events to the handlers of the package `space/` beside it (its docstring lists the modules),
which read and check the inputs, score them, and present the engine's results. An event's inputs and outputs are
listed in the order space/wiring.py writes once for both sides.

Operator settings, read from the environment when the app is built:

    BARTSCORE_APP_MODELS         models offered besides the built-in variants, as "name=checkpoint,name=checkpoint"
                                 (a named configuration, a Hub id or a local checkpoint directory of any supported
                                 family), each optionally followed by ";option=value" parts for source_lang and
                                 target_lang (mBART), template and compatibility (causal LMs), e.g.
                                 "mbart=facebook/mbart-large-50-many-to-many-mmt;source_lang=de_DE;target_lang=en_XX";
                                 or an inference server, "big=vllm+http://127.0.0.1:8000/v1;served_model=NAME"
                                 (served_tokenizer too), asked on each request until it answers, and shown to
                                 visitors by its name alone, never by its URL. The browser only ever picks a name from
                                 this list; it never passes a model id or a path.
    BARTSCORE_APP_DEFAULT_MODEL  the model selected when the page opens (default "cnn").
    BARTSCORE_APP_DEVICE         "cpu", "cuda", "cuda:1", ... (default: CUDA when available).
    BARTSCORE_APP_MAX_CHARS      the most characters in one text: the source, each reference, each candidate, each
                                 text of an uploaded file (default 5000).
    BARTSCORE_APP_MAX_ROWS       the most rows in an uploaded file (default 1000).
    BARTSCORE_APP_MAX_PAIRS      the most (condition, text) pairs one request may need scored: for an uploaded file rows
                                 x systems x (1 for faithfulness + references for each of precision and recall) x
                                 prompts, for Compare candidates x the same + the reference points' pairs, x prompts
                                 (default 20000), so that one request cannot hold the queue for hours.
    BARTSCORE_APP_TRUSTED_PROXIES  the reverse proxies in front of the app, as addresses or networks ("10.0.0.0/8"),
                                 separated by commas: only a request from one of them is taken to come from the address
                                 X-Forwarded-For names, read from its right end (default none: the peer address is the
                                 client, for the per-client limits).
    BARTSCORE_APP_LONG_SOURCE    "windows" (optionally ";windows_k=3;window=longdocfactscore;retriever=bm25", and
                                 ";max_sentences=N", default 10000 per text): the Batch tab scores faithfulness over
                                 source windows (docs/long-documents.md); Compare does not.
    BARTSCORE_PARA_WEIGHTS       the paraphrase-tuned bart.pth; the "cnn-para" variant is offered only when this names
                                 an existing file.
    BARTSCORE_BASELINES          where the Batch tab's "saved baseline" is looked for (files made by `bartscore
                                 baseline`; default ~/.cache/bartscore/baselines).
    GRADIO_ANALYTICS_MAX_EVENTS  how many past requests Gradio keeps a record of (default here 1000, Gradio's own
                                 10,000): each record pins memory (bench/README.md).

Fixed limits (space/form.py, space/batch.py): 2 to 6 candidates (and at most 6 system columns per file), at most 8
references, 16 columns per file, custom prompt phrases of at most 200 characters, uploads of at most 20 MB. The menu's
models are checked when the app starts (space/guards.py: those that cannot be loaded are marked and refused at once;
a served model's server is asked on first use instead);
they are loaded on first use, one per model name, and kept; one scoring computation runs at a time, and a cancelled
job's stops (space/jobs.py). Every route Gradio serves has a body limit and a budget of requests per client, or is
turned off (space/routes.py). Uploads are kept within limits per client and overall, and deleted after 15 minutes, an
API request's when it ends (space/uploads.py). A bad setting stops the app at start with one line naming it.

Uploaded files are read by `bart_score.read_table_corpus`, the reader of the command line's `--input` (columns
`source`, `reference`, `references` or `reference_<n>`, `id`, and one per system); the limits above are the Space's
own.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import gradio as gr
from starlette.middleware import Middleware

import bart_score
from space.batch import MAX_UPLOAD_BYTES, RESCALE_CHOICES
from space.candidates import DIRECTION_LABELS
from space.clients import uvicorn_trusting
from space.events import SCORING_SLOT, UnestimatedScoring, wire_scoring
from space.examples import EXAMPLES
from space.feedback import AT_FAULT, status_line
from space.fields import typed
from space.form import MAX_CANDIDATES, MIN_CANDIDATES, PROMPT_CHOICES
from space.handlers import (
    BATCH_FIELDS,
    COMPARE_FIELDS,
    SETTINGS_FIELDS,
    BatchHandlers,
    CompareHandlers,
    ModelDescriptions,
    add_candidate,
    load_example,
    model_info,
    remove_candidate,
)
from space.heatmap import HEATMAP_CSS
from space.jobs import cancel as cancel_job
from space.naming import FIELD_LABELS
from space.plots import BAR_CHART_CSS, INTERVALS_CSS
from space.routes import RouteGuard
from space.routes import kinds as route_kinds
from space.settings import Settings, check_models, settings_from_env
from space.uploads import SERVER_LEDGER, UPLOAD_SECONDS, UploadGuard
from space.wiring import (
    BatchInputs,
    BatchOutputs,
    BatchPageOutputs,
    CandidateBoxesOutputs,
    CompareInputs,
    CompareOutputs,
    ComparePageOutputs,
    ExampleOutputs,
    ModelOutputs,
    SettingsInputs,
)

ANALYTICS_EVENTS_KEPT = 1000

INTRO = """# BARTScore
Paste a source and/or references, write two or more candidates and press **Score**: each candidate is rated by how
likely the model finds it given the source (faithfulness) or the references (precision, recall, F). Higher is better."""

COMPARE_NOTE = """**Reading the table.** On the *0–1 scale*, 0 is no better than an unrelated text and 1 as likely as a
copy: the last two rows are those reference points, computed on these texts (*copy*: each text given itself;
*unrelated*: given unrelated sentences). **Faithfulness rewards copying the source**: a candidate that repeats the
source scores near 1 on it, so read it beside precision and recall. *Raw scores* are mean log-probabilities per token;
compare them only under the same signature. F's 0–1 value is the mean of precision's and recall's."""

BATCH_INTRO = """Score every system of a **.csv** or **.jsonl** file: each system's mean with a 95% confidence interval,
and a significance test for each pair of systems."""

BATCH_FORMAT = """One row per segment: `source` (optional), `reference`, `references` or `reference_1`, `reference_2`,
... (optional; blank cells are skipped, and a note says how many; in JSONL a reference cell may also be a list), `id`
(optional, kept in the results), and one column per system: **every other column is a system's output**. At least a
source or a reference column is needed, and 1 to 6 systems. Texts are scored exactly as written: an empty output cell is
scored as the empty text. Means come with a 95% bootstrap confidence interval (1000 resamples); each pair of systems
gets a paired bootstrap test and a paired t-test, and "better" names the winner when both find p < 0.05.
**Rescaled scores** place each score between two reference points, 0 = an unrelated text and 1 = a copy: taken from the
file itself (its targets given other rows' texts and given themselves; comparable within this file only), or from the
baseline the operator saved for this model with `bartscore baseline`. A value that cannot be computed (a direction this
model cannot rescale, a test on one row) shows as "–", is an empty cell in the CSV download, and is left out of the
plot."""

# Colours the page sets over Gradio's theme, chosen for WCAG AA contrast (at least 4.5:1 for text).
HELP_TEXT_COLOUR = "#52525b"  # field help and labels, on white
HELP_TEXT_COLOUR_DARK = "#a1a1aa"  # the same in dark mode, on Gradio's dark background
PRIMARY_BUTTON_COLOUR = "#c2410c"  # the Score buttons, under white text
PRIMARY_BUTTON_HOVER = "#9a3412"
PROBLEM_TEXT_COLOUR = "#991b1b"  # the status line's problem, on PROBLEM_BACKGROUND
PROBLEM_BACKGROUND = "#fdecea"
FAULT_COLOUR = "#b91c1c"  # the outline and label of the field a problem is about, on white
DONE_TEXT_COLOUR = "#14532d"  # the status line after a result, on white
NOTE_TEXT_COLOUR = "#3f3f46"
THEME = gr.themes.Default(primary_hue="orange").set(
    body_text_color_subdued=HELP_TEXT_COLOUR,
    body_text_color_subdued_dark=HELP_TEXT_COLOUR_DARK,
    block_label_text_color=HELP_TEXT_COLOUR,
    block_label_text_color_dark=HELP_TEXT_COLOUR_DARK,
    input_placeholder_color=HELP_TEXT_COLOUR,
    input_placeholder_color_dark=HELP_TEXT_COLOUR_DARK,
    button_primary_background_fill=PRIMARY_BUTTON_COLOUR,
    button_primary_background_fill_dark=PRIMARY_BUTTON_COLOUR,
    button_primary_background_fill_hover=PRIMARY_BUTTON_HOVER,
    button_primary_background_fill_hover_dark=PRIMARY_BUTTON_HOVER,
    button_primary_text_color="#ffffff",
    button_primary_text_color_dark="#ffffff",
)
# The field at fault: its boxes outlined; a group of checkboxes or radio buttons has each of its boxes outlined, as
# its wrap ends before the boxes that wrap onto a further line.
CSS = f"""
.status {{ min-height: 2.5em; padding: 0.45em 0.7em; border-radius: 4px; font-size: 0.95em; }}
.status.problem {{ color: {PROBLEM_TEXT_COLOUR}; background: {PROBLEM_BACKGROUND}; border-left: 4px solid #b91c1c; }}
.status.done {{ color: {DONE_TEXT_COLOUR}; }}
.status .note {{ display: block; color: {NOTE_TEXT_COLOUR}; margin-top: 0.2em; }}
.{AT_FAULT} textarea, .{AT_FAULT} input[type=text], .{AT_FAULT} .wrap:not(:has(> label)), .{AT_FAULT} .wrap > label {{
  box-shadow: inset 0 0 0 2px {FAULT_COLOUR}; border-color: {FAULT_COLOUR} !important; }}
#settings-status {{ scroll-margin-top: 0.5em; }}
#settings-status:not(:has(.problem)) {{ display: none; }}
.{AT_FAULT}.block {{ box-shadow: inset 0 0 0 2px {FAULT_COLOUR}; }}
.{AT_FAULT} label span, .{AT_FAULT} [data-testid="block-info"] {{ color: {FAULT_COLOUR} !important; }}
.verdict {{ font-size: 1.08em; margin: 0.2em 0 0.4em; }}
.table-container .header-cell span {{ white-space: normal !important; word-break: normal !important;
  overflow-wrap: normal !important; }}
#summary-tabs .tab-wrapper:not(:has([role=tab] + [role=tab])) {{ display: none; }}
.cards-on-phone {{ display: none !important; }}
.cards-title {{ font-weight: bold; margin: 0.6em 0 0.3em; }}
.cards .card {{ border: 1px solid var(--border-color-primary, #e4e4e7); border-radius: 6px; padding: 0.4em 0.7em;
  margin-bottom: 0.4em; }}
.cards .card-head {{ font-weight: 600; margin: 0 0 0.2em; overflow-wrap: anywhere; }}
.cards dl {{ display: grid; grid-template-columns: auto 1fr; gap: 0.1em 0.8em; margin: 0; }}
.cards dt {{ color: {HELP_TEXT_COLOUR}; }}
.cards dd {{ margin: 0; overflow-wrap: anywhere; white-space: pre-line; }}
@media (max-width: 700px) {{
  .wide-table {{ display: none !important; }}
  .cards-on-phone {{ display: block !important; }}
  .stack-on-phone {{ flex-direction: column !important; }}
  .stack-on-phone > * {{ min-width: 100% !important; }}
  .table-container .body-cell, .table-container .header-cell, .table-container span {{
    font-family: var(--font) !important; font-size: 11px !important; word-break: normal !important;
    overflow-wrap: normal !important; }}
  .table-container .cell-wrap {{ padding-left: 2px !important; padding-right: 2px !important; }}
  .score-table .body-cell span {{ font-weight: normal !important; }}
}}
"""

# The tables' headers wrap between words, never inside one: their column widths (handlers' column_widths) hold each
# header's longest word, and a phone gets a smaller font and less padding. The Batch summary's tab strip is hidden
# while it has one tab (no rescaled scores): the table's label names what it shows.
# The Compare tab's tables.
SCORE_TABLE = dict(interactive=False, wrap=True, show_label=False, pinned_columns=1, elem_classes="score-table")
# The Batch tab's summaries: every system in view (at most 6).
SUMMARY_TABLE = dict(interactive=False, wrap=True, max_height=1000, pinned_columns=1)
LIBRARY_DEFAULTS = bart_score.ScoringOptions()  # the settings' fields start at the options table's defaults


@dataclass
class SettingsPanel:
    """The settings both tabs score with, under one closed accordion."""

    accordion: gr.Accordion
    status: gr.HTML  # a problem with one of these settings, shown beside them (handlers.settings_status)
    inputs: SettingsInputs[gr.components.Component]

    def fields(self) -> dict:
        """The fields a problem can be about, by element id (handlers.SETTINGS_FIELDS)."""
        return {field.elem_id: field for field in self.inputs if field.elem_id in SETTINGS_FIELDS}


def settings_panel(settings: Settings, unavailable: set, default_model: str, descriptions: ModelDescriptions):
    with gr.Accordion(
        descriptions.summary(default_model, list(bart_score.DIRECTIONS), "none")["label"], open=False
    ) as accordion:
        status = gr.HTML(status_line(None), elem_id="settings-status")
        with gr.Row(elem_classes="stack-on-phone"):
            model = typed(
                gr.Dropdown(
                    [(name + (" (not available)" if name in unavailable else ""), name) for name in settings.models],
                    value=default_model,
                    label="Model",
                    info=model_info(descriptions.kind(default_model)),
                    elem_id="model",
                )
            )
            directions = typed(
                gr.CheckboxGroup(
                    [(DIRECTION_LABELS[direction], direction) for direction in bart_score.DIRECTIONS],
                    value=list(bart_score.DIRECTIONS),
                    label=FIELD_LABELS["directions"],
                    info="all ticked: those the texts given allow",
                    elem_id="directions",
                )
            )
            aggregation = typed(
                gr.Radio(
                    list(bart_score.AGGREGATIONS),
                    value=LIBRARY_DEFAULTS.aggregation,
                    label="Several references",
                    info="how precision and recall combine over references",
                )
            )
        with gr.Row(elem_classes="stack-on-phone"):
            prompt_choice = typed(
                gr.Dropdown(
                    PROMPT_CHOICES,
                    value="none",
                    label="Prompt",
                    info="a paper prompt set multiplies the work by its size",
                    elem_id="prompt",
                )
            )
            prompt_phrase = typed(
                gr.Textbox(
                    "",
                    label=FIELD_LABELS["prompt-phrase"],
                    placeholder="e.g. In other words",
                    visible=False,
                    elem_id="prompt-phrase",
                )
            )
            prompt_side = typed(
                gr.Radio(
                    list(bart_score.PROMPT_SIDES),
                    value=LIBRARY_DEFAULTS.prompt_side,
                    label="Prompt side",
                    info='encoder: condition + " <prompt>,"; decoder: "<prompt>, " + scored text',
                )
            )
    return SettingsPanel(
        accordion,
        status,
        SettingsInputs(
            model=model,
            directions=directions,
            aggregation=aggregation,
            prompt_choice=prompt_choice,
            prompt_phrase=prompt_phrase,
            prompt_side=prompt_side,
        ),
    )


def compare_tab(settings: Settings, panel: SettingsPanel) -> None:
    """The Compare tab: its inputs, the Score button with its status line, and the results, hidden until the first
    one."""
    with gr.Row():
        example_buttons = {name: gr.Button(f"Example: {name}", size="sm") for name in EXAMPLES}
    with gr.Row(elem_classes="stack-on-phone"):
        source = typed(
            gr.Textbox(
                "",
                lines=4,
                label=FIELD_LABELS["source"],
                placeholder="Paste the text the candidates were written from",
                elem_id="source",
                info="needed for faithfulness",
            )
        )
        references = typed(
            gr.Textbox(
                "",
                lines=4,
                label=FIELD_LABELS["references"],
                placeholder="Paste one or more references, one per line",
                elem_id="references",
                info="one per line; needed for precision, recall and F",
            )
        )
    candidate_count = gr.State(MIN_CANDIDATES)
    candidates = candidate_boxes(MIN_CANDIDATES)
    with gr.Row(elem_classes="stack-on-phone"):
        add_button = gr.Button("+ Add candidate", size="sm", scale=0, min_width=150)
        remove_button = gr.Button("− Remove last", size="sm", scale=0, min_width=150)
        score_button = gr.Button("Score", variant="primary", scale=0, min_width=140, elem_id="compare-button")
        status = gr.HTML(status_line(None), elem_id="compare-status", scale=4, min_width=300)
    results, score_tabs, outputs = compare_results()

    fields = {**panel.fields(), "source": source, "references": references}
    fields.update({f"candidate-{index + 1}": box for index, box in enumerate(candidates)})
    page_outputs = ComparePageOutputs(
        results=outputs,
        results_column=results,
        score_tabs=score_tabs,
        status=status,
        settings_accordion=panel.accordion,
        settings_status=panel.status,
        marks=tuple(fields[name] for name in COMPARE_FIELDS),
    )
    wire_scoring(
        CompareHandlers(settings),
        score_button,
        CompareInputs(settings=panel.inputs, source=source, references=references, candidates=tuple(candidates)),
        page_outputs,
        field_names=COMPARE_FIELDS,
        api_name="compare",
        busy="Scoring the candidates…",
    )

    shown = list(CandidateBoxesOutputs(count=candidate_count, status=status, boxes=tuple(candidates)))
    add_button.click(add_candidate, candidate_count, shown, api_visibility="private")
    remove_button.click(remove_candidate, [candidate_count, *candidates], shown, api_visibility="private")
    example_outputs = ExampleOutputs(
        count=candidate_count,
        source=source,
        references=references,
        directions=panel.inputs.directions,
        prompt_choice=panel.inputs.prompt_choice,
        prompt_side=panel.inputs.prompt_side,
        results_column=results,
        status=status,
        boxes=tuple(candidates),
    )
    for name, button in example_buttons.items():
        button.click(lambda name=name: load_example(name), None, list(example_outputs), api_visibility="private")


def candidate_boxes(shown: int) -> list[gr.Textbox]:
    """The candidates' boxes, as many as can be compared, the first `shown` visible; empty, as the page opens (an
    example's texts are loaded by its button, never scored unasked)."""
    with gr.Row(elem_classes="stack-on-phone"):
        return [
            typed(
                gr.Textbox(
                    "",
                    lines=3,
                    label=f"Candidate {index + 1}",
                    placeholder="Paste a candidate to score",
                    elem_id=f"candidate-{index + 1}",
                    visible=index < shown,
                    min_width=240,
                )
            )
            for index in range(MAX_CANDIDATES)
        ]


def compare_results() -> tuple[gr.Column, gr.Tabs, CompareOutputs]:
    """The Compare tab's results, hidden until the first: (their column, the score tables' tabs, the outputs)."""
    with gr.Column(visible=False, elem_id="compare-results") as results:
        verdict = gr.HTML(elem_id="verdict")
        with gr.Tabs(elem_id="score-tabs") as score_tabs:
            with gr.Tab("0–1 scale", id="rescaled"):
                rescaled = gr.Dataframe(**SCORE_TABLE, elem_id="rescaled-table")
            with gr.Tab("Raw scores", id="raw"):
                raw = gr.Dataframe(**SCORE_TABLE, elem_id="raw-table")
        gr.Markdown(COMPARE_NOTE, elem_id="compare-note")
        chart = gr.HTML(css_template=BAR_CHART_CSS, js_on_load=None, elem_id="comparison-chart")
        heatmap = gr.HTML(css_template=HEATMAP_CSS, js_on_load=None, elem_id="heatmap")
        signature = gr.Textbox(label="Signature", interactive=False, elem_id="compare-signature")
    outputs = CompareOutputs(
        verdict=verdict, rescaled=rescaled, raw=raw, chart=chart, heatmap=heatmap, signature=signature
    )
    return results, score_tabs, outputs


def batch_tab(settings: Settings, panel: SettingsPanel) -> gr.Radio:
    """The Batch tab: the upload, the rescaling choice, the Score button with its status line and progress, and the
    results, hidden until the first one. Returns the rescaling choice (its choices follow the model)."""
    gr.Markdown(BATCH_INTRO)
    with gr.Accordion("File format and what the results mean", open=False):
        gr.Markdown(BATCH_FORMAT)
    with gr.Row(elem_classes="stack-on-phone"):
        upload = typed(gr.File(label="CSV or JSONL file", file_types=[".csv", ".jsonl"], elem_id="upload"))
        rescale = typed(
            gr.Radio(
                RESCALE_CHOICES,
                value="none",
                label=FIELD_LABELS["rescale"],
                info="0 = an unrelated text, 1 = a copy",
                elem_id="rescale",
            )
        )
    with gr.Row(elem_classes="stack-on-phone"):
        score_button = gr.Button("Score file", variant="primary", scale=0, min_width=140, elem_id="batch-button")
        status = gr.HTML(status_line(None), elem_id="batch-status", scale=4, min_width=300)
    results, rescaled_tab, summary_tabs, (pairs_cards, rows_cards), outputs = batch_results()

    fields = {**panel.fields(), "upload": upload, "rescale": rescale}
    page_outputs = BatchPageOutputs(
        results=outputs,
        pairs_cards=pairs_cards,
        rows_cards=rows_cards,
        results_column=results,
        rescaled_tab=rescaled_tab,
        summary_tabs=summary_tabs,
        status=status,
        settings_accordion=panel.accordion,
        settings_status=panel.status,
        marks=tuple(fields[name] for name in BATCH_FIELDS),
    )
    wire_scoring(
        BatchHandlers(settings),
        score_button,
        BatchInputs(settings=panel.inputs, file=upload, rescale_choice=rescale),
        page_outputs,
        field_names=BATCH_FIELDS,
        api_name="score_file",
        busy="Scoring the file…",
    )
    return rescale


def batch_results() -> tuple[gr.Column, gr.Tab, gr.Tabs, tuple[gr.HTML, gr.HTML], BatchOutputs]:
    """The Batch tab's results, hidden until the first: (their column, the 0–1 summary's tab, the summaries' tabs, the
    pairs' and the rows' cards that a phone shows instead of those wide tables, the outputs)."""
    with gr.Column(visible=False, elem_id="batch-results") as results:
        with gr.Tabs(elem_id="summary-tabs") as summary_tabs:
            with gr.Tab("Raw scores", id="raw"):
                summary = gr.Dataframe(
                    **SUMMARY_TABLE, label="Raw scores: each system's mean [95% CI]", elem_id="summary-table"
                )
            with gr.Tab("0–1 scale", id="rescaled", visible=False) as rescaled_tab:
                rescaled_summary = gr.Dataframe(
                    **SUMMARY_TABLE, label="0–1 scale: each system's mean [95% CI]", elem_id="rescaled-summary-table"
                )
        intervals = gr.HTML(css_template=INTERVALS_CSS, js_on_load=None, elem_id="intervals")
        pairs = gr.Dataframe(
            label="Paired significance (bootstrap and t-test; better: p < 0.05 in both)",
            interactive=False,
            wrap=True,
            elem_id="pairs-table",
            elem_classes="wide-table",
        )
        pairs_cards = gr.HTML(elem_id="pairs-cards", elem_classes="cards-on-phone")
        rows = gr.Dataframe(
            label="Per-row scores (sort from a column's ⋮ menu)",
            interactive=False,
            wrap=True,
            max_chars=60,
            show_search="search",
            elem_id="rows-table",
            elem_classes="wide-table",
        )
        rows_cards = gr.HTML(elem_id="rows-cards", elem_classes="cards-on-phone")
        download = gr.File(label="Download the per-row scores (CSV)", elem_id="download")
        signature = gr.Textbox(label="Signature", interactive=False, elem_id="batch-signature")
    outputs = BatchOutputs(
        summary=summary,
        rescaled_summary=rescaled_summary,
        pairs=pairs,
        rows=rows,
        download=download,
        signature=signature,
        intervals=intervals,
    )
    return results, rescaled_tab, summary_tabs, (pairs_cards, rows_cards), outputs


def build_demo(settings: Settings | None = None) -> gr.Blocks:
    """The Blocks of the app; builds the UI only (models load on first use)."""
    settings = settings or settings_from_env()
    unavailable = check_models(settings)
    available = [name for name in settings.models if name not in unavailable]
    # An unavailable default would fail every first click: the page opens on the first model that can be loaded.
    default_model = (
        settings.default_model if settings.default_model not in unavailable or not available else available[0]
    )
    descriptions = ModelDescriptions(settings)
    with gr.Blocks(title="BARTScore", delete_cache=(600, UPLOAD_SECONDS)) as demo:
        gr.Markdown(INTRO, elem_id="intro")
        panel = settings_panel(settings, unavailable, default_model, descriptions)
        with gr.Tabs():
            with gr.Tab("Compare"):
                compare_tab(settings, panel)
            with gr.Tab("Batch"):
                rescale = batch_tab(settings, panel)
        form = panel.inputs
        form.prompt_choice.change(
            lambda choice: gr.update(visible=choice == "custom"),
            form.prompt_choice,
            form.prompt_phrase,
            api_visibility="private",
        )
        described = list(ModelOutputs(model=form.model, rescale_choice=rescale))
        for trigger in (demo.load, form.model.change):
            trigger(descriptions.describe, [form.model, rescale], described, api_visibility="private")
        summarised = [form.model, form.directions, form.prompt_choice]
        for component in summarised:
            component.change(descriptions.summary, summarised, panel.accordion, api_visibility="private")
    # Gradio keeps a record of the last GRADIO_ANALYTICS_MAX_EVENTS requests (10,000 unless set); each pins memory
    # that is not given back, so the resident size grew with every request up to that number (bench/README.md).
    os.environ.setdefault("GRADIO_ANALYTICS_MAX_EVENTS", str(ANALYTICS_EVENTS_KEPT))
    # api_open=False: the REST routes' direct calls (/gradio_api/run/compare) may not skip the queue and its limits.
    demo.queue(default_concurrency_limit=1, max_size=32, api_open=False)
    demo._queue.process_time_per_fn = UnestimatedScoring(
        {fn for fn in demo.fns.values() if fn.concurrency_id == SCORING_SLOT}
    )
    return demo


def launch(demo: gr.Blocks, settings: Settings | None = None, **options) -> None:
    """Serves the app as the Space does: every route Gradio serves bounded (its body, each client's requests) or
    turned off (space/routes.py), uploads refused while uploading past their size (before they fill the disk) and kept
    within limits per client and in all (space/uploads.py), a client named by the operator's trusted proxies
    (space/clients.py), with the page's theme. `settings`: those `demo` was built with (read from the environment
    when not given); `options`: demo.launch's own."""
    settings = settings or operator_settings()
    SERVER_LEDGER.folder = demo.GRADIO_CACHE  # its cap counts everything Gradio stores there
    trusted = settings.trusted_proxies
    middleware = [
        Middleware(RouteGuard, limits=route_kinds(settings.max_chars), trusted=trusted, on_cancel=cancel_job),
        Middleware(UploadGuard, ledger=SERVER_LEDGER, trusted=trusted),
    ]
    # Server-side rendering fetches the page from this server on loopback, which would make every visitor one client
    # of the per-client limits; the run history stores its runs in a bucket that a visitor names.
    options = {"ssr_mode": False, "run_history": False, **options}
    with uvicorn_trusting(trusted):
        demo.launch(
            max_file_size=MAX_UPLOAD_BYTES, app_kwargs={"middleware": middleware}, theme=THEME, css=CSS, **options
        )


def operator_settings() -> Settings:
    """The operator's settings (settings_from_env): a bad one ends the app at start with one line naming its variable,
    exit status 2 (a usage error, as on the command line)."""
    try:
        return settings_from_env()
    except ValueError as error:
        print(f"app.py: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None


settings = operator_settings()
demo = build_demo(settings)

if __name__ == "__main__":
    launch(demo, settings)
