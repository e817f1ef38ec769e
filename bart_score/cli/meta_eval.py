"""`bartscore meta-eval`: the paper's correlations with human judgments on the BARTScore release's benchmarks, for
any checkpoint, directions or prompt, beside the published numbers (and any other metrics' scores from a CSV)."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..corpora._outputs import check_distinct_outputs, check_not_an_input, check_output_path
from ..corpora.table_files import read_table
from ..errors import BenchmarkDataError, CacheFileError, InputError, MissingExtraError
from ..inputs import ascii_decimal
from ..meta_eval.benchmarks import (
    BENCHMARKS,
    DATA_CACHE_ENV,
    GROUPS,
    LONGDOC_DIR_ENV,
    RELEASE_DIR_ENV,
    how_to_get,
    resolve_benchmarks,
)
from ..scoring.prompts import PROMPT_SETS
from ..scoring.score_cache import check_cache_file
from ..variants import PARA_WEIGHTS_ENV, VARIANTS
from ._arguments import add_cache_arguments, add_long_source_arguments, add_model_arguments
from ._meta_eval_common import MetaEvalRequest, MetricScores, model_name, write_report
from ._requests import (
    check_input_files,
    checked_save_every,
    engine_options,
    is_rank_0,
    load_scorer,
    options_from_args,
    stopped_while_scoring,
)
from ._wording import Failed, said_on_the_command_line
from .meta_eval_select import add_select_arguments, check_select, run_select

if TYPE_CHECKING:
    from datasets import Dataset

    from ..meta_eval._correlation_table import MetricRow
    from ..meta_eval.published import Published
    from ..scoring.engine import BARTScorer
    from ..scoring.score_cache import ResumableScorer

DEFAULT_OUTPUT_DIR = "meta-eval"
# The option that names a checkout of each release (meta_eval.benchmarks.RELEASES), as the command line says it.
RELEASE_DIR_FLAGS = {"bartscore": "--release-dir", "longdocfactscore": "--longdoc-release-dir"}
_CHECKPOINT_VARIANTS = {"facebook/bart-large": "vanilla", "facebook/bart-large-cnn": "cnn"}


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]
) -> None:
    # The corpus options of `score` do not apply: the texts come from the benchmarks.
    model = argparse.ArgumentParser(add_help=False)
    add_model_arguments(
        model,
        directions_default_text="the paper's for each benchmark",
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
    add_cache_arguments(parser, "default: scores-cache.jsonl beside the output")
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
    _add_data_arguments(parser)
    add_long_source_arguments(parser, mode=False)
    add_select_arguments(parser)
    parser.set_defaults(check=check, run=run)


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the benchmarks' data comes from: the releases' checkouts, the download cache, or the user's own files."""
    data = parser.add_argument_group("benchmark data (default: downloaded once from the release into a cache)")
    data.add_argument(
        RELEASE_DIR_FLAGS["bartscore"], metavar="DIR", help=f"a checkout of the release (or ${RELEASE_DIR_ENV})"
    )
    data.add_argument(
        RELEASE_DIR_FLAGS["longdocfactscore"],
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


def _models(args: argparse.Namespace) -> list[str]:
    """The -m values (the default checkpoint when none is given); several only with --select, each once."""
    models = args.model or ["cnn"]
    repeated = sorted({model for model in models if models.count(model) > 1})
    if repeated:
        raise InputError(f"-m {repeated[0]} is given more than once; give each checkpoint once")
    named: dict[str, str] = {}
    for model in models:
        other = named.setdefault(model_name(model), model)
        if other != model:
            raise InputError(
                f"-m {other} and -m {model} are both named {model_name(model)!r} in the table; give one of them "
                f"under another folder name"
            )
    if len(models) > 1 and not args.select:
        raise InputError(
            f"-m is given {len(models)} times; several checkpoints are for --select, which chooses among them "
            f"(plain meta-eval scores one checkpoint)"
        )
    return models


def check(args: argparse.Namespace) -> MetaEvalRequest:
    models = _models(args)
    if args.rescale is not None:
        raise InputError(
            f"--rescale {args.rescale}: meta-eval does not rescale; rescaled scores are one increasing linear map "
            "per direction of the raw ones, so every correlation, accuracy and significance verdict in the table "
            "would be exactly the same; run meta-eval without --rescale"
        )
    try:
        benchmarks = resolve_benchmarks(args.benchmark)
    except InputError as error:
        raise InputError("--benchmark: ", *error.parts, remedy=error.remedy) from None
    long_benchmarks = [name for name in benchmarks if BENCHMARKS[name].long_documents]
    # The long-document benchmarks get a row of faithfulness over source windows besides the usual one. Without
    # --aggregation, options.aggregation is None (not the library's default, mean): the release's choice per
    # benchmark, which score_benchmarks makes.
    options = options_from_args(
        args,
        aggregation=args.aggregation,
        rescale=None,
        **({"long_source": "windows"} if long_benchmarks else {}),
    )
    windows = options if long_benchmarks else None
    options = options.replace(long_source=None)
    options.directions_for(has_references=True, has_sources=True)
    engine = engine_options(args, checkpoint=models[0])
    select = check_select(args, models, benchmarks, options)
    save_every = checked_save_every(args.save_every, engine)
    _check_detokenizer(args, benchmarks)
    data_files = _data_files(args.data, benchmarks)
    folders = release_dirs(args)
    for release, folder in folders.items():
        if folder and not os.path.isdir(folder):
            raise InputError(f"{RELEASE_DIR_FLAGS[release]} {folder!r} is not a folder")
    check_input_files([("--metrics-csv", args.metrics_csv)])
    metrics = read_metrics_csv(args.metrics_csv, benchmarks) if args.metrics_csv else {}
    prefix, cache = _output_paths(args, models[0], data_files)
    return MetaEvalRequest(
        command=f"bartscore {args.command}",
        benchmarks=benchmarks,
        long_benchmarks=long_benchmarks,
        options=options,
        windows=windows,
        engine=engine,
        models=models,
        data_files=data_files,
        release_dirs=folders,
        data_cache=args.data_cache,
        metrics=metrics,
        metrics_csv=args.metrics_csv,
        prefix=prefix,
        cache=cache,
        save_every=save_every,
        detokenize=args.detokenize,
        significance=args.significance,
        select=select,
    )


def release_dirs(args: argparse.Namespace) -> dict[str, str | None]:
    """The checkout of each release that the command line names (RELEASE_DIR_FLAGS), or None."""
    return {"bartscore": args.release_dir, "longdocfactscore": args.longdoc_release_dir}


def _check_detokenizer(args: argparse.Namespace, benchmarks: Sequence[str]) -> None:
    """Refuses a run that would detokenize with Moses (as the release does) without sacremoses installed."""
    if args.detokenize and any(BENCHMARKS[name].detokenize for name in benchmarks):
        try:
            import sacremoses  # noqa: F401
        except ImportError:
            raise InputError(
                "the release detokenizes summarization and data-to-text texts with Moses before scoring: install "
                'sacremoses (pip install "bartscore[meta-eval]"), or pass --no-detokenize to score them as they are'
            ) from None


def _data_files(items: Sequence[str], benchmarks: Sequence[str]) -> dict[str, str]:
    """{benchmark: file or folder} from the --data NAME=FILE arguments, each checked."""
    data_files: dict[str, str] = {}
    given: dict[str, str] = {}  # benchmark -> the --data argument that gave it
    for item in items:
        name, _, path = item.partition("=")
        if not path or name.lower() not in benchmarks:
            raise InputError(f"--data {item!r}: give NAME=FILE with NAME one of the benchmarks run ({benchmarks})")
        folder = not BENCHMARKS[name.lower()].single_file
        if not (os.path.isdir(path) if folder else os.path.isfile(path)):
            raise InputError(f"--data {item!r}: {path} is not a {'folder' if folder else 'file'}")
        if not folder:
            check_input_files([(f"--data {name}=", path)])
        if name.lower() in data_files:
            raise InputError(
                f"--data {item!r}: {name.lower()} was given before (--data {given[name.lower()]}); give each "
                "benchmark one file"
            )
        data_files[name.lower()], given[name.lower()] = path, item
    return data_files


def _output_paths(args: argparse.Namespace, model: str, data_files: Mapping[str, str]) -> tuple[str, str]:
    """(the report's prefix, the score cache), as given or by default (named after the benchmarks and the first
    checkpoint, `model`), checked as outputs before anything is loaded: writable, none of them an input, distinct,
    and the cache a cache of ours."""
    for option, value in (("-o", args.output), ("--cache", args.cache)):
        if value == "":
            raise InputError(f"{option} is empty; give a file name, or leave it out for the default")
    prefix = args.output
    if prefix is None:
        chat = ".chat" if args.chat else ""  # beside the same model's plain run, not over it
        prefix = os.path.join(DEFAULT_OUTPUT_DIR, f"{'+'.join(args.benchmark)}.{_slug(model)}{chat}")
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
        raise InputError("--cache: ", *error.parts, remedy=error.remedy) from None
    return prefix, cache


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_name(model)) or "model"


def read_metrics_csv(path: str, benchmarks: Sequence[str]) -> MetricScores:
    """{metric: {benchmark: {(doc_id, system): score}}} from a CSV (UTF-8) of other metrics' scores."""
    try:
        table = read_table(path, kind="csv")
    except InputError as error:
        raise InputError("--metrics-csv ", *error.parts, remedy=error.remedy) from None
    header = table.columns
    keys = ["doc_id", "system"] + (["benchmark"] if len(benchmarks) > 1 else [])
    missing = [key for key in keys if key not in header]
    if missing:
        raise InputError(f"--metrics-csv {path} needs the columns {keys}; it lacks {missing} (it has {header})")
    metric_names = [name for name in header if name not in ("doc_id", "system", "benchmark")]
    if not metric_names:
        raise InputError(f"--metrics-csv {path} needs one named column per metric besides {keys}")
    # metric -> benchmark -> (doc_id, system) -> score
    metrics: MetricScores = {name: {} for name in metric_names}
    for number, row in zip(table.lines, table.rows):  # a row of empty cells is refused below: it has no score
        benchmark = row["benchmark"].strip().lower() if "benchmark" in row else benchmarks[0]
        if benchmark not in benchmarks:
            raise InputError(
                f"--metrics-csv {path} line {number}: benchmark {row['benchmark']!r} is not one of those run "
                f"({', '.join(benchmarks)})"
            )
        key = (row["doc_id"], row["system"])
        for name in metric_names:
            value = ascii_decimal(row[name].strip())
            if value is None or not math.isfinite(value):
                raise InputError(f"--metrics-csv {path} line {number}, column {name!r}: {row[name]!r} is not a number")
            scores = metrics[name].setdefault(benchmark, {})
            if key in scores:
                raise InputError(f"--metrics-csv {path} line {number}: document {key[0]!r}, system {key[1]!r} again")
            scores[key] = value
    return metrics


def metric_rows(
    metrics: Mapping[str, Mapping[str, Mapping[tuple[str, str], float]]],
    datasets: Mapping[str, Dataset],
    path: str | None,
) -> list[MetricRow]:
    """The metrics CSV's columns as table rows: every record of each benchmark it covers needs a score."""
    from ..meta_eval._correlation_table import MetricRow

    rows = []
    for name, per_benchmark in metrics.items():
        scores = {}
        for benchmark, values in per_benchmark.items():
            dataset = datasets[benchmark]
            records = list(zip(dataset["doc_id"], dataset["system"]))
            known = set(records)
            unknown = [key for key in values if key not in known]
            if unknown:
                raise InputError(
                    f"--metrics-csv {path}: {benchmark} has no record with doc_id {unknown[0][0]!r} and system "
                    f"{unknown[0][1]!r} ({len(unknown)} such row(s))"
                )
            absent = [key for key in records if key not in values]
            if absent:
                raise InputError(
                    f"--metrics-csv {path}: column {name!r} has no score for {benchmark} doc_id {absent[0][0]!r}, "
                    f"system {absent[0][1]!r} ({len(absent)} of {len(records)} records lack one)"
                )
            scores[benchmark] = [values[key] for key in records]
        rows.append(MetricRow(name, "metrics-csv", scores=scores))
    return rows


def long_document_rows(
    request: MetaEvalRequest,
    scorer: BARTScorer,
    resumable: ResumableScorer,
    datasets: Mapping[str, Dataset],
    label: str,
) -> list[MetricRow]:
    """The long-document benchmarks' further rows: faithfulness over source windows, and, for a causal LM with more
    positions than max_length, the whole source as its prefix (max_length up to the model's positions)."""
    from ..meta_eval._correlation_table import MetricRow
    from ..meta_eval.scoring import score_benchmarks
    from ..models.causal import CausalFamily
    from ..scoring.score_cache import ResumableScorer

    names = request.long_benchmarks
    if not names or request.windows is None:
        return []
    long_datasets = {name: datasets[name] for name in names}
    windows = request.windows.replace(directions=("faithfulness",))
    rule = windows.window if windows.window == "longdocfactscore" else f"+/-{windows.window}"
    retriever = windows.windows.retriever_label  # type: ignore[union-attr]  # set for long_source="windows"
    runs = [(f"{label} windows (k={windows.windows_k}, {rule}, {retriever})", resumable, windows)]
    positions = scorer.family.max_positions
    if isinstance(scorer.family, CausalFamily) and positions and positions > scorer.max_length:
        whole = ResumableScorer(scorer.with_max_length(positions), request.cache, chunk_pairs=request.save_every)
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


def how_to_compute(entry: Published, variant: str | None) -> str:
    """What computes a published row that this run does not, as the command line says it (build_report's
    how_to_compute): its variant's run, with its prompt set and whether its checkpoint is here (the run's own variant
    is not looked up again), or a --metrics-csv column named as the release names it."""
    if entry.variant is not None:
        run = f"-m {entry.variant}" + (f" --prompt {entry.prompt}" if entry.prompt else "")
        status = f" ({checkpoint_status(entry.variant)})" if entry.variant != variant else ""
        return f"not run here; run with {run}{status}"
    hint = f" named {entry.release_key}" if entry.release_key else ""
    return f"give its scores as a --metrics-csv column{hint} to compare"


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


def load_datasets(request: MetaEvalRequest) -> dict[str, Dataset]:
    """The benchmarks' records; one that cannot be had is a Failed that names it."""
    from ..meta_eval.benchmarks import load_benchmark

    datasets = {}
    for name in request.benchmarks:
        try:
            datasets[name] = load_benchmark(
                name,
                release_dir=request.release_dirs[BENCHMARKS[name].release],
                cache_dir=request.data_cache,
                data_file=request.data_files.get(name),
            )
        except BenchmarkDataError as error:
            raise Failed(error, name, reason=benchmark_data_message(error)) from error
    return datasets


def benchmark_data_message(error: BenchmarkDataError) -> str:
    """A benchmark's data error as the command line says it: how to get a release file that cannot be had names the
    flag for a checkout of its release."""
    if error.release is None or error.reason is None or error.release_file is None:
        return said_on_the_command_line(error)
    remedy = how_to_get(error.release, error.release_file, error.cache_path, RELEASE_DIR_FLAGS[error.release])
    return f"{error.reason} {remedy}"


def _bartscore_rows(request: MetaEvalRequest, variant: str | None) -> tuple[str, list[MetricRow]]:
    """(the rows' label, BARTScore's rows, not scored yet): one row with the paper's direction for each benchmark, or
    one row per direction asked for."""
    from ..meta_eval._correlation_table import MetricRow
    from ..meta_eval.scoring import planned_directions

    options = request.options
    prompt = options.prompt
    prompt_set = prompt if isinstance(prompt, str) and prompt in PROMPT_SETS else None
    wanted = [None] if options.directions is None else list(options.directions)
    label = f"BARTScore {model_name(request.engine.checkpoint)}" + (" chat" if request.engine.chat else "")
    if prompt:
        label += f" +prompt {prompt if isinstance(prompt, str) else 'phrases'} ({options.prompt_side})"
    ours = [
        MetricRow(
            label if direction is None else f"{label} {direction}",
            "bartscore",
            variant=variant,
            prompt=prompt_set,
            directions={b: direction or planned_directions(b)[0] for b in request.benchmarks},
        )
        for direction in wanted
    ]
    return label, ours


# The failures to load a checkpoint at run time (one missing or damaged is an OSError) after which a plain run still
# writes the table, without BARTScore's values; a usage error (an architecture the engine cannot drive) stops it.
_LOAD_FAILURES = (OSError, RuntimeError, MissingExtraError, Failed)


def run(request: MetaEvalRequest) -> None:
    """Plain meta-eval (or --select, bart_score.cli.meta_eval_select): BARTScore's rows and the metrics CSV's scored
    on the benchmarks, the table printed beside the paper's numbers and written as JSON and CSV. A checkpoint that
    cannot be loaded leaves the table without BARTScore's values, and the run ends failed."""
    command = request.command
    datasets = load_datasets(request)
    if request.select is not None:
        return run_select(request, request.select, datasets)
    rows = metric_rows(request.metrics, datasets, request.metrics_csv)
    scorer: BARTScorer | None = None
    load_failure: BaseException | None = None
    try:
        scorer = load_scorer(request.engine, quiet=not request.options.show_progress)
    except _LOAD_FAILURES as error:  # the table is still written, with the paper's numbers, by rank 0
        if not is_rank_0():
            raise
        print(f"{command}: {said_on_the_command_line(error)}", file=sys.stderr)
        load_failure = error
    loaded = _CHECKPOINT_VARIANTS.get(scorer.model_label) if scorer is not None else None  # None: no paper variant
    checkpoint = request.engine.checkpoint
    variant = checkpoint if checkpoint in VARIANTS else loaded
    label, ours = _bartscore_rows(request, variant)
    taken = {row.name for row in ours} & {row.name for row in rows}
    if taken:
        raise InputError(f"--metrics-csv column {sorted(taken)[0]!r} has the name of a BARTScore row")
    resumable = None if scorer is None else _score_rows(request, scorer, datasets, label, ours)
    if scorer is None:
        for row in ours:
            row.note = "not computed: the checkpoint could not be loaded (see the message above)"
    elif resumable is None:  # a rank other than 0 under torchrun: rank 0 reports
        return
    written = _write_table(request, datasets, ours + rows, variant)
    if resumable is not None:
        print(
            f"{command}: {resumable.scored_pairs} pair(s) scored, {resumable.cached_pairs} taken from {request.cache}",
            file=sys.stderr,
        )
    print(f"{command}: wrote {' and '.join(written)}", file=sys.stderr)
    if load_failure is not None:
        raise Failed(load_failure, quiet=True)  # said above


def _score_rows(
    request: MetaEvalRequest,
    scorer: BARTScorer,
    datasets: dict[str, Dataset],
    label: str,
    ours: list[MetricRow],
) -> ResumableScorer | None:
    """BARTScore's rows scored through the score cache (the long-document rows added to `ours`); the cache's scorer,
    or None on ranks other than 0 under torchrun."""
    from ..meta_eval.scoring import score_benchmarks
    from ..scoring.score_cache import ResumableScorer

    resumable = ResumableScorer(scorer, request.cache, chunk_pairs=request.save_every)
    try:
        scores, signatures = score_benchmarks(resumable, datasets, request.options, detokenize=request.detokenize)
        long_rows = long_document_rows(request, scorer, resumable, datasets, label)
    except (OSError, RuntimeError, ValueError, KeyboardInterrupt) as error:
        raise stopped_while_scoring(error, resumable.scored_pairs, request.cache) from error
    if scores is None:
        return None
    for row in ours:
        row.scores = {b: scores[b][row.directions[b]] for b in request.benchmarks}  # type: ignore[index]  # ours name them
        row.signatures = signatures
    ours += long_rows
    return resumable


def _write_table(
    request: MetaEvalRequest, datasets: Mapping[str, Dataset], rows: list[MetricRow], variant: str | None
) -> tuple[str, str]:
    """The table printed, and written as JSON and CSV: the files written."""
    from ..meta_eval._correlation_table import build_report, report_csv

    report, text = build_report(
        datasets,
        rows,
        how_to_compute=lambda entry: how_to_compute(entry, variant),
        with_significance=request.significance,
    )
    report["run"] = {
        "model": request.engine.checkpoint,
        "detokenize": request.detokenize,
        "aggregation": request.options.aggregation or "the release's per benchmark",
        "cache": request.cache,
    }
    print(text)
    return write_report(request.prefix, report, report_csv(report))
