"""The BARTScore Space: compare candidate outputs side by side, see which tokens the model finds unlikely, and score
whole files of system outputs with confidence intervals and paired significance tests.

Run it with `python app.py` (or as a Hugging Face Space: `app_file: app.py`). All scoring is done by
`bart_score.BARTScorer`. This file is the user interface only: the page's layout, its texts and examples, and the
event handlers, which call the package `space/` beside it (its docstring lists the modules) to read and check the
inputs, score them, and present the engine's results.

Operator settings, read from the environment when the app is built:

    BARTSCORE_APP_MODELS         models offered besides the built-in variants, as "name=checkpoint,name=checkpoint"
                                 (a named configuration, a Hub id or a local checkpoint directory of any supported
                                 family), each optionally followed by ";option=value" parts for source_lang and
                                 target_lang (mBART), template and compatibility (causal LMs), e.g.
                                 "mbart=facebook/mbart-large-50-many-to-many-mmt;source_lang=de_DE;target_lang=en_XX".
                                 The browser only ever picks a name from this list; it never passes a model id or a
                                 path.
    BARTSCORE_APP_DEFAULT_MODEL  the model selected when the page opens (default "cnn").
    BARTSCORE_APP_DEVICE         "cpu", "cuda", "cuda:1", ... (default: CUDA when available).
    BARTSCORE_APP_MAX_CHARS      the most characters in one text: the source, each reference, each candidate, each
                                 text of an uploaded file (default 5000).
    BARTSCORE_APP_MAX_ROWS       the most rows in an uploaded file (default 1000).
    BARTSCORE_APP_MAX_PAIRS      the most (condition, text) pairs one request may need scored: for an uploaded file rows
                                 x systems x (1 for faithfulness + references for each of precision and recall) x
                                 prompts, for Compare candidates x the same + the reference points' pairs, x prompts
                                 (default 20000), so that one request cannot hold the queue for hours.
    BARTSCORE_APP_LONG_SOURCE    "windows" (optionally ";windows_k=3;window=longdocfactscore;retriever=bm25"): the Batch
                                 tab scores faithfulness over source windows (docs/long-documents.md); Compare does not.
    BARTSCORE_PARA_WEIGHTS       the paraphrase-tuned bart.pth; the "cnn-para" variant is offered only when this names
                                 an existing file.
    BARTSCORE_BASELINES          where the Batch tab's "saved baseline" is looked for (files made by `bartscore
                                 baseline`; default ~/.cache/bartscore/baselines).
    GRADIO_ANALYTICS_MAX_EVENTS  how many past requests Gradio keeps a record of (default here 1000, Gradio's own
                                 10,000): each record pins memory (bench/README.md).

Fixed limits (space/inputs.py, space/batch.py): 2 to 6 candidates (and at most 6 system columns per file), at most 8
references, 16 columns per file, custom prompt phrases of at most 200 characters, uploads of at most 20 MB. The menu's
models are checked when the app starts (space/guards.py: those that cannot be loaded are marked and refused at once);
they are loaded on first use, one per model name, and kept; the queue runs one scoring job at a time.

Uploaded files are read by `bart_score.read_table_corpus`, the reader of the command line's `--input` (columns
`source`, `reference`, `references` or `reference_<n>`, `id`, and one per system); the limits above are the Space's
own.
"""

from __future__ import annotations

import contextlib
import html
import os
import warnings

import gradio as gr

import bart_score
from space.batch import (
    MAX_UPLOAD_BYTES,
    RESCALE_CHOICES,
    blank_reference_note,
    check_work,
    formatted,
    p_value_text,
    parse_rescale,
    parse_upload,
    score_upload,
    upload_texts,
    write_results_csv,
)
from space.compare import (
    chart_y_limits,
    check_compare_work,
    compare_candidates,
    comparison_chart,
    comparison_table,
)
from space.guards import memory_returned_after, public_message, public_signature, refuse_special_tokens
from space.heatmap import HEATMAP_CSS, token_heatmap
from space.inputs import (
    MAX_CANDIDATES,
    MIN_CANDIDATES,
    PROMPT_CHOICES,
    check_directions,
    check_field,
    check_references,
    collect_candidates,
    custom_phrase,
    parse_prompt,
    parse_references,
)
from space.plots import INTERVALS_CSS, interval_plot
from space.settings import check_models, load_scorer, settings_from_env

ANALYTICS_EVENTS_KEPT = 1000


@contextlib.contextmanager
def shown_in_ui():
    """User mistakes, unloadable models and the engine's warnings become messages in the browser, never a traceback
    or a bare "Error". Yields a list: notes appended to it are shown as warnings when the block ends without error.
    Gradio renders a message as HTML, and messages quote what the user sent (column names, texts), so every message
    is escaped: markup shows as text; and none shows a server path (public_message)."""
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield notes
        except gr.Error:
            raise
        except MemoryError:
            raise gr.Error("The server ran out of memory for this request; send fewer or shorter texts") from None
        except Exception as error:  # anything else a handler calls: a message, with the details in the server's log
            raise gr.Error(as_text(public_message(error)), print_exception=False) from None
    for warning in caught:
        if str(warning.message).startswith("BARTScore"):  # the engine's truncation and rescaling notices
            gr.Warning(as_text(public_message(str(warning.message))))
    for note in notes:
        gr.Warning(as_text(note))


def as_text(message):
    """A message that a browser shows as written, whatever markup it quotes."""
    return html.escape(message, quote=False)


EXAMPLES = {
    "summarization": {
        "source": (
            "The city council of Riverton voted 7 to 2 on Tuesday to build a new public library on the site of the "
            "old bus depot. Construction is expected to start next spring and to cost about 12 million dollars, most "
            "of it paid by a state grant. Mayor Ellen Price said the library would open in 2027 with a children's "
            "wing and a community kitchen. The two council members who voted against the plan argued that the money "
            "should go to road repairs instead."
        ),
        "references": (
            "Riverton's council approved a 12 million dollar library on the old bus depot site, to open in 2027."
        ),
        "candidates": [
            "Riverton's council voted 7 to 2 to build a new library on the old bus depot site, paid mostly by a state "
            "grant.",
            "Riverton's council unanimously rejected a new library, saying the money should go to a football stadium.",
        ],
        "directions": list(bart_score.DIRECTIONS),
        "prompt": "none",
        "prompt_side": "encoder",
    },
    "translation": {
        # BART reads English only, so translations are judged against references, not against the German source.
        "source": "",
        "references": (
            "Tomorrow the weather will be sunny, with temperatures of up to 25 degrees.\n"
            "It will be sunny tomorrow and as warm as 25 degrees."
        ),
        "candidates": [
            "Tomorrow it will be sunny, with temperatures up to 25 degrees.",
            "The weather becomes tomorrow sunny, with temperatures until 25 degrees.",
            "Yesterday it rained, and the temperature fell to 5 degrees.",
        ],
        "directions": ["precision", "recall", "f_score"],
        "prompt": "mt",
        "prompt_side": "encoder",
    },
}

INTRO = """# BARTScore
Judge generated text by how likely BART finds it (Yuan, Neubig & Liu, NeurIPS 2021): **faithfulness** (source →
candidate), **precision** (reference → candidate), **recall** (candidate → reference) and **F** (their mean). Scores
are mean log-probabilities per token: negative, and **higher is better**. Compare scores only under the same
signature."""

RESCALE_HELP = """**Where the scores fall.** A raw score is a mean log-probability per token, so it only means something
next to another. The last two rows of the table are each direction's reference points, computed on the texts above:
**copy**, the candidates (or, for recall, the references) given themselves, and **unrelated**, the same texts given a
fixed set of unrelated sentences. The *0–1* columns and the chart place each score between them: 0 is no better than
an unrelated text, 1 is as likely as a copy. The map is linear, so it never changes which candidate is best."""

BATCH_HELP = """Upload a **.csv** or **.jsonl** (UTF-8) file with one row per segment: `source` (optional), `reference`,
`references` or `reference_1`, `reference_2`, ... (optional; blank cells are skipped, and a note says how many; in JSONL
a reference cell may also be a list), `id` (optional, kept in the results), and one column per system: **every other
column is a system's output**. At least a source or a reference column is needed, and 1 to 6 systems. Texts are scored
exactly as written: an empty output cell is scored as the empty text. The summary gives each system's mean with a 95%
bootstrap confidence interval (1000 resamples), plotted per direction, and for each pair of systems a paired bootstrap
test and a paired t-test; "better" names the winner at p < 0.05.
**Rescaled scores** place each score between two reference points, 0 = an unrelated text and 1 = a copy: taken from the
file itself (its targets given other rows' texts and given themselves; comparable within this file only), or from the
baseline the operator saved for this model with `bartscore baseline`. The winners do not change. A value that cannot be
computed (a direction this model cannot rescale, a test on one row) shows as "–", is an empty cell in the CSV download,
and is left out of the plot."""


def candidate_boxes_update(count, values=None):
    """Shows the first `count` candidate boxes; with values, also sets the boxes' texts ("" for the hidden ones)."""
    if values is None:
        return [gr.Textbox(visible=index < count) for index in range(MAX_CANDIDATES)]
    values = list(values) + [""] * (MAX_CANDIDATES - len(values))
    return [gr.Textbox(visible=index < count, value=value) for index, value in enumerate(values)]


def build_demo(settings=None):
    """The Blocks of the app; builds the UI only (models load on first use)."""
    settings = settings or settings_from_env()
    example = EXAMPLES["summarization"]
    unavailable = check_models(settings)
    available = [name for name in settings.models if name not in unavailable]
    # An unavailable default would fail every first click: the page opens on the first model that can be loaded.
    default_model = (
        settings.default_model if settings.default_model not in unavailable or not available else available[0]
    )

    def compare(
        model, directions, aggregation, prompt_choice, prompt_phrase, prompt_side, source, references, *candidate_texts
    ):
        with shown_in_ui(), memory_returned_after():
            source = (source or "").strip()
            check_field(source, "The source", settings.max_chars)
            references = parse_references(references)
            check_references(references, settings.max_chars)
            candidates = collect_candidates(candidate_texts, settings.max_chars)
            directions = check_directions(directions, has_source=bool(source), has_references=bool(references))
            prompt = parse_prompt(prompt_choice, prompt_phrase)
            check_compare_work(
                source=source,
                references=references,
                candidates=candidates,
                directions=directions,
                prompt=prompt,
                max_pairs=settings.max_pairs,
                by_direction=bool(settings.models.get(model, {}).get("chat")),
            )
            scorer = load_scorer(settings, model)
            refuse_special_tokens(
                [
                    ("The source", source),
                    *((f"Reference {number}", reference) for number, reference in enumerate(references, 1)),
                    *candidates,
                    *custom_phrase(prompt_choice, prompt),
                ],
                scorer.tokenizer.all_special_tokens,
            )
            comparison = compare_candidates(
                scorer,
                source=source,
                references=references,
                candidates=candidates,
                directions=directions,
                aggregation=aggregation,
                prompt=prompt,
                prompt_side=prompt_side,
            )
            chart = comparison_chart(comparison)
            return (
                comparison_table(comparison),
                gr.BarPlot(value=chart, sort=list(chart["bar"]), y_lim=chart_y_limits(chart)),
                token_heatmap(comparison),
                public_signature(comparison.signature, model, settings.models[model]["checkpoint"]),
            )

    def score_file(
        model,
        directions,
        aggregation,
        prompt_choice,
        prompt_phrase,
        prompt_side,
        file,
        rescale_choice="none",
        progress=gr.Progress(track_tqdm=True),
    ):
        with shown_in_ui() as notes, memory_returned_after():
            corpus = parse_upload(file, max_rows=settings.max_rows, max_chars=settings.max_chars)
            directions = check_directions(
                directions, has_source=corpus.sources is not None, has_references=corpus.references is not None
            )
            prompt = parse_prompt(prompt_choice, prompt_phrase)
            rescale = parse_rescale(rescale_choice)
            check_work(corpus, directions, prompt, settings.max_pairs, rescale, settings.long_source)
            progress(0, desc=f"Loading {model}")
            scorer = load_scorer(settings, model)
            refuse_special_tokens(
                [*custom_phrase(prompt_choice, prompt), *upload_texts(corpus)], scorer.tokenizer.all_special_tokens
            )
            result = score_upload(
                scorer,
                corpus,
                directions=directions,
                aggregation=aggregation,
                prompt=prompt,
                prompt_side=prompt_side,
                rescale=rescale,
                long_source=settings.long_source,
                model_name=model,
            )
            notes.extend(filter(None, [blank_reference_note(corpus)]))
            score_columns = [column for column in result.rows.columns if "/" in column]
            # Built inside shown_in_ui too: whatever fails here is a message, not a bare "Error".
            return (
                formatted(result.summary, dict.fromkeys(result.summary.columns[2:], "{:.4f}")),
                formatted(
                    result.pairs,
                    {"Δ mean (A − B)": "{:.4f}", "bootstrap p": p_value_text, "t-test p": p_value_text},
                ),
                formatted(result.rows, dict.fromkeys(score_columns, "{:.4f}")),
                write_results_csv(result.rows),
                public_signature(result.signature, model, settings.models[model]["checkpoint"]),
                interval_plot(result.summary),
            )

    def add_candidate(count):
        if count >= MAX_CANDIDATES:
            gr.Warning(f"At most {MAX_CANDIDATES} candidates can be compared")
            return count, *candidate_boxes_update(count)
        return count + 1, *candidate_boxes_update(count + 1)

    def remove_candidate(count, *texts):
        if count <= MIN_CANDIDATES:
            gr.Warning(f"At least {MIN_CANDIDATES} candidates are compared")
            return count, *candidate_boxes_update(count)
        return count - 1, *candidate_boxes_update(count - 1, list(texts[: count - 1]))

    def load_example(name):
        chosen = EXAMPLES[name]
        count = len(chosen["candidates"])
        return (
            count,
            chosen["source"],
            chosen["references"],
            chosen["directions"],
            chosen["prompt"],
            chosen["prompt_side"],
            *candidate_boxes_update(count, chosen["candidates"]),
        )

    with gr.Blocks(title="BARTScore", delete_cache=(3600, 3600)) as demo:
        gr.Markdown(INTRO)
        with gr.Accordion("Settings (both tabs)", open=True):
            with gr.Row():
                model = gr.Dropdown(
                    [(name + (" (not available)" if name in unavailable else ""), name) for name in settings.models],
                    value=default_model,
                    label="Model",
                    info="BART checkpoint that does the scoring",
                    elem_id="model",
                )
                directions = gr.CheckboxGroup(
                    list(bart_score.DIRECTIONS), value=example["directions"], label="Directions", elem_id="directions"
                )
                aggregation = gr.Radio(
                    list(bart_score.AGGREGATIONS),
                    value="mean",
                    label="Several references",
                    info="how precision and recall combine over references",
                )
            with gr.Row():
                prompt_choice = gr.Dropdown(
                    PROMPT_CHOICES,
                    value=example["prompt"],
                    label="Prompt",
                    info="a paper prompt set multiplies the work by its size",
                )
                prompt_phrase = gr.Textbox(
                    label="Custom prompt phrase", placeholder="e.g. In other words", visible=False
                )
                prompt_side = gr.Radio(
                    list(bart_score.PROMPT_SIDES),
                    value=example["prompt_side"],
                    label="Prompt side",
                    info='encoder: condition + " <prompt>,"; decoder: "<prompt>, " + scored text',
                )

        with gr.Tabs():
            with gr.Tab("Compare"):
                with gr.Row():
                    summarization_example = gr.Button("Example: summarization", size="sm")
                    translation_example = gr.Button("Example: translation", size="sm")
                with gr.Row():
                    source = gr.Textbox(
                        example["source"],
                        lines=5,
                        label="Source",
                        elem_id="source",
                        info="optional; needed for faithfulness",
                    )
                    references = gr.Textbox(
                        example["references"],
                        lines=5,
                        label="References",
                        elem_id="references",
                        info="one per line; optional; needed for precision, recall and F",
                    )
                candidate_count = gr.State(len(example["candidates"]))
                with gr.Row():
                    candidate_boxes = [
                        gr.Textbox(
                            example["candidates"][index] if index < len(example["candidates"]) else "",
                            lines=4,
                            label=f"Candidate {index + 1}",
                            elem_id=f"candidate-{index + 1}",
                            visible=index < len(example["candidates"]),
                            min_width=240,
                        )
                        for index in range(MAX_CANDIDATES)
                    ]
                with gr.Row():
                    add_button = gr.Button("+ Add candidate", size="sm")
                    remove_button = gr.Button("− Remove last candidate", size="sm")
                    compare_button = gr.Button("Score", variant="primary", elem_id="compare-button")
                comparison_output = gr.Dataframe(
                    label="Scores (best of each direction highlighted)", interactive=False, elem_id="comparison-table"
                )
                chart_output = gr.BarPlot(
                    x="bar",
                    y="rescaled",
                    color="candidate",
                    label="Rescaled scores by direction (hover for the raw score)",
                    x_title="direction · candidate",
                    y_title="rescaled: 0 = unrelated text, 1 = copy",
                    x_label_angle=-30,
                    tooltip=["candidate", "direction", "rescaled", "score"],
                    elem_id="comparison-chart",
                )
                gr.Markdown(RESCALE_HELP)
                heatmap_output = gr.HTML(
                    label="Token log-probabilities", css_template=HEATMAP_CSS, js_on_load=None, elem_id="heatmap"
                )
                compare_signature = gr.Textbox(label="Signature", interactive=False, elem_id="compare-signature")

            with gr.Tab("Batch"):
                gr.Markdown(BATCH_HELP)
                with gr.Row():
                    upload = gr.File(label="CSV or JSONL file", file_types=[".csv", ".jsonl"], elem_id="upload")
                    rescale_choice = gr.Radio(
                        RESCALE_CHOICES,
                        value="none",
                        label="Rescaled scores too",
                        info="0 = an unrelated text, 1 = a copy; the same winners as the raw scores",
                        elem_id="rescale",
                    )
                    batch_button = gr.Button("Score file", variant="primary", elem_id="batch-button")
                summary_output = gr.Dataframe(
                    label="Systems: mean and 95% bootstrap confidence interval",
                    interactive=False,
                    elem_id="summary-table",
                )
                intervals_output = gr.HTML(
                    label="Means with 95% confidence intervals", css_template=INTERVALS_CSS, elem_id="intervals"
                )
                pairs_output = gr.Dataframe(
                    label="Paired significance (bootstrap and t-test)", interactive=False, elem_id="pairs-table"
                )
                rows_output = gr.Dataframe(label="Per-row scores", interactive=False, elem_id="rows-table")
                download_output = gr.File(label="Download the per-row scores (CSV)", elem_id="download")
                batch_signature = gr.Textbox(label="Signature", interactive=False, elem_id="batch-signature")

        settings_inputs = [model, directions, aggregation, prompt_choice, prompt_phrase, prompt_side]
        prompt_choice.change(
            lambda choice: gr.Textbox(visible=choice == "custom"),
            prompt_choice,
            prompt_phrase,
            api_visibility="private",
        )
        add_button.click(add_candidate, candidate_count, [candidate_count, *candidate_boxes], api_visibility="private")
        remove_button.click(
            remove_candidate,
            [candidate_count, *candidate_boxes],
            [candidate_count, *candidate_boxes],
            api_visibility="private",
        )
        example_outputs = [
            candidate_count,
            source,
            references,
            directions,
            prompt_choice,
            prompt_side,
            *candidate_boxes,
        ]
        summarization_example.click(
            lambda: load_example("summarization"), None, example_outputs, api_visibility="private"
        )
        translation_example.click(lambda: load_example("translation"), None, example_outputs, api_visibility="private")
        # One concurrency slot for both scoring events: a model runs one job at a time.
        compare_button.click(
            compare,
            [*settings_inputs, source, references, *candidate_boxes],
            [comparison_output, chart_output, heatmap_output, compare_signature],
            api_name="compare",
            concurrency_id="model",
        )
        batch_button.click(
            score_file,
            [*settings_inputs, upload, rescale_choice],
            [summary_output, pairs_output, rows_output, download_output, batch_signature, intervals_output],
            api_name="score_file",
            concurrency_id="model",
        )
    # Gradio keeps a record of the last GRADIO_ANALYTICS_MAX_EVENTS requests (10,000 unless set); each pins memory
    # that is not given back, so the resident size grew with every request up to that number (bench/README.md).
    os.environ.setdefault("GRADIO_ANALYTICS_MAX_EVENTS", str(ANALYTICS_EVENTS_KEPT))
    demo.queue(default_concurrency_limit=1, max_size=32)
    return demo


demo = build_demo()

if __name__ == "__main__":
    demo.launch(max_file_size=MAX_UPLOAD_BYTES)  # refused while uploading, before the file fills the disk
