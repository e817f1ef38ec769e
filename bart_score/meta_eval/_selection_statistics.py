"""The choice of ``bartscore meta-eval --select`` (docs/selection.md) and its statistics: per benchmark and aspect,
the configuration best on the development part, its value on the held-out part with a bootstrap interval that
resamples held-out documents (scipy.stats.bootstrap), the default configuration's beside it, and the paper's
published value. The candidates and their scores come from meta_eval._selection_grid, the split from meta_eval._split;
meta_eval._selection_report prints and writes the result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from ..errors import InputError
from ._selection_grid import Configuration, lone_configuration
from ._split import DEFAULT_DEV_FRACTION, DEFAULT_SEED, MIN_DOCUMENTS, split_keys, split_records, split_unit
from .benchmarks import BENCHMARKS
from .protocol import MEASURES, correlate
from .published import PUBLISHED, Published

RESAMPLES = 2000
CONFIDENCE = 0.95


def measure(benchmark: str) -> str:
    """The measure the paper reports for a benchmark (its protocol's first)."""
    return MEASURES[BENCHMARKS[benchmark].protocol][0]


def value_on(benchmark: str, dataset: Any, aspect: str, scores: np.ndarray, rows: np.ndarray) -> dict[str, float]:
    """The protocol's measures on the records at `rows`, with the documents used."""
    all_ids = dataset["doc_id"]  # a Dataset builds a column anew at each lookup: once here
    doc_ids = [all_ids[row] for row in rows]
    human = np.asarray(dataset[f"human_{aspect}"], dtype=np.float64)[rows]
    measures = correlate(BENCHMARKS[benchmark].protocol, doc_ids, human, np.asarray(scores)[rows])
    return {"value": float(measures[measure(benchmark)]), "documents": int(measures["documents"])}


def bootstrap_interval(
    benchmark: str,
    dataset: Any,
    aspect: str,
    scores: np.ndarray,
    rows: np.ndarray,
    *,
    seed: int,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """A percentile bootstrap interval of the measure on the records at `rows`, resampling their split units
    (documents; source texts for WMT19 and data-to-text) with replacement. Summary-level Spearman is the mean of
    per-document values, so its documents' values are resampled directly; the other protocols recompute the measure
    on each resample's records, a unit drawn twice counting twice. (nan, nan) with fewer than two units."""
    protocol = BENCHMARKS[benchmark].protocol
    human = np.asarray(dataset[f"human_{aspect}"], dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    doc_ids = list(dataset["doc_id"])
    keys = split_keys(benchmark, dataset)
    units: dict[str, list[int]] = {}
    for row in rows:
        units.setdefault(keys[row] if protocol != "summary_level" else doc_ids[row], []).append(int(row))
    rng = np.random.default_rng(seed)
    if protocol == "summary_level":
        per_document = []
        for positions in units.values():
            truth, predicted = human[positions], scores[positions]
            if len(set(truth.tolist())) > 1 and len(set(predicted.tolist())) > 1:
                per_document.append(stats.spearmanr(truth, predicted)[0])
        if len(per_document) < 2:
            return float("nan"), float("nan")
        result = stats.bootstrap(
            (np.asarray(per_document),),
            np.mean,
            n_resamples=resamples,
            confidence_level=confidence,
            method="percentile",
            random_state=rng,  # rng= is scipy 1.15's name; the project allows 1.11
        )
        return float(result.confidence_interval.low), float(result.confidence_interval.high)
    members = list(units.values())
    if len(members) < 2:
        return float("nan"), float("nan")

    def statistic(drawn: np.ndarray) -> float:
        positions = [position for unit in drawn.astype(int) for position in members[unit]]
        relabelled = [f"{place}:{doc_ids[p]}" for place, unit in enumerate(drawn.astype(int)) for p in members[unit]]
        measures = correlate(protocol, relabelled, human[positions], scores[positions])
        return float(measures[measure(benchmark)])

    result = stats.bootstrap(
        (np.arange(len(members)),),
        statistic,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=False,
        random_state=rng,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def check_aspects(benchmarks: Sequence[str], aspects: Sequence[str] | None) -> None:
    """Every benchmark has human judgments of every requested aspect (InputError naming both, else)."""
    for benchmark in benchmarks:
        for aspect in aspects or ():
            if aspect not in BENCHMARKS[benchmark].aspects:
                raise InputError(
                    f"{benchmark} ({BENCHMARKS[benchmark].title}) has no human judgments of {aspect!r}; its aspects "
                    f"are {', '.join(BENCHMARKS[benchmark].aspects)}"
                )


def paper_value(benchmark: str, aspect: str) -> Published | None:
    """The paper's BARTScore value for the column: its chosen "Ω + Prompt" row where it has one, else its first
    BARTScore row."""
    entries = [e for e in PUBLISHED if e.column == f"{benchmark}/{aspect}" and e.metric.startswith("BARTScore")]
    chosen = [e for e in entries if e.variant == "omega"]
    found = chosen or entries
    return found[0] if found else None


def select(
    datasets: Mapping[str, Any],
    scores: Mapping[str, Mapping[Configuration, np.ndarray]],
    *,
    dev_fraction: float = DEFAULT_DEV_FRACTION,
    seed: int = DEFAULT_SEED,
    aspects: Sequence[str] | None = None,
    resamples: int = RESAMPLES,
) -> dict[str, Any]:
    """Per benchmark and aspect (all of the benchmark's, or `aspects`): the configuration best on the development
    part (a tie keeps the earlier one; the default, first, wins ties), its held-out value with a bootstrap interval,
    the default configuration's (each benchmark's first) beside it, the paper's value, and every configuration's
    development and held-out values. scores: {benchmark: {configuration: per-record scores}}, from
    selection_grid.GridPlan.scores.
    Returns a dict ready for JSON."""
    check_aspects(list(datasets), aspects)
    lone = lone_configuration({benchmark: list(scores[benchmark]) for benchmark in datasets})
    if lone is not None:
        raise InputError(
            f"{lone[0]}: the grid has one configuration ({lone[1]}), so there is nothing to select; score_benchmarks "
            f"gives its value on all the documents"
        )
    columns = []
    split = {}
    for benchmark, records in datasets.items():
        # The columns read, as lists: a Dataset builds a column anew at each lookup.
        wanted = ["doc_id", "source", *(f"human_{a}" for a in aspects or BENCHMARKS[benchmark].aspects)]
        dataset = {column: list(records[column]) for column in wanted}
        development, held_out = split_records(benchmark, dataset, dev_fraction, seed)
        keys = split_keys(benchmark, dataset)
        split[benchmark] = {
            "unit": split_unit(benchmark),
            "development": list(dict.fromkeys(keys[row] for row in development)),
            "held_out": list(dict.fromkeys(keys[row] for row in held_out)),
        }
        for aspect in aspects or BENCHMARKS[benchmark].aspects:
            columns.append(
                _column(benchmark, dataset, aspect, scores[benchmark], (development, held_out), seed, resamples)
            )
    return {
        "selection": {
            "dev_fraction": dev_fraction,
            "seed": seed,
            "split": "SHA-256 of '<seed>:<key>', its first 8 bytes as a fraction of 2**64, below dev_fraction",
            "minimum_documents": MIN_DOCUMENTS,
            "bootstrap": {
                "method": "percentile",
                "resamples": resamples,
                "confidence": CONFIDENCE,
                "resampled": "held-out documents (source texts for WMT19 and data-to-text)",
            },
        },
        "split": split,
        "columns": columns,
    }


def _column(
    benchmark: str,
    dataset: Mapping[str, list[Any]],
    aspect: str,
    scores: Mapping[Configuration, np.ndarray],
    parts: tuple[np.ndarray, np.ndarray],
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    """One column of the selection (a benchmark's aspect): every configuration's development and held-out values, the
    best on the development part and the default (the first) with held-out bootstrap intervals, and the paper's
    value. parts: the (development, held-out) rows of the dataset."""
    development, held_out = parts
    candidates: list[dict[str, Any]] = []
    for configuration in scores:
        values = scores[configuration]
        candidates.append(
            {
                "configuration": configuration,
                "development": value_on(benchmark, dataset, aspect, values, development),
                "held_out": value_on(benchmark, dataset, aspect, values, held_out),
            }
        )
    usable = [c for c in candidates if not np.isnan(c["development"]["value"])]
    best = max(usable, key=lambda c: c["development"]["value"]) if usable else candidates[0]
    chosen = {}
    for role, entry in (("best", best), ("default", candidates[0])):
        low, high = bootstrap_interval(
            benchmark,
            dataset,
            aspect,
            scores[entry["configuration"]],
            held_out,
            seed=seed,
            resamples=resamples,
        )
        chosen[role] = {
            "name": entry["configuration"].name,
            "development": entry["development"]["value"],
            "held_out": entry["held_out"]["value"],
            "interval": [low, high],
            "development_documents": entry["development"]["documents"],
            "held_out_documents": entry["held_out"]["documents"],
        }
    paper = paper_value(benchmark, aspect)
    return {
        "key": f"{benchmark}/{aspect}",
        "benchmark": benchmark,
        "aspect": aspect,
        "measure": measure(benchmark),
        **chosen,
        "optimism": chosen["best"]["development"] - chosen["best"]["held_out"],
        "paper": {"metric": paper.metric, "value": paper.value, "source": paper.source} if paper else None,
        "configurations": [
            {
                "name": c["configuration"].name,
                "development": c["development"]["value"],
                "held_out": c["held_out"]["value"],
            }
            for c in candidates
        ],
    }
