"""`bartscore cluster`: a table scored across a Ray cluster into a folder of Parquet files (bart_score.scaling.cluster),
surviving a lost scorer or a lost driver: the same command again scores only the rows not yet in the folder."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from ..options import ClusterOptions, EngineOptions, ScoringOptions
from ._arguments import (
    CLUSTER_SECTION,
    add_column_arguments,
    add_flags,
    add_long_source_arguments,
    add_model_arguments,
    add_rescale_arguments,
)
from ._requests import check_input_files, engine_options, given_options, options_from_args


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]
) -> None:
    """The subcommand's own inputs (a table of rows with ids, not the plain-text files of the others' parents), the
    model and scoring options, the long-source and rescaling ones, and the cluster's."""
    parser = commands.add_parser(
        "cluster",
        help="a table scored across a Ray cluster into a folder of Parquet files; run again, only the rows missing",
    )
    inputs = parser.add_argument_group("input (one table with an id column, one row per segment)")
    inputs.add_argument(
        "-i",
        "--input",
        metavar="PATH",
        nargs="+",
        required=True,
        help="Parquet, JSON lines (.jsonl) or CSV files, or folders of them, all of one format, reachable from every "
        "node of the cluster",
    )
    inputs.add_argument(
        "--id-column", metavar="COLUMN", default="id", help="the column of unique row ids (default: id)"
    )
    add_column_arguments(inputs, "--input")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FOLDER",
        required=True,
        help="the output folder (scores/: Parquet files of the rows with their ids; checkpoint/; run.json), new or "
        "empty, or an earlier run's to score the rows it lacks",
    )
    add_model_arguments(parser)
    add_long_source_arguments(parser)
    add_rescale_arguments(parser, "rescaled columns beside the raw ones (--rescale corpus is refused here).")
    cluster = parser.add_argument_group(
        "Ray cluster", "Each scorer is a Ray actor; a lost one is restarted and its batch scored again."
    )
    add_flags(cluster, CLUSTER_SECTION)
    parser.set_defaults(check=check, run=run)


@dataclass(frozen=True)
class ClusterRequest:
    """What `bartscore cluster` asks for, checked: the input paths and the columns' roles (id, source, references,
    systems), the output folder, and the options."""

    data: Sequence[str]
    id_column: str
    source_column: str | None
    reference_columns: Sequence[str] | None
    system_columns: Sequence[str] | None
    output: str
    options: ScoringOptions
    engine: EngineOptions
    cluster: ClusterOptions


def check(args: argparse.Namespace) -> ClusterRequest:
    options = options_from_args(args)
    if isinstance(options.baseline, str):
        check_input_files([("--baseline", options.baseline)])
    return ClusterRequest(
        data=args.input,
        id_column=args.id_column,
        source_column=args.source_column,
        reference_columns=args.reference_columns,
        system_columns=args.system_columns,
        output=args.output,
        options=options,
        engine=engine_options(args),
        cluster=ClusterOptions(**given_options(args, ClusterOptions)),
    )


def run(request: ClusterRequest) -> None:
    from ..scaling.cluster import score_on_ray

    done = score_on_ray(
        list(request.data),
        request.output,
        id_column=request.id_column,
        source_column=request.source_column,
        reference_columns=request.reference_columns,
        system_columns=request.system_columns,
        engine=request.engine,
        options=request.options,
        cluster=request.cluster,
    )
    print(f"scored {done.written} of {done.rows} rows into {done.output} ({done.before} were there already)")
    print(f"signature: {done.signature}")
