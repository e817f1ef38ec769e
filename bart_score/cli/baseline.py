"""`bartscore baseline`: the reference points of rescaled scores (unrelated texts, copies), written to a baseline file.

Its input is one corpus of texts rather than systems to score, so it takes the model and scoring options but not the
shared input options."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..baselines.build import plan_baseline
from ..baselines.rescale import DEFAULT_PAIRS, DEFAULT_SEED
from ..corpora._outputs import check_not_an_input, check_output_path
from ..corpora.corpus import read_texts
from ..corpora.table_files import read_table_corpus
from ..errors import InputError
from ._arguments import add_column_arguments, add_model_arguments, integer
from ._requests import check_input_files, check_server_answers, engine_options, load_scorer, options_from_args
from ._wording import Failed

if TYPE_CHECKING:
    from ..corpora.corpus import Corpus
    from ..options import EngineOptions, ScoringOptions

TABLE_EXTENSIONS = (".csv", ".jsonl", ".json")


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]
) -> None:
    model_options = argparse.ArgumentParser(add_help=False)
    add_model_arguments(model_options)
    parser = commands.add_parser(
        "baseline",
        parents=[model_options],
        help="reference points for rescaled scores, from a corpus of texts like those you score",
        description="Scores random pairs of unrelated texts (from different lines, rows or documents) and texts given "
        "themselves, and writes their means, spread and quantiles per direction to a JSON baseline file, which "
        "`score --rescale` / `compare --rescale` and rescale_with_baseline=True use. A baseline holds for one model, "
        "prompt setting and --max-length.",
    )
    parser.add_argument(
        "--corpus",
        required=True,
        metavar="FILE",
        help="plain text with one text per line, or a .csv/.jsonl table as `score -i` reads (sources, references "
        "and system outputs each play their role)",
    )
    add_column_arguments(parser.add_argument_group("columns of a .csv/.jsonl corpus"), "--corpus")
    parser.add_argument(
        "--pairs",
        type=integer,
        default=DEFAULT_PAIRS,
        metavar="N",
        help=f"pairs scored in all, shared equally among the reference points (default {DEFAULT_PAIRS})",
    )
    parser.add_argument("--seed", type=integer, default=DEFAULT_SEED, help=f"sampling seed (default {DEFAULT_SEED})")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="the baseline file (default: where rescaling looks for this model and these settings, under "
        "$BARTSCORE_BASELINES or ~/.cache/bartscore/baselines)",
    )
    parser.set_defaults(check=check, run=run)


@dataclass(frozen=True)
class BaselineRequest:
    """What `bartscore baseline` asks for, checked: the texts of a plain corpus file or the Corpus of a table (one of
    them), the file they come from, the scoring options and the engine's settings, the pairs and seed of the sampling,
    and the baseline file to write (None: the default location for the model and settings)."""

    texts: list[str] | None
    corpus: Corpus | None
    corpus_file: str
    options: ScoringOptions
    engine: EngineOptions
    pairs: int
    seed: int
    output: str | None


def check(args: argparse.Namespace) -> BaselineRequest:
    check_input_files([("--corpus", args.corpus)])
    is_table = args.corpus.lower().endswith(TABLE_EXTENSIONS)
    columns = {"--source-column": args.source_column, "--reference-columns": args.reference_columns}
    columns["--system-columns"] = args.system_columns
    if not is_table and any(value is not None for value in columns.values()):
        raise InputError(f"{', '.join(f for f, v in columns.items() if v is not None)} are for .csv/.jsonl corpora")
    engine = engine_options(args)
    if args.pairs < 1 or args.seed < 0:
        raise InputError("--pairs must be a positive integer and --seed at least 0")
    if args.output is not None:  # missing folders are made, as for the default location
        check_output_path(args.output, "-o", make_folders=True)
        check_not_an_input(args.output, [("--corpus", args.corpus)], "-o")
    options = options_from_args(args)
    texts, corpus = None, None
    if is_table:
        corpus = read_table_corpus(args.corpus, args.source_column, args.reference_columns, args.system_columns)
    else:
        texts, blank = read_texts(args.corpus)
        if blank:
            print(
                f"bartscore baseline: note: {blank} blank line(s) of {args.corpus} are not texts and were skipped",
                file=sys.stderr,
            )
    try:
        plan_baseline(texts, corpus, options)
    except InputError as error:
        if error.option is not None:  # about an option (aggregation, rescale), not the corpus file
            raise
        raise InputError(f"{args.corpus}: ", *error.parts, remedy=error.remedy) from None
    check_server_answers(engine)
    return BaselineRequest(texts, corpus, args.corpus, options, engine, args.pairs, args.seed, args.output)


def run(request: BaselineRequest) -> None:
    from ..baselines.build import build_baseline
    from ..baselines.files import default_baseline_path, write_baseline

    scorer = load_scorer(request.engine, quiet=not request.options.show_progress)
    try:
        document = build_baseline(
            scorer,
            request.texts,
            request.corpus,
            corpus_file=request.corpus_file,
            pairs=request.pairs,
            seed=request.seed,
            options=request.options,
        )
    except (OSError, RuntimeError, ValueError) as error:  # a usage error among them is said as one
        raise Failed(error) from error
    if document is None:  # a rank other than 0 under torchrun
        return
    path = default_baseline_path(document["settings"]) if request.output is None else request.output
    try:
        write_baseline(document, path)
    except OSError as error:
        raise Failed(error, f"cannot write {path}", reason=error.strerror) from error
    print("\n".join(summary_lines(document, path, default=request.output is None)))


def summary_lines(document: Mapping[str, Any], path: str, default: bool) -> list[str]:
    lines = [f"baseline {document['id']} written to {path}", "direction        unrelated (std)      copy (std)"]
    for direction, points in document["directions"].items():
        unrelated, copy = points["unrelated"], points["copy"]
        lines.append(
            f"{direction:<14} {unrelated['mean']:9.4f} ({_spread(unrelated)})  {copy['mean']:9.4f} ({_spread(copy)})"
        )
    use = "--rescale" if default else f"--baseline {path}"
    lines.append(f"rescale with it: bartscore score {use} ... (same model, prompt and --max-length)")
    return lines


def _spread(point: Mapping[str, Any]) -> str:
    return "n/a" if point["std"] is None else f"{point['std']:.4f}"
