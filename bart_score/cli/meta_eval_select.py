"""`bartscore meta-eval --select`: every configuration of a grid (checkpoints, directions, prompts, chat
instructions) scored on the benchmarks, the best chosen on development documents per benchmark and aspect, and
reported on held-out ones (docs/selection.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..meta_eval._split import DEFAULT_DEV_FRACTION, DEFAULT_MAX_PAIRS, DEFAULT_SEED, check_split
from ..meta_eval.benchmarks import RELEASE_COMMIT, RELEASE_REPOSITORY
from ._arguments import decimal, integer
from ._meta_eval_common import MetaEvalRequest, SelectSettings, model_name, write_report
from ._requests import load_scorer, stopped_while_scoring

if TYPE_CHECKING:
    import numpy as np
    from datasets import Dataset

    from ..meta_eval._selection_grid import Configuration, GridPlan, PairKey
    from ..options import EngineOptions, ScoringOptions
    from ..scoring.protocols import ScorerIdentity
    from ..scoring.score_cache import ResumableScorer


def add_select_arguments(parser: argparse.ArgumentParser) -> None:
    """--select and the options of its grid and split."""
    choosing = parser.add_argument_group(
        "choosing a configuration (--select; docs/selection.md)",
        "The grid: each -m; the paper's direction and each of -d; no prompt, and for -p/--prompt-phrases the phrases "
        "averaged and each phrase alone; with --chat, the default instruction and each of --instructions.",
    )
    choosing.add_argument(
        "--select",
        action="store_true",
        help="score every configuration of the grid, choose the best on development documents and report it on "
        "held-out ones, beside the default configuration and the paper's value",
    )
    choosing.add_argument(
        "--dev-fraction",
        type=decimal,
        metavar="F",
        help=f"the share of documents in the development part (default {DEFAULT_DEV_FRACTION})",
    )
    choosing.add_argument(
        "--seed", type=integer, metavar="N", help=f"the seed of the documents' split (default {DEFAULT_SEED})"
    )
    choosing.add_argument(
        "--max-pairs",
        type=integer,
        metavar="N",
        help=f"refuse a grid that needs more pairs scored than this (default {DEFAULT_MAX_PAIRS:,})",
    )
    choosing.add_argument(
        "--both-sides", action="store_true", help="prompts on the encoder side and on the decoder side"
    )
    choosing.add_argument(
        "--instructions",
        nargs="+",
        metavar="TEXT",
        help="with --chat: candidate instructions (each holding {condition} once), besides the default one",
    )
    choosing.add_argument(
        "--aspects", nargs="+", metavar="ASPECT", help="the human judgments to choose for (default: every one)"
    )


_SELECT_OPTIONS = {
    "dev_fraction": "--dev-fraction",
    "seed": "--seed",
    "max_pairs": "--max-pairs",
    "both_sides": "--both-sides",
    "instructions": "--instructions",
    "aspects": "--aspects",
}


def check_select(
    args: argparse.Namespace, models: Sequence[str], benchmarks: Sequence[str], options: ScoringOptions
) -> SelectSettings | None:
    """--select's grid (over the checkpoints `models`) and settings, checked before anything is loaded; None without
    --select."""
    if not args.select:
        given = [flag for name, flag in _SELECT_OPTIONS.items() if getattr(args, name) not in (None, False)]
        if given:
            raise InputError(f"{' and '.join(given)} {'are' if len(given) > 1 else 'is'} for --select")
        return None
    from ..meta_eval._selection_grid import benchmark_grids, build_grid, lone_configuration
    from ..meta_eval._selection_statistics import check_aspects
    from ..options import template_sides

    if args.metrics_csv:
        raise InputError("--metrics-csv is for plain meta-eval; --select compares BARTScore configurations")
    dev_fraction = DEFAULT_DEV_FRACTION if args.dev_fraction is None else args.dev_fraction
    seed = DEFAULT_SEED if args.seed is None else args.seed
    check_split(dev_fraction, seed)
    max_pairs = DEFAULT_MAX_PAIRS if args.max_pairs is None else args.max_pairs
    if max_pairs < 1:
        raise InputError(f"--max-pairs must be a positive integer, got {max_pairs}")
    if args.instructions and not args.chat:
        raise InputError("--instructions is for chat scoring; add --chat")
    for index, text in enumerate(args.instructions or ()):
        template_sides(text, f"--instructions[{index}]")
    check_aspects(benchmarks, args.aspects)
    grid = build_grid(
        models,
        directions=options.directions,
        prompt=options.prompt,
        prompt_sides=("encoder", "decoder") if args.both_sides else (options.prompt_side,),
        instructions=args.instructions or (),
        names=model_name,
    )
    grids = benchmark_grids(grid, benchmarks)
    lone = lone_configuration(grids)
    if lone is not None:
        raise InputError(
            f"--select: the grid has one configuration for {lone[0]} ({lone[1]}), so there is nothing to select; plain "
            "meta-eval (without --select) gives its value, or widen the grid with -d, -p/--prompt-phrases, several -m "
            "or --instructions"
        )
    return SelectSettings(grid, grids, dev_fraction, seed, max_pairs, args.aspects)


# How many of a checkpoint's first pairs are scored alone to measure this machine's pairs per second.
SPEED_SAMPLE_PAIRS = 64
# A function of (checkpoint, the scorer's identity) that plans that checkpoint's share of the grid.
Planner = Callable[[str, "ScorerIdentity"], "GridPlan"]


@dataclass
class _CheckpointScores:
    """One checkpoint's share of the grid, scored: {benchmark: {configuration: scores}}, the signatures the same way,
    and how many of its pairs were scored and how many were taken from the cache."""

    scores: dict[str, dict[Configuration, np.ndarray]]
    signatures: dict[str, dict[Configuration, str]]
    scored: int
    cached: int


def run_select(request: MetaEvalRequest, settings: SelectSettings, datasets: Mapping[str, Dataset]) -> None:
    """--select: the grid's pairs counted (and refused over --max-pairs) before any model loads; each checkpoint's
    pairs scored in one planned call through the score cache, after a small sample that measures the speed; the
    configuration chosen on the development documents per benchmark and aspect, reported on the held-out ones."""
    from ..meta_eval._selection_report import render, report_csv
    from ..meta_eval._split import split_shortfall

    command = request.command
    for name, dataset in datasets.items():
        shortfall = split_shortfall(name, dataset, settings.dev_fraction, settings.seed)
        if shortfall is not None:
            raise InputError(f"{shortfall}: give more documents or another --dev-fraction")
    plan = _planner(request, settings.grids, datasets)
    total = _count_pairs(request, plan, settings.grids)
    if total > settings.max_pairs:
        raise InputError(
            f"the grid needs {total:,} pairs, more than --max-pairs {settings.max_pairs:,}; shrink it (fewer "
            f"prompts, directions, checkpoints or documents) or raise --max-pairs"
        )

    scores: dict[str, dict[Any, Any]] = {name: {} for name in datasets}
    signatures: dict[str, dict[str, str]] = {name: {} for name in datasets}
    cached = scored = 0
    for checkpoint in request.models:
        outcome = _score_checkpoint(request, request.engine.replace(checkpoint=checkpoint), plan)
        if outcome is None:  # a rank other than 0 under torchrun: rank 0 reports
            return
        for name, by_configuration in outcome.scores.items():
            scores[name].update(by_configuration)
            for configuration, text in outcome.signatures[name].items():
                signatures[name][configuration.name] = text
        scored += outcome.scored
        cached += outcome.cached

    report = _report(request, settings, datasets, scores, signatures, total)
    print(render(report))
    written = write_report(request.prefix, report, report_csv(report))
    print(f"{command}: {scored} pair(s) scored, {cached} taken from {request.cache}", file=sys.stderr)
    print(f"{command}: wrote {' and '.join(written)}", file=sys.stderr)


def _planner(
    request: MetaEvalRequest, grids: Mapping[str, Sequence[Configuration]], datasets: Mapping[str, Dataset]
) -> Planner:
    """How a checkpoint's share of the grid is planned: its configurations over the benchmarks' texts (detokenized
    where the release does), for a scorer's identity."""
    from ..meta_eval._selection_grid import GridPlan, prepared_texts

    texts = prepared_texts(datasets, request.detokenize)

    def plan(checkpoint: str, identity: ScorerIdentity) -> GridPlan:
        ours = {name: [c for c in grid if c.checkpoint == checkpoint] for name, grid in grids.items()}
        return GridPlan(texts, ours, request.options, identity)

    return plan


def _count_pairs(request: MetaEvalRequest, plan: Planner, grids: Mapping[str, Sequence[Configuration]]) -> int:
    """The distinct pairs the grid needs, counted before any model loads (from what the options tell of the scorers'
    identities) and said, with the grid's size."""
    from ..meta_eval._selection_grid import ScorerRecord

    # What the pairs depend on is what the options tell before a model loads; with no model yet, a retriever
    # (long_source="windows") runs on the CPU.
    known = ScorerRecord(model_label="", fields=(), options=request.engine.replace(device="cpu"))
    counts = {checkpoint: len(plan(checkpoint, known).pairs) for checkpoint in request.models}
    total = sum(counts.values())
    sizes = ", ".join(f"{len(grid)} configurations on {name}" for name, grid in grids.items())
    print(
        f"{request.command}: the grid: {sizes}; scoring them needs {total:,} distinct pairs"
        + (f" ({', '.join(f'{n:,} for {model_name(m)}' for m, n in counts.items())})" if len(counts) > 1 else ""),
        file=sys.stderr,
    )
    return total


def _score_checkpoint(request: MetaEvalRequest, engine: EngineOptions, plan: Planner) -> _CheckpointScores | None:
    """The share of the grid of the checkpoint `engine` loads, scored in one planned call through the score cache
    after a sample that measures the speed; None on a rank other than 0 under torchrun, where rank 0 reports. A
    checkpoint that cannot be loaded, or scoring that stops, ends the run (raised)."""
    from ..meta_eval._selection_grid import engine_arguments
    from ..scoring.score_cache import ResumableScorer

    options = request.options
    scorer = load_scorer(engine, quiet=not options.show_progress)
    resumable = ResumableScorer(scorer, request.cache, chunk_pairs=request.save_every)
    checkpoint_plan = plan(engine.checkpoint, scorer)
    pairs = checkpoint_plan.ordered_pairs()
    try:
        _measure_speed(request.command, engine.checkpoint, resumable, pairs, options)
        conditions, targets, per_pair = engine_arguments(pairs)
        values = resumable.score(
            conditions,
            targets,
            options.batch_size,
            max_tokens=options.max_tokens,
            show_progress=options.show_progress,
            **per_pair,
        )
    except (OSError, RuntimeError, ValueError, KeyboardInterrupt) as error:
        raise stopped_while_scoring(error, resumable.scored_pairs, request.cache) from error
    if values is None:
        return None
    return _CheckpointScores(
        checkpoint_plan.scores(dict(zip(pairs, values))),
        checkpoint_plan.signatures,
        scored=resumable.scored_pairs,  # the sample's pairs, then the rest
        cached=len(pairs) - resumable.scored_pairs,
    )


def _measure_speed(
    command: str, checkpoint: str, resumable: ResumableScorer, pairs: Sequence[PairKey], options: ScoringOptions
) -> None:
    """Scores a checkpoint's first pairs alone (through the cache) and says how fast this machine scored them, and so
    about how long the rest takes."""
    import time

    from ..meta_eval._selection_grid import engine_arguments

    sample = pairs[:SPEED_SAMPLE_PAIRS]
    start = time.perf_counter()
    conditions, targets, per_pair = engine_arguments(sample)
    # condition_lang and instruction lists, which mypy cannot tell from score()'s other keywords
    resumable.score(conditions, targets, options.batch_size, max_tokens=options.max_tokens, **per_pair)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - start
    if resumable.scored_pairs:
        rate = resumable.scored_pairs / elapsed
        print(
            f"{command}: {model_name(checkpoint)}: {len(pairs):,} pairs; this machine scored "
            f"{rate:.1f} pairs/s on the first {resumable.scored_pairs} (about "
            f"{(len(pairs) - len(sample)) / rate:.0f} s for the rest, less what the cache holds)",
            file=sys.stderr,
        )
    else:
        print(
            f"{command}: {model_name(checkpoint)}: {len(pairs):,} pairs; the first {len(sample)} are in the "
            f"cache, so no speed was measured",
            file=sys.stderr,
        )


def _report(
    request: MetaEvalRequest,
    settings: SelectSettings,
    datasets: Mapping[str, Dataset],
    scores: Mapping[str, Mapping[Configuration, Any]],
    signatures: Mapping[str, Mapping[str, str]],
    total: int,
) -> dict[str, Any]:
    """The run's report: the choice per benchmark and aspect (bart_score.meta_eval._selection_statistics.select), the
    grid's configurations, their signatures and the run's settings."""
    from ..meta_eval._selection_statistics import select

    ordered = {name: {c: scores[name][c] for c in grid} for name, grid in settings.grids.items()}
    return {
        "release": {"repository": RELEASE_REPOSITORY, "commit": RELEASE_COMMIT},
        **select(
            datasets,
            ordered,
            dev_fraction=settings.dev_fraction,
            seed=settings.seed,
            aspects=settings.aspects,
        ),
        "configurations": [configuration.describe() for configuration in settings.grid],
        "signatures": signatures,
        "run": {
            "models": request.models,
            "detokenize": request.detokenize,
            "aggregation": request.options.aggregation or "the release's per benchmark",
            "cache": request.cache,
            "pairs": total,
        },
    }
