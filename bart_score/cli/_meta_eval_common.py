"""What plain meta-eval (bart_score.cli.meta_eval) and its --select (bart_score.cli.meta_eval_select) share: the checked
request (MetaEvalRequest, with --select's settings: SelectSettings), a checkpoint's name in the table, and the
writing of the report's files (what a run stopped while scoring says is bart_score.cli._requests', which score and
compare share)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._wording import Failed

if TYPE_CHECKING:
    from ..meta_eval._selection_grid import Configuration
    from ..options import EngineOptions, ScoringOptions

# A metrics CSV's scores: {metric: {benchmark: {(doc_id, system): score}}}.
MetricScores = dict[str, dict[str, dict[tuple[str, str], float]]]


@dataclass(frozen=True)
class SelectSettings:
    """--select's grid and split, checked: every configuration (`grid`), each benchmark's (`grids`), the share of
    documents for development and the split's seed, the most pairs the grid may need, and the human judgments to
    choose for (None: every one)."""

    grid: list[Configuration]
    grids: dict[str, list[Configuration]]
    dev_fraction: float
    seed: int
    max_pairs: int
    aspects: list[str] | None


@dataclass(frozen=True)
class MetaEvalRequest:
    """What `bartscore meta-eval` asks for, checked before anything is loaded.

    command: the subcommand as its messages name it. benchmarks: the names run; long_benchmarks, those of them with
    long documents, which get a row of faithfulness over source windows (`windows`: its options). options: the
    scoring options; engine: the engine's settings, for the first checkpoint of `models` (several with --select).
    Where the data comes from: data_files (a benchmark's own file, from --data), release_dirs (a checkout of each
    release, or None), data_cache. metrics: the scores of the metrics CSV (metrics_csv). Outputs: the report's
    prefix and the score cache, appended every save_every pairs. detokenize and significance as the flags say;
    select: --select's settings (None: plain meta-eval)."""

    command: str
    benchmarks: list[str]
    long_benchmarks: list[str]
    options: ScoringOptions
    windows: ScoringOptions | None
    engine: EngineOptions
    models: list[str]
    data_files: dict[str, str]
    release_dirs: dict[str, str | None]
    data_cache: str | None
    metrics: MetricScores
    metrics_csv: str | None
    prefix: str
    cache: str
    save_every: int
    detokenize: bool
    significance: bool
    select: SelectSettings | None


def model_name(model: str) -> str:
    """A checkpoint directory or GGUF file by its own name; variants and Hub ids as given."""
    return os.path.basename(os.path.normpath(model)) if os.path.exists(model) else model


def write_report(prefix: str, report: Any, csv_text: str) -> tuple[str, str]:
    """The files written: PREFIX.json, the whole report, and PREFIX.csv. One that cannot be written is a Failed."""
    from ..corpora._outputs import write_json_and_csv

    try:
        return write_json_and_csv(prefix, report, csv_text)
    except OSError as error:
        raise Failed(error, f"cannot write {prefix}.json/.csv", reason=error.strerror) from error
