"""`bartscore meta-eval`: the paper's correlations with human judgments on the BARTScore release's benchmarks, for
any checkpoint, directions or prompt, beside the published numbers (and any other metrics' scores from a CSV)."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import CacheFileError, UsageError
from ..meta_eval.benchmarks import (
    BENCHMARKS,
    DATA_CACHE_ENV,
    GROUPS,
    LONGDOC_DIR_ENV,
    RELEASE_COMMIT,
    RELEASE_DIR_ENV,
    RELEASE_REPOSITORY,
    resolve_benchmarks,
)
from ..meta_eval.split import DEFAULT_DEV_FRACTION, DEFAULT_MAX_PAIRS, DEFAULT_SEED
from ..outputs import check_distinct_outputs, check_not_an_input, check_output_path
from ..prompts import PROMPT_SETS
from ..score_cache import DEFAULT_CHUNK_PAIRS, check_cache_file
from ..tables import read_table
from ..variants import PARA_WEIGHTS_ENV, VARIANTS
from .common import (
    add_long_source_arguments,
    add_model_arguments,
    check_engine_options,
    check_input_files,
    integer,
    load_scorer,
    options_from_args,
)

if TYPE_CHECKING:
    from datasets import Dataset

    from ..engine import BARTScorer
    from ..meta_eval.table import MetricRow
    from ..options import ScoringOptions
    from ..score_cache import ResumableScorer

DEFAULT_OUTPUT_DIR = "meta-eval"
_CHECKPOINT_VARIANTS = {"facebook/bart-large": "vanilla", "facebook/bart-large-cnn": "cnn"}


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]
) -> None:
    # The corpus options of `score` do not apply: the texts come from the benchmarks.
    model = argparse.ArgumentParser(add_help=False)
    add_model_arguments(
        model,
        directions_default_text="the paper's for each benchmark",
        aggregation_default=None,
        aggregation_default_text="the release's: mean, max for data-to-text",
        several_models="with --select, give -m once for each checkpoint to choose among",
    )
    parser = commands.add_parser(
        "meta-eval",
        parents=[model],
        help="the paper's correlations with human judgments on its benchmarks, beside the published numbers",
        description=(
            "Scores every text of the BARTScore release's benchmarks and correlates the scores with the human "
            "judgments as the release's analysis code does; prints the paper-style table (ours, paper, difference) "
            "and writes it as CSV and JSON. Without --directions/--aggregation each benchmark uses the paper's "
            "choices (REALSumm recall; SummEval, NeR18, Rank19, QAGS faithfulness; WMT19 and data-to-text F; mean "
            "over references, max for data-to-text)."
        ),
    )
    names = ", ".join([*BENCHMARKS, *GROUPS])
    parser.add_argument("-b", "--benchmark", nargs="+", required=True, metavar="NAME", help=f"one or more of: {names}")
    parser.add_argument(
        "--metrics-csv",
        metavar="FILE",
        help="other metrics' scores to compare under the same protocol: columns doc_id, system (empty for "
        "data-to-text), benchmark (when several are run) and one column per metric",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="PREFIX",
        help=f"writes PREFIX.json and PREFIX.csv (default: {DEFAULT_OUTPUT_DIR}/<benchmarks>.<model>, and "
        f"<benchmarks>.<model>.chat with --chat)",
    )
    parser.add_argument(
        "--cache",
        metavar="FILE",
        help="scores kept across runs, so an interrupted run resumes (default: scores-cache.jsonl beside the output)",
    )
    parser.add_argument(
        "--save-every",
        type=integer,
        default=DEFAULT_CHUNK_PAIRS,
        metavar="PAIRS",
        help=f"append finished scores to the cache every this many pairs (default {DEFAULT_CHUNK_PAIRS})",
    )
    parser.add_argument(
        "--no-detokenize",
        dest="detokenize",
        action="store_false",
        help="score summarization and data-to-text texts as the files have them (the release detokenizes them "
        "with Moses first)",
    )
    parser.add_argument("--no-significance", dest="significance", action="store_false", help="skip the tests")
    parser.add_argument(
        "--rescale",
        nargs="?",
        const="baseline",
        metavar="MODE",
        help="not offered here: rescaling is one increasing linear map per direction, so it leaves every "
        "correlation and significance verdict of the table as the raw scores give them",
    )
    data = parser.add_argument_group("benchmark data (default: downloaded once from the release into a cache)")
    data.add_argument("--release-dir", metavar="DIR", help=f"a checkout of the release (or ${RELEASE_DIR_ENV})")
    data.add_argument(
        "--longdoc-release-dir",
        metavar="DIR",
        help=f"a checkout of the LongDocFACTScore release, for its long-document benchmarks (or ${LONGDOC_DIR_ENV})",
    )
    data.add_argument("--data-cache", metavar="DIR", help=f"where downloads are kept (or ${DATA_CACHE_ENV})")
    data.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="read a benchmark from your own file in the release's layout (for the long-document benchmarks, a folder "
        "holding the LongDocFACTScore release's data/ files), not checked against the release",
    )
    add_long_source_arguments(parser, mode=False)
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
        type=float,
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
    parser.set_defaults(check=check, run=run)


_SELECT_OPTIONS = {
    "dev_fraction": "--dev-fraction",
    "seed": "--seed",
    "max_pairs": "--max-pairs",
    "both_sides": "--both-sides",
    "instructions": "--instructions",
    "aspects": "--aspects",
}


def _models(args: argparse.Namespace) -> list[str]:
    """The -m values (the default checkpoint when none is given); several only with --select, each once."""
    models = args.model or ["cnn"]
    repeated = sorted({model for model in models if models.count(model) > 1})
    if repeated:
        raise UsageError(f"-m {repeated[0]} is given more than once; give each checkpoint once")
    named: dict[str, str] = {}
    for model in models:
        other = named.setdefault(_model_name(model), model)
        if other != model:
            raise UsageError(
                f"-m {other} and -m {model} are both named {_model_name(model)!r} in the table; give one of them "
                f"under another folder name"
            )
    if len(models) > 1 and not args.select:
        raise UsageError(
            f"-m is given {len(models)} times; several checkpoints are for --select, which chooses among them "
            f"(plain meta-eval scores one checkpoint)"
        )
    return models


def check_select(args: argparse.Namespace, benchmarks: Sequence[str], options: ScoringOptions) -> dict[str, Any]:
    """--select's grid and settings, checked before anything is loaded."""
    if not args.select:
        given = [flag for name, flag in _SELECT_OPTIONS.items() if getattr(args, name) not in (None, False)]
        if given:
            raise UsageError(f"{' and '.join(given)} {'are' if len(given) > 1 else 'is'} for --select")
        return {}
    from ..meta_eval.selection import benchmark_grids, build_grid, check_aspects
    from ..templates import template_sides

    if args.metrics_csv:
        raise UsageError("--metrics-csv is for plain meta-eval; --select compares BARTScore configurations")
    dev_fraction = DEFAULT_DEV_FRACTION if args.dev_fraction is None else args.dev_fraction
    if not 0 < dev_fraction < 1:
        raise UsageError(f"--dev-fraction must be between 0 and 1 (exclusive), got {dev_fraction}")
    max_pairs = DEFAULT_MAX_PAIRS if args.max_pairs is None else args.max_pairs
    if max_pairs < 1:
        raise UsageError(f"--max-pairs must be a positive integer, got {max_pairs}")
    if args.instructions and not args.chat:
        raise UsageError("--instructions is for chat scoring; add --chat")
    for index, text in enumerate(args.instructions or ()):
        template_sides(text, f"--instructions[{index}]")
    check_aspects(benchmarks, args.aspects)
    grid = build_grid(
        args.models,
        directions=options.directions,
        prompt=options.prompt,
        prompt_sides=("encoder", "decoder") if args.both_sides else (options.prompt_side,),
        instructions=args.instructions or (),
        names=_model_name,
    )
    grids = benchmark_grids(grid, benchmarks)
    for name, configurations in grids.items():
        if len(configurations) < 2:
            raise UsageError(
                f"--select: the grid has one configuration for {name} ({configurations[0].name}), so there is "
                f"nothing to select; plain meta-eval (without --select) gives its value, or widen the grid with -d, "
                f"-p/--prompt-phrases, several -m or --instructions"
            )
    return {
        "grid": grid,
        "grids": grids,
        "dev_fraction": dev_fraction,
        "seed": DEFAULT_SEED if args.seed is None else args.seed,
        "max_pairs": max_pairs,
    }


def check(args: argparse.Namespace) -> tuple[dict[str, Any], ScoringOptions]:
    args.models = _models(args)
    args.model = args.models[0]
    if args.rescale is not None:
        raise UsageError(
            f"--rescale {args.rescale}: meta-eval does not rescale; rescaled scores are one increasing linear map "
            "per direction of the raw ones, so every correlation, accuracy and significance verdict in the table "
            "would be exactly the same; run meta-eval without --rescale"
        )
    try:
        benchmarks = resolve_benchmarks(args.benchmark)
    except ValueError as error:
        raise UsageError(f"--benchmark: {error}") from None
    # --aggregation's default is the release's choice per benchmark, which score_benchmarks makes.
    long_benchmarks = [name for name in benchmarks if BENCHMARKS[name].long_documents]
    # The long-document benchmarks get a row of faithfulness over source windows besides the usual one.
    options = options_from_args(
        args, aggregation="mean", rescale=None, **({"long_source": "windows"} if long_benchmarks else {})
    )
    windows = options if long_benchmarks else None
    options = options.replace(long_source=None)
    options.directions_for(has_references=True, has_sources=True)
    check_engine_options(args)
    select = check_select(args, benchmarks, options)
    if args.save_every < 1:
        raise UsageError(f"--save-every must be a positive integer, got {args.save_every}")
    if args.detokenize and any(BENCHMARKS[name].detokenize for name in benchmarks):
        try:
            import sacremoses  # noqa: F401
        except ImportError:
            raise UsageError(
                "the release detokenizes summarization and data-to-text texts with Moses before scoring: install "
                'sacremoses (pip install "bartscore[meta-eval]"), or pass --no-detokenize to score them as they are'
            ) from None
    data_files: dict[str, str] = {}
    given: dict[str, str] = {}  # benchmark -> the --data argument that gave it
    for item in args.data:
        name, _, path = item.partition("=")
        if not path or name.lower() not in benchmarks:
            raise UsageError(f"--data {item!r}: give NAME=FILE with NAME one of the benchmarks run ({benchmarks})")
        folder = BENCHMARKS[name.lower()].long_documents
        if not (os.path.isdir(path) if folder else os.path.isfile(path)):
            raise UsageError(f"--data {item!r}: {path} is not a {'folder' if folder else 'file'}")
        if not folder:
            check_input_files([(f"--data {name}=", path)])
        if name.lower() in data_files:
            raise UsageError(
                f"--data {item!r}: {name.lower()} was given before (--data {given[name.lower()]}); give each "
                "benchmark one file"
            )
        data_files[name.lower()], given[name.lower()] = path, item
    for option, folder in (("--release-dir", args.release_dir), ("--longdoc-release-dir", args.longdoc_release_dir)):
        if folder and not os.path.isdir(folder):
            raise UsageError(f"{option} {folder!r} is not a folder")
    check_input_files([("--metrics-csv", args.metrics_csv)])
    metrics = read_metrics_csv(args.metrics_csv, benchmarks) if args.metrics_csv else {}

    for option, value in (("-o", args.output), ("--cache", args.cache)):
        if value == "":
            raise UsageError(f"{option} is empty; give a file name, or leave it out for the default")
    prefix = args.output
    if prefix is None:
        chat = ".chat" if args.chat else ""  # beside the same model's plain run, not over it
        prefix = os.path.join(DEFAULT_OUTPUT_DIR, f"{'+'.join(args.benchmark)}.{_slug(args.model)}{chat}")
    cache = args.cache
    if cache is None:
        cache = os.path.join(os.path.dirname(prefix) or ".", "scores-cache.jsonl")
    outputs = [("-o", prefix + ".json"), ("-o", prefix + ".csv"), ("--cache", cache)]
    inputs = [*((f"--data {name}=", path) for name, path in data_files.items()), ("--metrics-csv", args.metrics_csv)]
    for option, path in outputs:
        check_output_path(path, option, make_folders=True)
        check_not_an_input(path, inputs, option)
    check_distinct_outputs(outputs)
    try:  # a file that is no cache of ours, or a damaged one, is refused before the model loads
        check_cache_file(cache)
    except CacheFileError as error:
        raise UsageError(f"--cache: {error}") from None
    request = {
        "benchmarks": benchmarks,
        "data_files": data_files,
        "metrics": metrics,
        "prefix": prefix,
        "cache": cache,
        "long_benchmarks": long_benchmarks,
        "windows": windows,
        "select": select,
    }
    return request, options


def _model_name(model: str) -> str:
    """A checkpoint directory or GGUF file by its own name; variants and Hub ids as given."""
    return os.path.basename(os.path.normpath(model)) if os.path.exists(model) else model


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", _model_name(model)) or "model"


def read_metrics_csv(path: str, benchmarks: Sequence[str]) -> dict[str, dict[str, dict[tuple[str, str], float]]]:
    """{metric: {benchmark: {(doc_id, system): score}}} from a CSV (UTF-8) of other metrics' scores."""
    try:
        table = read_table(path, kind="csv")
    except UsageError as error:
        raise UsageError(f"--metrics-csv {error}") from None
    header = table.columns
    keys = ["doc_id", "system"] + (["benchmark"] if len(benchmarks) > 1 else [])
    missing = [key for key in keys if key not in header]
    if missing:
        raise UsageError(f"--metrics-csv {path} needs the columns {keys}; it lacks {missing} (it has {header})")
    metric_names = [name for name in header if name not in ("doc_id", "system", "benchmark")]
    if not metric_names:
        raise UsageError(f"--metrics-csv {path} needs one named column per metric besides {keys}")
    # metric -> benchmark -> (doc_id, system) -> score
    metrics: dict[str, dict[str, dict[tuple[str, str], float]]] = {name: {} for name in metric_names}
    for number, row in zip(table.lines, table.rows):  # a row of empty cells is refused below: it has no score
        benchmark = row["benchmark"].strip().lower() if "benchmark" in row else benchmarks[0]
        if benchmark not in benchmarks:
            raise UsageError(
                f"--metrics-csv {path} line {number}: benchmark {row['benchmark']!r} is not one of those run "
                f"({', '.join(benchmarks)})"
            )
        key = (row["doc_id"], row["system"])
        for name in metric_names:
            try:
                value = float(row[name])
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise UsageError(f"--metrics-csv {path} line {number}, column {name!r}: {row[name]!r} is not a number")
            scores = metrics[name].setdefault(benchmark, {})
            if key in scores:
                raise UsageError(f"--metrics-csv {path} line {number}: document {key[0]!r}, system {key[1]!r} again")
            scores[key] = value
    return metrics


def metric_rows(
    metrics: Mapping[str, Mapping[str, Mapping[tuple[str, str], float]]],
    datasets: Mapping[str, Dataset],
    path: str | None,
) -> list[MetricRow]:
    """The metrics CSV's columns as table rows: every record of each benchmark it covers needs a score."""
    from ..meta_eval.table import MetricRow

    rows = []
    for name, per_benchmark in metrics.items():
        scores = {}
        for benchmark, values in per_benchmark.items():
            dataset = datasets[benchmark]
            records = list(zip(dataset["doc_id"], dataset["system"]))
            known = set(records)
            unknown = [key for key in values if key not in known]
            if unknown:
                raise UsageError(
                    f"--metrics-csv {path}: {benchmark} has no record with doc_id {unknown[0][0]!r} and system "
                    f"{unknown[0][1]!r} ({len(unknown)} such row(s))"
                )
            absent = [key for key in records if key not in values]
            if absent:
                raise UsageError(
                    f"--metrics-csv {path}: column {name!r} has no score for {benchmark} doc_id {absent[0][0]!r}, "
                    f"system {absent[0][1]!r} ({len(absent)} of {len(records)} records lack one)"
                )
            scores[benchmark] = [values[key] for key in records]
        rows.append(MetricRow(name, "metrics-csv", scores=scores))
    return rows


def long_document_rows(
    args: argparse.Namespace,
    scorer: BARTScorer,
    resumable: ResumableScorer,
    datasets: Mapping[str, Dataset],
    request: Mapping[str, Any],
    label: str,
) -> list[MetricRow]:
    """The long-document benchmarks' further rows: faithfulness over source windows, and, for a causal LM with more
    positions than max_length, the whole source as its prefix (max_length up to the model's positions)."""
    from ..meta_eval.scoring import score_benchmarks
    from ..meta_eval.table import MetricRow
    from ..models.causal import CausalFamily
    from ..score_cache import ResumableScorer

    names = request["long_benchmarks"]
    if not names:
        return []
    long_datasets = {name: datasets[name] for name in names}
    windows = request["windows"].replace(directions=("faithfulness",))
    rule = windows.window if windows.window == "longdocfactscore" else f"+/-{windows.window}"
    retriever = windows.windows.retriever_label
    runs = [(f"{label} windows (k={windows.windows_k}, {rule}, {retriever})", resumable, windows)]
    positions = scorer.family.max_positions
    if isinstance(scorer.family, CausalFamily) and positions and positions > scorer.max_length:
        whole = ResumableScorer(scorer.with_max_length(positions), request["cache"], chunk_pairs=args.save_every)
        runs.append((f"{label} whole source (max_length {positions})", whole, windows.replace(long_source=None)))
    rows = []
    for name, engine, options in runs:
        scores, signatures = score_benchmarks(engine, long_datasets, options, detokenize=False)
        if scores is None:
            continue
        row = MetricRow(name, "bartscore", directions={b: "faithfulness" for b in names}, signatures=signatures)
        row.scores = {b: scores[b]["faithfulness"] for b in names}
        rows.append(row)
    return rows


def _is_rank_0() -> bool:
    import torch

    return not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0


def checkpoint_status(variant: str) -> str:
    """Whether a paper variant's checkpoint is on this machine (nothing is downloaded to find out)."""
    from huggingface_hub import try_to_load_from_cache

    missing = []
    if not isinstance(try_to_load_from_cache(VARIANTS[variant], "config.json"), str):
        missing.append(f"{VARIANTS[variant]} is not in the Hugging Face cache")
    if variant == "cnn-para":
        weights = os.environ.get(PARA_WEIGHTS_ENV)
        if not weights or not os.path.isfile(weights):
            missing.append(f"the paraphrase weights (bart.pth) are not set in ${PARA_WEIGHTS_ENV}")
    return "checkpoint missing: " + "; ".join(missing) if missing else "checkpoint available"


def load_datasets(args: argparse.Namespace, request: Mapping[str, Any]) -> dict[str, Dataset] | None:
    """The benchmarks' records, or None after saying why one cannot be had."""
    from ..errors import BenchmarkDataError
    from ..meta_eval.benchmarks import load_benchmark

    datasets = {}
    for name in request["benchmarks"]:
        try:
            datasets[name] = load_benchmark(
                name,
                release_dir=args.longdoc_release_dir if BENCHMARKS[name].long_documents else args.release_dir,
                cache_dir=args.data_cache,
                data_file=request["data_files"].get(name),
            )
        except BenchmarkDataError as error:
            print(f"bartscore {args.command}: {name}: {error}", file=sys.stderr)
            return None
    return datasets


def _stopped_while_scoring(command: str, error: BaseException, scored_pairs: int, cache: str) -> int:
    """The exit status of a run stopped by `error` while scoring (130 for Ctrl-C, else 1), after saying that the pairs
    scored before it are kept in the cache for a rerun (by rank 0 alone, which keeps the cache)."""
    stopped = "interrupted" if isinstance(error, KeyboardInterrupt) else f"scoring failed: {error}"
    if _is_rank_0():
        print(
            f"{command}: {stopped}\n{command}: the {scored_pairs} pair(s) scored before are kept in {cache}; run the "
            "same command again to resume",
            file=sys.stderr,
        )
    return 130 if isinstance(error, KeyboardInterrupt) else 1


def run(args: argparse.Namespace, request: Mapping[str, Any], options: ScoringOptions) -> int:

    from ..errors import CacheFileError
    from ..meta_eval.scoring import planned_directions, score_benchmarks
    from ..meta_eval.table import MetricRow, build_report, report_csv
    from ..outputs import write_json_and_csv
    from ..score_cache import ResumableScorer

    command = f"bartscore {args.command}"
    datasets = load_datasets(args, request)
    if datasets is None:
        return 1
    if args.select:
        return run_select(args, request, options, datasets)
    try:
        rows = metric_rows(request["metrics"], datasets, args.metrics_csv)
    except UsageError as error:
        print(f"{command}: error: {error}", file=sys.stderr)
        return 2

    scorer, status = load_scorer(args)
    if scorer is None and (status != 1 or not _is_rank_0()):
        return status
    variant = args.model if args.model in VARIANTS else _CHECKPOINT_VARIANTS.get(getattr(scorer, "model_label", None))  # type: ignore[arg-type]  # None: no variant
    prompt = options.prompt
    prompt_set = prompt if isinstance(prompt, str) and prompt in PROMPT_SETS else None
    # One row with the paper's direction for each benchmark, or one row per direction asked for.
    wanted = [None] if options.directions is None else list(options.directions)
    label = f"BARTScore {_model_name(args.model)}" + (" chat" if args.chat else "")
    if prompt:
        label += f" +prompt {args.prompt or 'phrases'} ({args.prompt_side})"
    ours = [
        MetricRow(
            label if direction is None else f"{label} {direction}",
            "bartscore",
            variant=variant,
            prompt=prompt_set,
            directions={b: direction or planned_directions(b)[0] for b in request["benchmarks"]},
        )
        for direction in wanted
    ]
    taken = {row.name for row in ours} & {row.name for row in rows}
    if taken:
        name = sorted(taken)[0]
        print(f"{command}: error: --metrics-csv column {name!r} has the name of a BARTScore row", file=sys.stderr)
        return 2

    resumable = None
    if scorer is None:
        for row in ours:
            row.note = "not computed: the checkpoint could not be loaded (see the message above)"
    else:
        resumable = ResumableScorer(scorer, request["cache"], chunk_pairs=args.save_every)
        try:
            scores, signatures = score_benchmarks(
                resumable, datasets, options, aggregation=args.aggregation, detokenize=args.detokenize
            )
            long_rows = long_document_rows(args, scorer, resumable, datasets, request, label)
        except CacheFileError as error:
            print(f"{command}: {error}", file=sys.stderr)
            return 1
        except (OSError, RuntimeError, ValueError, KeyboardInterrupt) as error:
            return _stopped_while_scoring(command, error, resumable.scored_pairs, request["cache"])
        if scores is None:  # a rank other than 0 under torchrun: rank 0 reports
            return 0
        for row in ours:
            row.scores = {b: scores[b][row.directions[b]] for b in request["benchmarks"]}  # type: ignore[index]  # ours name them
            row.signatures = signatures
        ours += long_rows

    others = {v for v in VARIANTS if v != variant}
    report, text = build_report(
        datasets,
        ours + rows,
        paper_notes={v: checkpoint_status(v) for v in others},
        with_significance=args.significance,
    )
    report["run"] = {
        "model": args.model,
        "detokenize": args.detokenize,
        "aggregation": args.aggregation or "the release's per benchmark",
        "cache": request["cache"],
    }
    print(text)
    try:
        written = write_json_and_csv(request["prefix"], report, report_csv(report))
    except OSError as error:
        print(f"{command}: cannot write {request['prefix']}.json/.csv: {error.strerror or error}", file=sys.stderr)
        return 1
    if resumable is not None:
        print(
            f"{command}: {resumable.scored_pairs} pair(s) scored, {resumable.cached_pairs} taken from "
            f"{request['cache']}",
            file=sys.stderr,
        )
    print(f"{command}: wrote {' and '.join(written)}", file=sys.stderr)
    return 0 if scorer is not None else 1


# How many of a checkpoint's first pairs are scored alone to measure this machine's pairs per second.
SPEED_SAMPLE_PAIRS = 64


def run_select(
    args: argparse.Namespace, request: Mapping[str, Any], options: ScoringOptions, datasets: Mapping[str, Dataset]
) -> int:
    """--select: the grid's pairs counted (and refused over --max-pairs) before any model loads; each checkpoint's
    pairs scored in one planned call through the score cache, after a small sample that measures the speed; the
    configuration chosen on the development documents per benchmark and aspect, reported on the held-out ones."""
    import time

    from ..errors import CacheFileError, InputError
    from ..meta_eval.selection import GridPlan, engine_arguments, prepared_texts, render, report_csv, select
    from ..meta_eval.split import split_records
    from ..outputs import write_json_and_csv
    from ..score_cache import ResumableScorer
    from ..templates import chat_settings

    command = f"bartscore {args.command}"
    settings = request["select"]
    try:
        for name, dataset in datasets.items():
            split_records(name, dataset, settings["dev_fraction"], settings["seed"])
    except InputError as error:
        print(f"{command}: error: {error}", file=sys.stderr)
        return 2
    texts = prepared_texts(datasets, args.detokenize)
    chat = chat_settings(args.chat, args.instruction, args.system, template=args.template)
    known = {  # what the pairs depend on that the options tell before a model loads
        "model_label": "",
        "signature_fields": [],
        "source_lang": args.source_lang,
        "target_lang": args.target_lang,
        "instructions": dict(chat.instructions) if chat else None,
    }

    def plan(checkpoint: str, identity: Mapping[str, Any]) -> GridPlan:
        grids = {name: [c for c in grid if c.checkpoint == checkpoint] for name, grid in settings["grids"].items()}
        return GridPlan(texts, grids, options, args.aggregation, identity)

    counts = {checkpoint: len(plan(checkpoint, known).pairs) for checkpoint in args.models}
    total = sum(counts.values())
    sizes = ", ".join(f"{len(grid)} configurations on {name}" for name, grid in settings["grids"].items())
    print(
        f"{command}: the grid: {sizes}; scoring them needs {total:,} distinct pairs"
        + (f" ({', '.join(f'{n:,} for {_model_name(m)}' for m, n in counts.items())})" if len(counts) > 1 else ""),
        file=sys.stderr,
    )
    if total > settings["max_pairs"]:
        print(
            f"{command}: error: the grid needs {total:,} pairs, more than --max-pairs {settings['max_pairs']:,}; "
            f"shrink it (fewer prompts, directions, checkpoints or documents) or raise --max-pairs",
            file=sys.stderr,
        )
        return 2

    scores: dict[str, dict[Any, Any]] = {name: {} for name in datasets}
    signatures: dict[str, dict[str, str]] = {name: {} for name in datasets}
    cached = scored = 0
    for checkpoint in args.models:
        args.model = checkpoint
        scorer, status = load_scorer(args)
        if scorer is None:
            return status
        resumable = ResumableScorer(scorer, request["cache"], chunk_pairs=args.save_every)
        identity = {
            "model_label": scorer.model_label,
            "signature_fields": scorer.signature_fields(),
            "source_lang": scorer.source_lang,
            "target_lang": scorer.target_lang,
            "instructions": scorer.instructions,
        }
        checkpoint_plan = plan(checkpoint, identity)
        pairs = checkpoint_plan.ordered_pairs()
        try:
            sample = pairs[:SPEED_SAMPLE_PAIRS]
            start = time.perf_counter()
            conditions, targets, per_pair = engine_arguments(sample)
            # condition_lang and instruction lists, which mypy cannot tell from score()'s other keywords
            resumable.score(conditions, targets, options.batch_size, max_tokens=options.max_tokens, **per_pair)  # type: ignore[arg-type]
            elapsed = time.perf_counter() - start
            if resumable.scored_pairs:
                rate = resumable.scored_pairs / elapsed
                print(
                    f"{command}: {_model_name(checkpoint)}: {len(pairs):,} pairs; this machine scored "
                    f"{rate:.1f} pairs/s on the first {resumable.scored_pairs} (about "
                    f"{(len(pairs) - len(sample)) / rate:.0f} s for the rest, less what the cache holds)",
                    file=sys.stderr,
                )
            else:
                print(
                    f"{command}: {_model_name(checkpoint)}: {len(pairs):,} pairs; the first {len(sample)} are in the "
                    f"cache, so no speed was measured",
                    file=sys.stderr,
                )
            conditions, targets, per_pair = engine_arguments(pairs)
            values = resumable.score(
                conditions,
                targets,
                options.batch_size,
                max_tokens=options.max_tokens,
                show_progress=options.show_progress,
                **per_pair,
            )
        except CacheFileError as error:
            print(f"{command}: {error}", file=sys.stderr)
            return 1
        except (OSError, RuntimeError, ValueError, KeyboardInterrupt) as error:
            return _stopped_while_scoring(command, error, resumable.scored_pairs, request["cache"])
        if values is None:  # a rank other than 0 under torchrun: rank 0 reports
            return 0
        for name, by_configuration in checkpoint_plan.scores(dict(zip(pairs, values))).items():
            scores[name].update(by_configuration)
            for configuration, text in checkpoint_plan.signatures[name].items():
                signatures[name][configuration.name] = text
        scored += resumable.scored_pairs  # the sample's pairs, then the rest
        cached += len(pairs) - resumable.scored_pairs
        del scorer, resumable

    ordered = {name: {c: scores[name][c] for c in grid} for name, grid in settings["grids"].items()}
    report = {
        "release": {"repository": RELEASE_REPOSITORY, "commit": RELEASE_COMMIT},
        **select(
            datasets,
            ordered,
            dev_fraction=settings["dev_fraction"],
            seed=settings["seed"],
            aspects=args.aspects,
        ),
        "configurations": [configuration.describe() for configuration in settings["grid"]],
        "signatures": signatures,
        "run": {
            "models": args.models,
            "detokenize": args.detokenize,
            "aggregation": args.aggregation or "the release's per benchmark",
            "cache": request["cache"],
            "pairs": total,
        },
    }
    print(render(report))
    try:
        written = write_json_and_csv(request["prefix"], report, report_csv(report))
    except OSError as error:
        print(f"{command}: cannot write {request['prefix']}.json/.csv: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"{command}: {scored} pair(s) scored, {cached} taken from {request['cache']}", file=sys.stderr)
    print(f"{command}: wrote {' and '.join(written)}", file=sys.stderr)
    return 0
