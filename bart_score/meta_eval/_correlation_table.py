"""Meta-evaluation tables: metric rows x benchmark-aspect columns, each cell our measure beside the paper's, with the
release's significance test per column; printed paper-style and written as CSV and JSON.

A row is one metric: a BARTScore configuration (``MetricRow.scores`` per benchmark, or None with a note when it could
not be computed), a column of a metrics CSV, or a published row that nothing here computed (the paper's value only,
with a note saying why). Columns are grouped by the paper's table (3: WMT19, 4: summarization, 5: factuality, 6:
data-to-text); an average column appears when every column it averages is in the run."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..corpora._outputs import spreadsheet_cell
from .benchmarks import BENCHMARKS, RELEASE_COMMIT, RELEASE_REPOSITORY, RELEASES
from .protocol import MEASURES, ROUNDS, SEED, SUBSET_FRACTION, correlate, significance
from .published import AVERAGE_TABLES, AVERAGES, PUBLISHED, UNPLACED_AVERAGES, Published

if TYPE_CHECKING:  # the [meta-eval] extra; only load_benchmark imports it when it runs
    from datasets import Dataset

TABLE_TITLES = {
    "3": "Table 3: machine translation (WMT19 DARR), Kendall's tau (WMT's Kendall-like: ties count as discordant)",
    "4": "Table 4: summarization, summary-level Spearman (per document across systems, mean over documents)",
    "5": "Table 5: factuality, accuracy (Rank19) and Pearson (QAGS)",
    "6": "Table 6: data-to-text, Spearman over all texts",
    "long": "Long documents (LongDocFACTScore's benchmarks): factuality, Kendall's tau-b over all summaries",
}
ASPECT_LABELS = {
    "litepyramid_recall": "COV",
    "coherence": "COH",
    "consistency": "CON",
    "fluency": "FLU",
    "relevance": "REL",
    "informativeness": "INF",
    "naturalness": "NAT",
    "quality": "QUAL",
    "fact": "FAC",
    "factuality": "FAC",
    "darr": "DARR",
}


@dataclass
class MetricRow:
    """One metric of the table. scores: {benchmark: per-record scores}; variant / prompt / directions describe a
    BARTScore configuration ({benchmark: direction}), for matching the paper's rows."""

    name: str
    origin: str  # "bartscore", "metrics-csv" or "paper"
    scores: Mapping[str, Sequence[float] | np.ndarray] | None = None
    note: str = ""
    variant: str | None = None
    prompt: str | None = None
    directions: dict[str, str] | None = None
    signatures: dict[str, str] | None = None
    values: dict[str, Any] = field(default_factory=dict)  # column key -> measures
    paper: dict[str, Published] = field(default_factory=dict)  # column key -> Published


@dataclass
class Column:
    key: str
    table: str
    benchmark: str | None = None
    aspect: str | None = None
    components: tuple = ()

    @property
    def label(self) -> str:
        if self.benchmark is None:
            return "avg"
        # a benchmark's column always has an aspect
        return ASPECT_LABELS.get(self.aspect, self.aspect)  # type: ignore[arg-type,return-value]


def build_report(
    datasets: Mapping[str, Dataset],
    rows: list[MetricRow],
    *,
    how_to_compute: Callable[[Published], str] | None = None,
    with_significance: bool = True,
) -> tuple[dict[str, Any], str]:
    """Computes every row's measures on every column, sets the paper's numbers beside them, adds the published rows
    nothing here computed, and runs the significance test per column. datasets: {benchmark: Dataset}; rows:
    MetricRows; how_to_compute: what would compute a published row that no row here is (a run of its BARTScore
    variant and prompt set, or another metric's scores under its name in the release), in a front end's words, for
    the row's note (default: how_to_compute_here, the library's). Returns a dict ready for JSON
    (outputs.write_json_and_csv) and the text table."""
    columns = _columns(datasets)
    by_key = {column.key: column for column in columns}
    doc_ids = {name: list(dataset["doc_id"]) for name, dataset in datasets.items()}
    for row in rows:
        _compute_values(row, columns, datasets, doc_ids)
    _place_published(rows, by_key, how_to_compute or how_to_compute_here)

    report = {
        "release": {"repository": RELEASE_REPOSITORY, "commit": RELEASE_COMMIT},
        **(
            {"longdoc_release": {key: getattr(RELEASES["longdocfactscore"], key) for key in ("repository", "commit")}}
            if any(BENCHMARKS[name].long_documents for name in datasets)
            else {}
        ),
        "benchmarks": {
            name: {
                "title": BENCHMARKS[name].title,
                "protocol": BENCHMARKS[name].protocol,
                "measure": MEASURES[BENCHMARKS[name].protocol][0],
                "records": dataset.num_rows,
                "documents": len(dict.fromkeys(doc_ids[name])),
                "data": dataset.info.description,
            }
            for name, dataset in datasets.items()
        },
        "columns": [
            {
                "key": c.key,
                "table": c.table,
                "benchmark": c.benchmark,
                "aspect": c.aspect,
                "measure": _measure(c),
                "averages": list(c.components),
            }
            for c in columns
        ],
        "rows": [_row_json(row) for row in rows],
        "significance": _significance(datasets, doc_ids, columns, rows) if with_significance else {},
        "published_not_placed": [
            {
                "column": e.column,
                "what": UNPLACED_AVERAGES[e.column],
                "metric": e.metric,
                "value": e.value,
                "source": e.source,
            }
            for e in PUBLISHED
            if e.column in UNPLACED_AVERAGES and AVERAGE_TABLES[e.column] in {c.table for c in columns}
        ],
    }
    return report, render(report, columns, rows)


def _compute_values(
    row: MetricRow, columns: Sequence[Column], datasets: Mapping[str, Dataset], doc_ids: Mapping[str, list[Any]]
) -> None:
    """Sets a row's measures on every column it has scores for, then its averages over the columns that average
    others."""
    for column in columns:
        if column.benchmark and row.scores and column.benchmark in row.scores:
            human = datasets[column.benchmark][f"human_{column.aspect}"]
            measures = correlate(
                BENCHMARKS[column.benchmark].protocol,
                doc_ids[column.benchmark],
                human,
                row.scores[column.benchmark],
            )
            row.values[column.key] = {**measures, "value": measures[_measure(column)]}
    for column in columns:
        if column.components and all(key in row.values for key in column.components):
            mean = float(np.mean([row.values[key]["value"] for key in column.components]))
            row.values[column.key] = {"value": mean}


def _place_published(
    rows: list[MetricRow], by_key: Mapping[str, Column], how_to_compute: Callable[[Published], str]
) -> None:
    """Sets each published number of the table's columns beside the row it belongs to; the numbers no row here
    computes are added as rows of their own ("(paper)"), with a note saying why."""
    unmatched = []
    for entry in PUBLISHED:
        if entry.column not in by_key:
            continue
        owner = next((row for row in rows if _matches(row, entry, by_key[entry.column])), None)
        if owner is not None:
            owner.paper[entry.column] = entry
        else:
            unmatched.append(entry)
    for name in dict.fromkeys(entry.metric for entry in unmatched):
        entries = [entry for entry in unmatched if entry.metric == name]
        row = MetricRow(f"{name} (paper)", "paper", note=_paper_only_note(entries[0], how_to_compute))
        row.paper = {entry.column: entry for entry in entries}
        rows.append(row)


def _measure(column: Column) -> str:
    if column.benchmark is None:
        return "mean of the averaged columns' measures"
    return MEASURES[BENCHMARKS[column.benchmark].protocol][0]


def _columns(datasets: Mapping[str, Dataset]) -> list[Column]:
    columns = []
    for name in BENCHMARKS:  # the paper's order, whatever order the benchmarks were asked in
        if name in datasets:
            benchmark = BENCHMARKS[name]
            for aspect in benchmark.aspects:
                columns.append(Column(f"{name}/{aspect}", benchmark.paper_table, name, aspect))
    present = {column.key for column in columns}
    for key, components in AVERAGES.items():
        if components and all(component in present for component in components):
            columns.append(Column(key, AVERAGE_TABLES[key], components=components))
    return columns


def _matches(row: MetricRow, entry: Published, column: Column) -> bool:
    """Whether a published number is the paper's value of this row's configuration on that column."""
    if row.origin == "metrics-csv":
        return entry.release_key is not None and entry.release_key == row.name
    if row.origin != "bartscore" or entry.variant is None or entry.variant != row.variant or entry.prompt != row.prompt:
        return False
    benchmarks = [key.split("/")[0] for key in column.components] if column.components else [column.benchmark]
    return all(
        row.directions and row.directions.get(b) == BENCHMARKS[b].directions[0] for b in benchmarks if b in BENCHMARKS
    )


def _paper_only_note(entry: Published, how_to_compute: Callable[[Published], str]) -> str:
    if entry.note:
        return f"paper only: {entry.note}"
    if entry.variant == "omega":
        return "paper only: Ω is the paper's best BARTScore variant for each dataset, which it does not name"
    return f"paper only: {how_to_compute(entry)}"


def how_to_compute_here(entry: Published) -> str:
    """What computes a published row beside the paper's, in the library's words: a BARTScore variant scored with its
    prompt set (entry.variant, entry.prompt), or another metric's scores given as a row of origin "metrics-csv" named
    as the release names it (entry.release_key)."""
    if entry.variant is not None:
        run = f"variant {entry.variant!r}" + (f" with prompt {entry.prompt!r}" if entry.prompt else "")
        return f"not run here; score {run}"
    named = f" named {entry.release_key!r}" if entry.release_key else ""
    return f"give its scores as a MetricRow of origin 'metrics-csv'{named} to compare"


def _row_json(row: MetricRow) -> dict[str, Any]:
    difference = {}
    for key, entry in row.paper.items():
        if key in row.values:
            difference[key] = row.values[key]["value"] - entry.value
    return {
        "name": row.name,
        "origin": row.origin,
        "note": row.note,
        "directions": row.directions,
        "signatures": row.signatures,
        "values": {key: {k: _plain(v) for k, v in measures.items()} for key, measures in row.values.items()},
        "paper": {key: {"metric": e.metric, "value": e.value, "source": e.source} for key, e in row.paper.items()},
        "difference": {key: _plain(value) for key, value in difference.items()},
    }


def _plain(value: float | np.integer[Any] | np.floating[Any]) -> int | float | None:
    """JSON-ready numbers: Python floats and ints, NaN as None."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    value = float(value)
    return None if math.isnan(value) else value


def _significance(
    datasets: Mapping[str, Dataset],
    doc_ids: Mapping[str, Sequence[Hashable]],
    columns: Sequence[Column],
    rows: Sequence[MetricRow],
) -> dict[str, dict[str, Any]]:
    results = {}
    for column in columns:
        if column.benchmark is None:
            continue
        metrics = {
            row.name: row.scores[column.benchmark] for row in rows if row.scores and column.benchmark in row.scores
        }
        if len(metrics) < 2:
            continue
        human = datasets[column.benchmark][f"human_{column.aspect}"]
        tests, best = significance(BENCHMARKS[column.benchmark].protocol, doc_ids[column.benchmark], human, metrics)
        results[column.key] = {
            "rounds": ROUNDS,
            "subset_fraction": SUBSET_FRACTION,
            "seed": SEED,
            "tests": tests,
            "best": best,
        }
    return results


# ----------------------------------------------------------------------------------------------------------------------
# text


def _number(value: float | None, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—" if value is None else "nan"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def render(report: Mapping[str, Any], columns: Sequence[Column], rows: Sequence[MetricRow]) -> str:
    """The paper-style text: per paper table, three lines per metric (ours, paper, difference), then notes and the
    significance results."""
    rows_json = {row["name"]: row for row in report["rows"]}
    lines = []
    for table in sorted({column.table for column in columns}, key=lambda t: (not t.isdigit(), t)):
        shown = [column for column in columns if column.table == table]
        keys = {column.key for column in shown}
        table_rows = [row for row in rows if keys & (set(row.values) | set(row.paper))]
        name_width = max([len(row.name) for row in table_rows] + [6]) + 2
        titles = [BENCHMARKS[column.benchmark].title if column.benchmark else "" for column in shown]
        widths = [max(7, len(column.label), len(title)) + 2 for column, title in zip(shown, titles)]
        lines += ["", TABLE_TITLES[table]]
        benchmark_line, aspect_line = " " * (name_width + 7), "metric".ljust(name_width) + " " * 7
        previous = None
        for column, title, width in zip(shown, titles, widths):
            benchmark_line += (title if title != previous else "").rjust(width)
            previous = title
            aspect_line += column.label.rjust(width)
        lines += [benchmark_line.rstrip(), aspect_line]
        for row in table_rows:
            data = rows_json[row.name]
            ours = [_number(data["values"].get(c.key, {}).get("value")) for c in shown]
            paper = [_number(data["paper"][c.key]["value"] if c.key in data["paper"] else None) for c in shown]
            difference = [_number(data["difference"].get(c.key), signed=True) for c in shown]
            for label, cells in (("ours", ours), ("paper", paper), ("diff", difference)):
                head = (row.name if label == "ours" else "").ljust(name_width) + label.ljust(7)
                lines.append(head + "".join(cell.rjust(width) for cell, width in zip(cells, widths)))
        notes = [f"  {row.name}: {row.note}" for row in table_rows if row.note]
        if notes:
            lines += ["notes:", *notes]
        significant = [(c, report["significance"][c.key]) for c in shown if c.key in report["significance"]]
        if significant:
            lines.append(
                f"significance (the release's test: {ROUNDS} rounds on {SUBSET_FRACTION:.0%} of the documents, "
                f"seed {SEED}; A > B when A wins more than 95% of the rounds):"
            )
            for column, result in significant:
                wins = [
                    f"{t['a']} > {t['b']}" if t["outcome"] == 1 else f"{t['b']} > {t['a']}"
                    for t in result["tests"]
                    if t["outcome"]
                ]
                # only benchmark columns (not averages) have significance results
                where = f"{BENCHMARKS[column.benchmark].title} {column.label}"  # type: ignore[index]
                lines.append(f"  {where}: best {', '.join(result['best'])}" + (f"; {'; '.join(wins)}" if wins else ""))
    for column in dict.fromkeys(entry["column"] for entry in report["published_not_placed"]):
        entries = [entry for entry in report["published_not_placed"] if entry["column"] == column]
        values = ", ".join(f"{entry['metric']} {entry['value']:.3f}" for entry in entries)
        lines.append(f"paper, in no column: {entries[0]['source']}, {entries[0]['what']}: {values}")
    return "\n".join(lines).lstrip("\n")


# ----------------------------------------------------------------------------------------------------------------------
# files

CSV_FIELDS = (
    "table",
    "column",
    "benchmark",
    "aspect",
    "measure",
    "metric",
    "origin",
    "ours",
    "paper",
    "paper_metric",
    "difference",
    "spearman",
    "kendall",
    "pearson",
    "accuracy",
    "kendall_like",
    "documents",
    "note",
)


def report_csv(report: Mapping[str, Any]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    columns = {column["key"]: column for column in report["columns"]}
    for row in report["rows"]:
        for key, column in columns.items():
            values, paper = row["values"].get(key), row["paper"].get(key)
            if values is None and paper is None:
                continue
            values = values or {}
            line = {
                "table": column["table"],
                "column": key,
                "benchmark": column["benchmark"] or "",
                "aspect": column["aspect"] or "",
                "measure": column["measure"],
                "metric": spreadsheet_cell(row["name"]),
                "origin": row["origin"],
                "ours": values.get("value"),
                "paper": paper["value"] if paper else None,
                "paper_metric": paper["metric"] if paper else "",
                "difference": row["difference"].get(key),
                "note": spreadsheet_cell(row["note"]),
            }
            for measure in ("spearman", "kendall", "pearson", "accuracy", "kendall_like", "documents"):
                line[measure] = values.get(measure)
            writer.writerow({k: "" if v is None else v for k, v in line.items()})
    return out.getvalue()
