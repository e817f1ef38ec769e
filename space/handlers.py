"""The page's event handlers (app.py lays the page out and wires them).

Each scoring tab has two entries over one computation: `api`, the endpoint gradio_client users call (its parameters
are the API's names; a problem is raised as an error), and `page`, the browser's, which never raises: it shows the
result, or keeps the problem in the status line beside the button and marks the field at fault. Both run a request
in two steps, each inside feedback.attempt (`outcome_of`): `check`, everything that needs no model (the texts, the
settings, the work counted against the pair limit), off the scoring thread, so that a refusal waits for no
computation; then `compute` on the one scoring thread (jobs.run_exclusively), so that at most one runs at any moment,
stopped when its job is cancelled. The order of each entry's inputs and outputs is written once, in wiring's
dataclasses, and each entry's signature, so the API's parameters, comes from them (wiring.takes)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import gradio as gr
from gradio.context import LocalContext
from pandas.io.formats.style import Styler

import bart_score

from .batch import (
    BATCH_PAGE,
    NUMBER_CHARACTERS,
    RESCALE_CHOICES,
    blank_reference_note,
    cards,
    check_work,
    column_types,
    column_widths,
    direction_label,
    formatted,
    longest_word,
    number_text,
    p_value_text,
    parse_rescale,
    parse_upload,
    score_upload,
    summary_table,
    upload_texts,
    write_results_csv,
)
from .candidates import BEST_MARK, DIRECTION_LABELS, check_compare_work, compare_candidates, has_scale, scores_table
from .examples import EXAMPLES
from .feedback import Outcome, answer, as_text, attempt, field_marks, status_line, working_line
from .form import (
    MAX_CANDIDATES,
    MIN_CANDIDATES,
    candidate_field,
    check_field,
    check_references,
    collect_candidates,
    custom_phrase,
    form_options,
    parse_prompt,
    parse_references,
)
from .guards import public_signature, refuse_special_tokens
from .heatmap import token_heatmap
from .jobs import JobCancelled, run_exclusively, stoppable
from .menu import has_saved_baseline, model_kind
from .naming import COMPARE_PAGE, PageNaming
from .plots import bar_chart, interval_plot
from .settings import Settings, menu_scorer, served_failures
from .uploads import SERVER_LEDGER
from .verdict import verdict
from .wiring import (
    BatchInputs,
    BatchOutputs,
    BatchPageOutputs,
    CandidateBoxesOutputs,
    CompareInputs,
    CompareOutputs,
    ComparePageOutputs,
    ExampleOutputs,
    ModelOutputs,
    ScoringStartedOutputs,
    SettingsInputs,
    takes,
)

# The fields each tab's page entry marks, in the order of its outputs (their element ids).
SETTINGS_FIELDS = ("model", "directions", "prompt-phrase")
COMPARE_FIELDS = (
    *SETTINGS_FIELDS,
    "source",
    "references",
    *(f"candidate-{number}" for number in range(1, MAX_CANDIDATES + 1)),
)
BATCH_FIELDS = (*SETTINGS_FIELDS, "upload", "rescale")
TEXT_COLUMNS = ("row", "id", "system", "output", "source", "references")  # the per-row table's non-score columns
CANCELLED = "This job was cancelled"


async def outcome_of(
    check: Callable[..., Any], compute: Callable[[Any], Any], *values: Any, naming: PageNaming = COMPARE_PAGE
) -> Outcome:
    """What a scoring request ends with: `check(*values)` off the scoring thread, then `compute` of what it returns
    on the scoring thread, unless the job (Gradio's event) was cancelled; the notes of both, and the problem, said in
    the tab's words (`naming`)."""
    job = LocalContext.event_id.get(None)
    attempted = functools.partial(attempt, naming=naming)
    checked = await asyncio.to_thread(attempted, check, *values)
    if checked.problem is not None:
        return checked
    try:
        computed = await run_exclusively(attempted, compute, checked.value, job=job)
    except JobCancelled:
        return Outcome(problem=CANCELLED)
    return replace(computed, notes=[*checked.notes, *computed.notes])


def form_settings(form: SettingsInputs, **context: Any) -> tuple[bart_score.ScoringOptions, list[str], list]:
    """What the settings' values ask for: the ScoringOptions (form.form_options, `context` saying which inputs there
    are and what the tab adds), its notes, and the custom prompt phrase to check as a text (form.custom_phrase)."""
    prompt = parse_prompt(form.prompt_choice, form.prompt_phrase)
    options, notes = form_options(form.directions, form.aggregation, prompt, form.prompt_side, **context)
    return options, notes, custom_phrase(form.prompt_choice, prompt)


def settings_open(outcome: Outcome) -> dict:
    """The settings accordion, opened when the field at fault is in it."""
    return gr.update(open=True) if in_the_settings(outcome) else gr.skip()


def settings_status(outcome: Outcome) -> str:
    """The settings' own status line: the problem when the field at fault is in the settings (far from the Score
    button on a phone, where the status line beside the button is out of view), else empty."""
    return status_line(outcome if in_the_settings(outcome) else None)


def in_the_settings(outcome: Outcome) -> bool:
    return outcome.problem is not None and outcome.field in SETTINGS_FIELDS


# ---------------------------------------------------------------------------------------------------------------------
# Compare


@dataclass
class CompareView:
    verdict: str
    rescaled: Styler
    raw: Styler
    chart: str
    heatmap: str
    signature: str
    scaled: bool  # whether any direction has a 0–1 scale (else the raw table is shown first)
    notes: list[str] = field(default_factory=list)

    def outputs(self) -> CompareOutputs:
        """For API clients: the values."""
        return CompareOutputs(
            verdict=self.verdict,
            rescaled=self.rescaled,
            raw=self.raw,
            chart=self.chart,
            heatmap=self.heatmap,
            signature=self.signature,
        )

    def page_outputs(self) -> CompareOutputs:
        """For the page: the tables with their column widths (column_widths: the candidates' names wrap between
        words), so that a phone shows every column."""
        frame = self.rescaled.data
        widths = column_widths(list(frame.columns), {"candidate": longest_word([*frame["candidate"], BEST_MARK])})
        return replace(
            self.outputs(),
            rescaled=gr.update(value=self.rescaled, column_widths=widths),
            raw=gr.update(value=self.raw, column_widths=widths),
        )


@dataclass
class CompareRequest:
    """A Compare request as `check` found it: all that scoring it needs but the model."""

    model: str
    source: str
    references: list[str]
    candidates: list[tuple[str, str]]  # (name, text) of each candidate given
    options: bart_score.ScoringOptions
    custom: list  # the custom prompt phrase, as refuse_special_tokens takes it (form.custom_phrase)
    notes: list[str] = field(default_factory=list)  # the directions left out (form.form_options)


class CompareHandlers:
    """The Compare tab's scoring."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @takes(SettingsInputs)
    def check(self, form: SettingsInputs, source, references, texts) -> CompareRequest:
        """The request checked without the model (off the scoring thread). `texts`: the candidates' boxes."""
        settings = self.settings
        source = (source or "").strip()
        check_field(source, "The source", settings.max_chars, "source")
        references = parse_references(references)
        check_references(references, settings.max_chars)
        candidates = collect_candidates(texts, settings.max_chars)
        options, notes, custom = form_settings(form, has_source=bool(source), has_references=bool(references))
        check_compare_work(
            source=source,
            references=references,
            candidates=candidates,
            directions=list(options.directions),
            prompts=options.prompts,
            max_pairs=settings.max_pairs,
            by_direction=bool(settings.models.get(form.model, {}).get("chat")),
        )
        return CompareRequest(form.model, source, references, candidates, options, custom, notes)

    def compute(self, request: CompareRequest) -> CompareView:
        """The checked request scored (on the scoring thread)."""
        scorer = menu_scorer(self.settings, request.model)
        stoppable(scorer)
        refuse_special_tokens(
            [
                ("The source", request.source, "source"),
                *((f"Reference {number}", text, "references") for number, text in enumerate(request.references, 1)),
                *((name, text, candidate_field(name)) for name, text in request.candidates),
                *request.custom,
            ],
            scorer.tokenizer.all_special_tokens,
        )
        with served_failures(self.settings, request.model):
            comparison = compare_candidates(
                scorer,
                source=request.source,
                references=request.references,
                candidates=request.candidates,
                options=request.options,
            )
        checkpoint = self.settings.models[request.model]["checkpoint"]
        return CompareView(
            verdict=f'<p class="verdict">{as_text(verdict(comparison))}</p>',
            rescaled=scores_table(comparison, "rescaled"),
            raw=scores_table(comparison, "raw"),
            chart=bar_chart(comparison),
            heatmap=token_heatmap(comparison),
            signature=public_signature(comparison.signature, request.model, checkpoint),
            scaled=any(has_scale(comparison, direction) for direction in comparison.scores),
        )

    async def outcome(self, inputs: CompareInputs) -> Outcome:
        texts = list(inputs.candidates)
        return await outcome_of(self.check, self.compute, *inputs.settings, inputs.source, inputs.references, texts)

    @takes(CompareInputs)
    async def api(self, inputs: CompareInputs) -> tuple:
        """CompareOutputs; a problem is an error."""
        return answer(await self.outcome(inputs)).outputs().as_tuple()

    @takes(CompareInputs)
    async def page(self, inputs: CompareInputs) -> tuple:
        """ComparePageOutputs."""
        outcome = await self.outcome(inputs)
        if outcome.problem is not None:
            results, shown = CompareOutputs.filled(gr.skip()), gr.update(visible=False)
            selected = gr.skip()
        else:
            view = outcome.value
            results, shown = view.page_outputs(), gr.update(visible=True)
            selected = gr.Tabs(selected="rescaled" if view.scaled else "raw")
        return ComparePageOutputs(
            results=results,
            results_column=shown,
            score_tabs=selected,
            status=status_line(outcome),
            settings_accordion=settings_open(outcome),
            settings_status=settings_status(outcome),
            marks=tuple(field_marks(COMPARE_FIELDS, outcome)),
        ).as_tuple()


# ---------------------------------------------------------------------------------------------------------------------
# Batch


@dataclass
class BatchView:
    summary: Styler
    rescaled_summary: Styler
    pairs: Styler
    rows: Styler
    row_types: list[str]  # the per-row table's column types (batch.column_types)
    download: str
    signature: str
    intervals: str
    rescaled: bool
    pairs_cards: str = ""  # the pairs' and the rows' tables as a phone shows them (batch.cards)
    rows_cards: str = ""
    notes: list[str] = field(default_factory=list)

    def outputs(self) -> BatchOutputs:
        """For API clients: the values."""
        return BatchOutputs(
            summary=self.summary,
            rescaled_summary=self.rescaled_summary,
            pairs=self.pairs,
            rows=self.rows,
            download=self.download,
            signature=self.signature,
            intervals=self.intervals,
        )

    def page_outputs(self) -> BatchOutputs:
        """For the page: the tables with their column widths (column_widths), the per-row table with its column types
        too, so that sorting a score sorts numbers."""
        systems = longest_word(self.summary.data["system"]) if "system" in self.summary.data else 1
        pairs, rows = self.pairs.data, self.rows.data
        texts = {column: 24 for column in ("output", "source", "references")}
        return replace(
            self.outputs(),
            summary=self.summary_update(self.summary, systems),
            rescaled_summary=self.summary_update(self.rescaled_summary, systems),
            pairs=gr.update(
                value=self.pairs,
                column_widths=column_widths(
                    list(pairs.columns),
                    {
                        "direction": longest_word(map(direction_label, pairs["direction"])),
                        "system A": systems,
                        "system B": systems,
                        "better": longest_word(pairs["better"]),
                    },
                ),
            ),
            rows=gr.update(
                value=self.rows,
                datatype=self.row_types,
                column_widths=column_widths(
                    list(rows.columns),
                    {"system": systems, "id": longest_word(rows.get("id", []), 16), **texts},
                    pixels=True,
                ),
            ),
        )

    @staticmethod
    def summary_update(table: Styler, systems: int) -> Any:
        """A summary table with its column widths: a mean and its interval wrap between their numbers, the longest
        piece an interval's bound in bold ("[−0.152,")."""
        columns = list(table.data.columns)
        needs = {"system": systems, **dict.fromkeys(columns[1:], NUMBER_CHARACTERS + 2)}
        return gr.update(value=table, column_widths=column_widths(columns, needs) if columns else None)


@dataclass
class BatchRequest:
    """A Batch request as `check` found it: all that scoring it needs but the model."""

    model: str
    corpus: bart_score.Corpus
    options: bart_score.ScoringOptions
    custom: list  # the custom prompt phrase, as refuse_special_tokens takes it (form.custom_phrase)
    notes: list[str] = field(default_factory=list)  # the directions left out (form.form_options)


class BatchHandlers:
    """The Batch tab's scoring."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @takes(SettingsInputs)
    def check(self, form: SettingsInputs, file, rescale_choice) -> BatchRequest:
        """The request checked without the model (off the scoring thread): the file read under the Space's limits and
        the work it needs counted."""
        settings = self.settings
        corpus = parse_upload(file, max_rows=settings.max_rows, max_chars=settings.max_chars)
        # the engine's progress bar: gr.Progress(track_tqdm=True) shows it beside the button
        options, notes, custom = form_settings(
            form,
            has_source=corpus.sources is not None,
            has_references=corpus.references is not None,
            rescale=parse_rescale(rescale_choice),
            show_progress=True,
            long_source=settings.long_source,
            naming=BATCH_PAGE,
        )
        check_work(
            corpus, list(options.directions), options.prompts, settings.max_pairs, options.rescale, settings.long_source
        )
        return BatchRequest(form.model, corpus, options, custom, notes)

    def compute(self, request: BatchRequest) -> BatchView:
        """The checked request scored (on the scoring thread)."""
        corpus, options = request.corpus, request.options
        scorer = menu_scorer(self.settings, request.model)
        stoppable(scorer)
        refuse_special_tokens([*request.custom, *upload_texts(corpus)], scorer.tokenizer.all_special_tokens)
        with served_failures(self.settings, request.model):
            result = score_upload(scorer, corpus, options, model_name=request.model)
        score_columns = [column for column in result.texts.columns if column not in TEXT_COLUMNS]
        checkpoint = self.settings.models[request.model]["checkpoint"]
        return BatchView(
            summary=summary_table(result.summary, rescaled=False),
            rescaled_summary=summary_table(result.summary, rescaled=True),
            pairs=formatted(
                result.pairs,
                {
                    "direction": direction_label,
                    "Δ mean (A − B)": "{:.4f}",
                    "bootstrap p": p_value_text,
                    "t-test p": p_value_text,
                },
            ),
            rows=formatted(result.texts, dict.fromkeys(score_columns, "{:.4f}")),
            row_types=column_types(result.texts),
            download=write_results_csv(result.rows),
            signature=public_signature(result.signature, request.model, checkpoint),
            intervals=interval_plot(result.summary),
            rescaled=options.rescale is not None,
            pairs_cards=cards(
                result.pairs,
                lambda pair: f"{direction_label(pair['direction'])}: {pair['system A']} vs {pair['system B']}",
                {
                    "Δ mean (A − B)": number_text(4),
                    "bootstrap p": p_value_text,
                    "t-test p": p_value_text,
                    "better": str,
                },
                title="Paired significance (bootstrap and t-test; better: p < 0.05 in both)",
            ),
            rows_cards=cards(
                result.texts,
                lambda row: " · ".join(str(row[column]) for column in ("row", "id", "system") if column in row.index),
                dict.fromkeys(score_columns, number_text(4)),
                title="Per-row scores",
                details=("output", "source", "references"),
            ),
            notes=[note for note in [blank_reference_note(corpus)] if note],
        )

    async def outcome(self, inputs: BatchInputs) -> Outcome:
        values = (*inputs.settings, inputs.file, inputs.rescale_choice)
        return await outcome_of(self.check, self.compute, *values, naming=BATCH_PAGE)

    @takes(BatchInputs)
    async def api(self, inputs: BatchInputs, progress=gr.Progress(track_tqdm=True)) -> tuple:
        """BatchOutputs; a problem is an error. The upload is deleted when the request ends (an API client sends its
        file with each request; the page keeps its own, to score it again)."""
        try:
            outcome = await self.outcome(inputs)
        finally:
            if isinstance(inputs.file, str):
                SERVER_LEDGER.release(inputs.file)
        return answer(outcome).outputs().as_tuple()

    @takes(BatchInputs)
    async def page(self, inputs: BatchInputs, progress=gr.Progress(track_tqdm=True)) -> tuple:
        """BatchPageOutputs."""
        outcome = await self.outcome(inputs)
        if outcome.problem is not None:
            results, shown = BatchOutputs.filled(gr.skip()), gr.update(visible=False)
            rescaled_tab = selected = pairs_cards = rows_cards = gr.skip()
        else:
            view = outcome.value
            results, shown = view.page_outputs(), gr.update(visible=True)
            rescaled_tab = gr.update(visible=view.rescaled)
            selected = gr.Tabs(selected="rescaled" if view.rescaled else "raw")
            pairs_cards, rows_cards = view.pairs_cards, view.rows_cards
        return BatchPageOutputs(
            results=results,
            pairs_cards=pairs_cards,
            rows_cards=rows_cards,
            results_column=shown,
            rescaled_tab=rescaled_tab,
            summary_tabs=selected,
            status=status_line(outcome),
            settings_accordion=settings_open(outcome),
            settings_status=settings_status(outcome),
            marks=tuple(field_marks(BATCH_FIELDS, outcome)),
        ).as_tuple()


# ---------------------------------------------------------------------------------------------------------------------
# The page's other events


def scoring_started(fields: tuple[str, ...], what: str) -> tuple:
    """ScoringStartedOutputs, before a scoring job: the button disabled (a second click cannot queue the job again),
    the status line saying what runs, the settings' status line emptied, every field unmarked."""
    return ScoringStartedOutputs(
        button=gr.update(interactive=False),
        status=working_line(what),
        settings_status=status_line(None),
        marks=tuple(field_marks(fields, None)),
    ).as_tuple()


def scoring_ended() -> dict:
    return gr.update(interactive=True)


def candidate_boxes_update(count: int, values: list[str] | None = None) -> list[dict]:
    """Shows the first `count` candidate boxes; with values, also sets the boxes' texts ("" for the hidden ones)."""
    if values is None:
        return [gr.update(visible=index < count) for index in range(MAX_CANDIDATES)]
    values = list(values) + [""] * (MAX_CANDIDATES - len(values))
    return [gr.update(visible=index < count, value=value) for index, value in enumerate(values)]


def candidates_shown(count: int, limit: Outcome | None = None, values: list[str] | None = None) -> tuple:
    """CandidateBoxesOutputs: `count` boxes shown (with `values`, candidate_boxes_update), and the status line saying
    which `limit` a click ran into."""
    boxes = tuple(candidate_boxes_update(count, values))
    return CandidateBoxesOutputs(count=count, status=status_line(limit), boxes=boxes).as_tuple()


def add_candidate(count: int) -> tuple:
    """CandidateBoxesOutputs."""
    if count >= MAX_CANDIDATES:
        return candidates_shown(count, Outcome(problem=f"At most {MAX_CANDIDATES} candidates can be compared"))
    return candidates_shown(count + 1)


def remove_candidate(count: int, *texts: str) -> tuple:
    """CandidateBoxesOutputs. `texts`: every candidate box's."""
    if count <= MIN_CANDIDATES:
        return candidates_shown(count, Outcome(problem=f"At least {MIN_CANDIDATES} candidates are compared"))
    return candidates_shown(count - 1, values=list(texts[: count - 1]))


def load_example(name: str) -> tuple:
    """ExampleOutputs."""
    chosen = EXAMPLES[name]
    count = len(chosen["candidates"])
    return ExampleOutputs(
        count=count,
        source=chosen["source"],
        references=chosen["references"],
        directions=chosen["directions"],
        prompt_choice=chosen["prompt"],
        prompt_side=chosen["prompt_side"],
        results_column=gr.update(visible=False),
        status=status_line(None),
        boxes=tuple(candidate_boxes_update(count, chosen["candidates"])),
    ).as_tuple()


def model_info(kind: str) -> str:
    """The model menu's help text for a model of this kind (menu.model_kind)."""
    if kind in ("model", "causal language model"):
        return f"the {kind} that does the scoring"
    return f"the {kind} checkpoint that does the scoring"


def rescale_choices(has_baseline: bool) -> list[tuple[str, str]]:
    """The Batch tab's rescaling choices: the saved baseline only where one exists."""
    return [choice for choice in RESCALE_CHOICES if has_baseline or choice[1] != "baseline"]


class ModelDescriptions:
    """What the page says about the selected model, found once per model without loading it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._kinds: dict[str, str] = {}

    def kind(self, model: str) -> str:
        if model not in self._kinds and model in self.settings.models:
            self._kinds[model] = model_kind(self.settings.models[model]["checkpoint"])
        return self._kinds.get(model, "model")

    def describe(self, model: str, rescale_choice: str) -> tuple:
        """ModelOutputs for the selected model; "the saved baseline" is offered only where a baseline file was made
        with it, looked for on every change (the operator may save one at any time)."""
        checkpoint = self.settings.models.get(model, {}).get("checkpoint")
        has_baseline = bool(checkpoint) and has_saved_baseline(checkpoint)
        choice = rescale_choice if has_baseline or rescale_choice != "baseline" else "none"
        return ModelOutputs(
            model=gr.update(info=model_info(self.kind(model))),
            rescale_choice=gr.update(choices=rescale_choices(has_baseline), value=choice),
        ).as_tuple()

    def summary(self, model: str, directions: list[str], prompt_choice: str) -> dict:
        """The settings accordion's label: what is set, so that it shows while the accordion is closed."""
        chosen = ", ".join(DIRECTION_LABELS.get(d, d) for d in directions or []) or "no direction"
        prompt = "no prompt" if prompt_choice == "none" else f"prompt {prompt_choice}"
        return gr.update(label=f"Advanced settings: {model} ({self.kind(model)}) · {chosen} · {prompt}")
