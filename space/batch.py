"""The Batch tab's computation: an uploaded .csv or .jsonl file read with the command line's reader under the Space's
limits, the work it needs counted before any model loads, every system scored and compared (means with bootstrap
confidence intervals, paired tests), and the per-row results as a downloadable CSV."""

from __future__ import annotations

import html
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
from pandas.io.formats.style import Styler

import bart_score
from bart_score.baselines.rescale import DEFAULT_PAIRS as DEFAULT_RESCALE_PAIRS
from bart_score.errors import BaselineError
from bart_score.long_documents.windows import PIECE_CHARS
from bart_score.options import COUNT_SUFFIXES, DEFAULT_WINDOWS_K, ScoringOptions

from .form import MAX_CANDIDATES, MAX_REFERENCES, FieldError, pairs_per_text, refuse_too_much_work
from .guards import baseline_failure, spreadsheet_safe
from .naming import PageNaming, field_labels

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MAX_COLUMNS = 2 + MAX_REFERENCES + MAX_CANDIDATES  # an id, a source, reference columns and system columns
# Everywhere a sentence splitter may end a sentence (sentence_bound): a run of end punctuation, brackets or line
# breaks (with pysbd's own end markers), and a closing quote before a capital.
POSSIBLE_SENTENCE_END = re.compile(
    r"[.!?。．！？…•()（）ȸȹ☉☈☇☄\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]+|[」\]'\"”’](?=\s?[A-Z])"
)
LETTER_OR_DIGIT = re.compile(r"[^\W_]")  # a sentence holds one: split_sentences drops pieces without


# ---------------------------------------------------------------------------------------------------------------------
# Uploaded files


def parse_upload(path, *, max_rows, max_chars):
    """Reads an uploaded .csv or .jsonl file with the CLI's reader, bart_score.read_table_corpus, which enforces the
    Space's limits on rows, columns and text lengths as it reads (a file over them costs little to refuse); then the
    limits on systems and references. Every problem is a ValueError saying what and where."""
    if not path:
        raise FieldError("Upload a .csv or .jsonl file first", "upload")
    if os.path.splitext(path)[1].lower() not in (".csv", ".jsonl"):
        raise FieldError(f"Upload a .csv or .jsonl file (got {os.path.basename(path)!r})", "upload")
    if not os.path.isfile(path):  # uploads are kept for a limited time (space/uploads.py)
        raise FieldError(f"{os.path.basename(path)} is no longer on the server; upload it again", "upload")
    if os.path.getsize(path) > MAX_UPLOAD_BYTES:  # checked before the reader loads the whole file
        raise FieldError(f"The file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB", "upload")
    limits = bart_score.TableLimits(max_rows=max_rows, max_columns=MAX_COLUMNS, max_chars=max_chars)
    try:
        corpus = bart_score.read_table_corpus(path, limits=limits)
    except bart_score.InputError as error:
        # The reader names the file as data: said by the name the user uploaded, not the path of Gradio's copy.
        raise FieldError(error.said(BATCH_PAGE), "upload") from None
    check_upload_limits(corpus)
    return corpus


def row_count(corpus):
    return len(next(iter(corpus.systems.values())))


def check_upload_limits(corpus):
    """The Space's limits on systems and references per row (the reader checked rows, columns and lengths)."""
    if len(corpus.systems) > MAX_CANDIDATES:
        raise FieldError(f"The file has {len(corpus.systems)} system columns; the limit is {MAX_CANDIDATES}", "upload")
    for row, references in enumerate(corpus.references or [], 1):
        if len(references) > MAX_REFERENCES:
            raise FieldError(f"Row {row} has {len(references)} references; the limit is {MAX_REFERENCES}", "upload")


def check_work(corpus, directions, prompts, max_pairs, rescale=None, long_source=None):
    """Refuses a file whose scoring would need more than max_pairs (condition, text) pairs, counting the reference
    pairs that rescale="corpus" adds, and with long_source="windows" windows_k pairs per sentence of faithfulness,
    each times the prompt's phrases (`prompts`: ScoringOptions.prompts), and one for each sentence of a distinct
    source, which is split out and embedded or indexed for the search (work as long as a pair's, and independent of
    the outputs: 1,000 sources of "Ph.D. " repeated held the scoring thread for minutes). The sentences are not split
    here (the splitter can take seconds on one text): they are counted by sentence_bound, an upper estimate in one
    pass, so a refusal says "up to"."""
    references = corpus.references or [[] for _ in range(row_count(corpus))]
    per_system = sum(pairs_per_text(directions, True, len(refs)) for refs in references)
    reference_pairs = DEFAULT_RESCALE_PAIRS if rescale == "corpus" else 0
    pairs = (per_system * len(corpus.systems) + reference_pairs) * len(prompts)
    windows = bool(long_source) and "faithfulness" in directions and corpus.sources is not None
    if windows:
        k = int(long_source.get("windows_k", DEFAULT_WINDOWS_K))
        sentences = sum(sentence_bound(text) for texts in corpus.systems.values() for text in texts)
        pairs += (k * sentences - row_count(corpus) * len(corpus.systems)) * len(prompts)
        pairs += sum(sentence_bound(source) for source in set(corpus.sources))
    points = "+ reference points " if reference_pairs else ""
    refuse_too_much_work(
        pairs,
        max_pairs,
        what="this file",
        breakdown=f"rows × systems × directions and references {points}× prompts"
        + (
            f", faithfulness scored over {k} source windows for each sentence of an output, and one pair for each "
            "sentence of a distinct source (split out and searched), a sentence counted wherever one may end (at "
            "every full stop, question or exclamation mark, bracket and line break)"
            if windows
            else ""
        ),
        advice="fewer rows, systems, directions or prompts, or score it with the command line (bartscore score)",
        up_to=windows,
    )


def sentence_bound(text):
    """At least as many sentences as bart_score.split_sentences finds in `text`, counted in one pass over it: the
    pieces between the places where a sentence may end (POSSIBLE_SENTENCE_END) that hold a letter or digit, plus one
    for each ")", since pysbd also starts a sentence at a list marker ("a)", "12)") without punctuation before it,
    plus one for every PIECE_CHARS // 2 characters, where the splitter may cut a sentence that runs over its piece
    (bart_score.long_documents.windows.split). It counts more where a full stop or a bracket ends no sentence ("Dr.",
    "3.5", "(in 2024)"); tests/test_app_batch.py checks that it never counts fewer, on hostile punctuation too."""
    pieces = sum(1 for piece in POSSIBLE_SENTENCE_END.split(text) if LETTER_OR_DIGIT.search(piece))
    return pieces + text.count(")") + len(text) // (PIECE_CHARS // 2)


def blank_reference_note(corpus):
    """The note for reference cells that were blank and so skipped (as the command line says), or None."""
    count = corpus.blank_references
    if not count:
        return None
    cells = "cell was" if count == 1 else "cells were"
    return f"{count} blank reference {cells} skipped: a blank cell is no reference (each row is scored with the rest)"


def upload_texts(corpus):
    """(where, text, field) for every text of an uploaded file, row by row."""
    for row in range(row_count(corpus)):
        for where, text in row_texts(corpus, row):
            yield f"Row {row + 1}, {where}", text, "upload"


def row_texts(corpus, row):
    """(where, text) for each text of a row: its source, references and outputs."""
    if corpus.sources is not None:
        yield "column 'source'", corpus.sources[row]
    for number, reference in enumerate(corpus.references[row] if corpus.references else [], 1):
        yield f"reference {number}", reference  # the reader merges reference columns, so they are numbered
    for name, outputs in corpus.systems.items():
        yield f"column {name!r}", outputs[row]


# ---------------------------------------------------------------------------------------------------------------------
# Scoring a file


@dataclass
class BatchResult:
    rows: pd.DataFrame  # one row per input row, one column per system and direction (the CSV download)
    summary: pd.DataFrame  # per direction and system: mean and bootstrap confidence interval
    pairs: pd.DataFrame  # per direction and pair of systems: paired bootstrap and t-test
    signature: str
    texts: pd.DataFrame  # one row per input row and system: its output, its scores, the source and references


def score_upload(
    scorer, corpus, options: ScoringOptions | None = None, *, model_name: str = "this model", **keywords
) -> BatchResult:
    """Scores every system of the file with bart_score.score_corpus (one engine call, so that a source shared by the
    systems is encoded once) and compares the systems; with rescaling ("corpus" or "baseline"), the rescaled
    directions too. `options` (a ScoringOptions, inputs.form_options) or its fields as keywords. A saved baseline
    that is missing or cannot be used is a FieldError naming the model by its menu name (model_name), without the
    baseline's path."""
    try:
        per_system, signature = bart_score.score_corpus(scorer, corpus, ScoringOptions.resolve(options, **keywords))
    except BaselineError as error:
        raise FieldError(baseline_failure(model_name, error), "rescale") from None
    rows = pd.DataFrame({"row": range(1, row_count(corpus) + 1)})
    if corpus.ids is not None:
        rows["id"] = corpus.ids
    for name, scores in per_system.items():
        for direction in scores:
            rows[f"{name}/{direction}"] = scores[direction]
    summary, pairs = compared(per_system)
    return BatchResult(
        rows=rows, summary=summary, pairs=pairs, signature=signature, texts=texts_table(corpus, per_system)
    )


PAIR_COLUMNS = ["direction", "system A", "system B", "Δ mean (A − B)", "bootstrap p", "t-test p", "better"]
NO_DIFFERENCE = "no significant difference"
UNTESTABLE = "cannot be tested"


def compared(per_system) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The summary (direction, system, mean, CI low, CI high) and the pairs' tests of each direction. A pair whose
    tests cannot be made (one row, or a score that is not a number) says so rather than finding no difference."""
    summary, pairs = [], []
    # long_source="windows" adds each row's counts of sentences and windows: columns of the tables, not scores
    scores_only = {
        name: {d: v for d, v in scores.items() if not d.endswith(COUNT_SUFFIXES)} for name, scores in per_system.items()
    }
    for direction, comparison in bart_score.compare_directions(scores_only).items():
        level = f"{comparison['confidence']:.0%}"
        for system in comparison["systems"]:
            summary.append(
                {
                    "direction": direction,
                    "system": system["system"],
                    "mean": system["mean"],
                    f"{level} CI low": system["ci_low"],
                    f"{level} CI high": system["ci_high"],
                }
            )
        for pair in comparison["pairs"]:
            untestable = math.isnan(pair["bootstrap_p"]) and math.isnan(pair["t_test_p"])
            pairs.append(
                dict(
                    zip(
                        PAIR_COLUMNS,
                        [
                            direction,
                            pair["system_a"],
                            pair["system_b"],
                            pair["delta"],
                            pair["bootstrap_p"],
                            pair["t_test_p"],
                            pair["winner"] or (UNTESTABLE if untestable else NO_DIFFERENCE),
                        ],
                    )
                )
            )
    return pd.DataFrame(summary), pd.DataFrame(pairs, columns=PAIR_COLUMNS)


def direction_label(direction: str) -> str:
    """A direction's column name in the tables: "faithfulness", "F", "F 0–1", ..."""
    base = direction.removesuffix("_rescaled")
    name = {"f_score": "F"}.get(base, base)
    return f"{name} 0–1" if direction.endswith("_rescaled") else name


def texts_table(corpus, per_system) -> pd.DataFrame:
    """One row per input row and system: row number, id, system, its output, its scores, the source and the
    references, so that the table can be sorted by a score to find the worst rows."""
    records = []
    for row in range(row_count(corpus)):
        for name, scores in per_system.items():
            record = {"row": row + 1}
            if corpus.ids is not None:
                record["id"] = corpus.ids[row]
            record["system"] = name
            record["output"] = corpus.systems[name][row]
            record.update({direction_label(direction): values[row] for direction, values in scores.items()})
            if corpus.sources is not None:
                record["source"] = corpus.sources[row]
            if corpus.references is not None:
                record["references"] = "\n".join(corpus.references[row])
            records.append(record)
    return pd.DataFrame(records)


RESCALE_CHOICES = [
    ("no", "none"),
    ("yes, reference points from this file", "corpus"),
    ("yes, the saved baseline of this model", "baseline"),
]
# The Batch tab's words for what messages name: the settings, the rescaling's choices, and the file's columns, which
# give the sources and references.
BATCH_PAGE = PageNaming(
    {
        **field_labels(("directions", "prompt-phrase", "rescale")),
        "sources": "the file's source column",
        "references": "the file's reference columns",
    },
    choices={"rescale": {value: label for label, value in RESCALE_CHOICES}},
)


def parse_rescale(choice):
    """score_corpus's rescale argument for the Batch tab's choice."""
    modes = {value: (None if value == "none" else value) for _, value in RESCALE_CHOICES}
    if choice not in modes:
        raise FieldError(f"Unknown rescaling {choice!r}; choose one of {', '.join(modes)}", "rescale")
    return modes[choice]


# ---------------------------------------------------------------------------------------------------------------------
# The results


_results_folder = None
MISSING_IN_CSV = ""  # a score that is not a number (NaN) in the CSV download: an empty cell, read back as NaN
MISSING_SHOWN = "–"  # the same in the tables on the page


def write_results_csv(rows):
    """The per-row results as a CSV file in a fresh temporary folder. Gradio copies a returned file into its own cache
    (which delete_cache empties) before the next job runs, so the previous job's folder is removed here."""
    global _results_folder
    if _results_folder:
        shutil.rmtree(_results_folder, ignore_errors=True)
    _results_folder = tempfile.mkdtemp(prefix="bartscore-")
    path = os.path.join(_results_folder, "bartscore-results.csv")
    # ids, column names and texts can hold formulas; a score that is not a number is an empty cell
    spreadsheet_safe(rows).to_csv(path, index=False, na_rep=MISSING_IN_CSV)
    return path


def summary_table(summary: pd.DataFrame, rescaled: bool) -> Styler:
    """Systems x directions, the raw directions or the rescaled ones: each cell the system's mean with its 95%
    interval ("−2.51 [−2.85, −2.20]"; the data keep the mean at full precision), the best mean of each direction in
    bold. Empty when there is no such direction."""
    kept = summary[summary["direction"].str.endswith("_rescaled") == rescaled] if len(summary) else summary
    systems = list(dict.fromkeys(kept["system"])) if len(kept) else []
    directions = list(dict.fromkeys(kept["direction"])) if len(kept) else []
    frame = pd.DataFrame({"system": systems})
    shown: dict[tuple[int, str], str] = {}
    digits = 3 if rescaled else 2
    for direction in directions:
        column = direction_label(direction.removesuffix("_rescaled"))  # the tab says which scale
        rows = kept[kept["direction"] == direction].set_index("system")
        frame[column] = [rows.loc[system, "mean"] for system in systems]
        for index, system in enumerate(systems):
            mean, low, high = rows.loc[system].iloc[1:4]
            interval = f" [{signed(low, digits)}, {signed(high, digits)}]" if finite(low) and finite(high) else ""
            shown[index, column] = signed(mean, digits) + interval if finite(mean) else MISSING_SHOWN
    styler = frame.style
    for (index, column), text in shown.items():
        styler = styler.format(lambda _, text=text: text, subset=pd.IndexSlice[[index], [column]])

    def best_in_bold(column):
        if column.name == "system":
            return [""] * len(column)
        means = [value if finite(value) else -math.inf for value in column]
        top = max(means, default=-math.inf)
        return ["font-weight: bold" if top > -math.inf and mean == top else "" for mean in means]

    return styler.apply(best_in_bold)


def column_types(frame: pd.DataFrame) -> list[str]:
    """Gradio's datatype of each column ("number" or "str"), so that sorting a column in the browser sorts numbers as
    numbers (the default, "str", would put -10 before -2)."""
    return ["number" if pd.api.types.is_numeric_dtype(frame[column]) else "str" for column in frame.columns]


NUMBER_CHARACTERS = 7  # a score as the tables show it ("−8.7161")
BOLD_WIDTH = 1.2  # a header's letters are bold: wider than a cell's
# A wide table (the per-row scores) is sized in pixels, by its headers whole: characters of the table's font, the
# cell's padding and a header's sort menu button (⋮).
PIXELS_PER_CHARACTER = 9
CELL_PIXELS = 16
SORT_MENU_PIXELS = 24


def column_widths(columns: Sequence[str], needs: Mapping[str, int] | None = None, *, pixels: bool = False) -> list[str]:
    """Gradio's column widths by the characters each column needs: its header's longest word (or, with `pixels`, the
    whole header), or what `needs` says its cells need (a number's, NUMBER_CHARACTERS, when not said), whichever is
    more, plus one. As percentages of the table's width, so that it is never wider than the page, or with `pixels` in
    pixels (a table too wide for the page, which scrolls sideways). Gradio sizes columns by their cells alone, and
    broke "faithful|ness" at 1280 px; with these, headers wrap between words, never inside one."""
    needs = needs or {}
    characters = [
        max(
            BOLD_WIDTH * (len(str(column)) if pixels else max(map(len, str(column).split()), default=1)),
            needs.get(column, NUMBER_CHARACTERS),
        )
        + 1
        for column in columns
    ]
    if pixels:
        return [f"{round(count * PIXELS_PER_CHARACTER) + CELL_PIXELS + SORT_MENU_PIXELS}px" for count in characters]
    return [f"{100 * count / sum(characters):.2f}%" for count in characters]


def longest_word(texts: Iterable, cap: int = 24) -> int:
    """The characters of the longest word of any of the texts (at most `cap`: a longer one may wrap)."""
    return min(cap, max((len(word) for text in texts for word in str(text).split()), default=1))


def signed(value: float, digits: int) -> str:
    """A number with a true minus sign."""
    return f"{value:.{digits}f}".replace("-", "−")


def finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def formatted(frame, formats):
    """A Styler that shows the listed columns rounded (format string or function); the data keeps full precision."""
    formats = {column: form for column, form in formats.items() if column in frame.columns}
    return frame.style.format(formats, na_rep=MISSING_SHOWN)


def cards(
    frame: pd.DataFrame,
    heading: Callable[[pd.Series], str],
    formats: Mapping[str, Callable[[object], str]],
    *,
    title: str,
    details: Sequence[str] = (),
) -> str:
    """HTML for a phone, where a wide table would scroll sideways: each row of `frame` a card headed heading(row),
    then each of `formats`' columns the frame has as a name and its value as formats shows it; the `details` columns
    (long texts) under a closed "texts" that opens on a tap. Everything the user sent is escaped."""
    shown = [column for column in formats if column in frame.columns]
    hidden = [column for column in details if column in frame.columns]
    parts = [f'<p class="cards-title">{html.escape(title)}</p>']
    for _, row in frame.iterrows():
        values = "".join(
            f"<dt>{html.escape(str(column))}</dt><dd>{html.escape(formats[column](row[column]))}</dd>"
            for column in shown
        )
        texts = "".join(f"<dt>{html.escape(column)}</dt><dd>{html.escape(str(row[column]))}</dd>" for column in hidden)
        more = f"<details><summary>texts</summary><dl>{texts}</dl></details>" if texts else ""
        parts.append(
            f'<div class="card"><p class="card-head">{html.escape(heading(row))}</p><dl>{values}</dl>{more}</div>'
        )
    return f'<div class="cards">{"".join(parts)}</div>'


def number_text(digits: int) -> Callable[[object], str]:
    """A number with a true minus sign to `digits` places; "–" for one that is not a number."""
    return lambda value: signed(float(value), digits) if finite(value) else MISSING_SHOWN


def p_value_text(p):
    """A p-value rounded, never shown as 0; one that is not a number (a file of one row has no test) is "–"."""
    if p is None or math.isnan(p):
        return MISSING_SHOWN
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"
