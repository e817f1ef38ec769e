"""`bartscore score`: per-segment scores of one or more systems, and their means."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from ..corpora._outputs import check_not_an_input, check_output_path, json_text, write_atomically
from ..options import COUNT_SUFFIXES
from ._arguments import add_cache_arguments, add_long_source_arguments, add_rescale_arguments
from ._requests import CorpusRequest, check_written_name, checked_request, input_files, score_all_systems
from ._wording import Failed


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]
) -> None:
    parser = commands.add_parser(
        "score", parents=parents, help="per-segment scores of one or more systems, and their means"
    )
    parser.add_argument("-f", "--format", choices=("tsv", "jsonl"), default="tsv", help="per-segment output format")
    parser.add_argument(
        "-o",
        "--output",
        default="-",
        help="per-segment output file (default: stdout; the system summary then goes to stderr)",
    )
    add_long_source_arguments(parser)
    add_cache_arguments(parser, "without it, nothing is kept")
    add_rescale_arguments(parser, "each <direction>_rescaled column orders segments and systems as the raw one does.")
    parser.set_defaults(check=check, run=run)


@dataclass(frozen=True)
class ScoreRequest:
    """What `bartscore score` asks for, checked: the corpus and its settings, the per-segment output's file ("-":
    stdout) and format."""

    scoring: CorpusRequest
    output: str
    format: str


def check(args: argparse.Namespace) -> ScoreRequest:
    scoring = checked_request(args)
    if args.format == "tsv":
        for row, segment_id in enumerate(scoring.corpus.ids or [], start=1):
            check_written_name(segment_id, f"row {row}'s id")
    if args.output != "-":
        check_output_path(args.output, "-o", stdout_hint="-o - (the default)")
        check_not_an_input(args.output, input_files(args), "-o")
    return ScoreRequest(scoring, args.output, args.format)


def run(request: ScoreRequest) -> None:
    per_system, signature = score_all_systems(request.scoring)
    if per_system is None:  # a rank other than 0 under torchrun (rank 0 reports)
        return
    ids = request.scoring.corpus.ids
    if request.output == "-":
        write_segments(per_system, ids, request.format, sys.stdout)
        summary = sys.stderr
    else:
        try:
            write_atomically(request.output, lambda handle: write_segments(per_system, ids, request.format, handle))
        except OSError as error:
            raise Failed(error, f"cannot write {request.output}", reason=error.strerror) from error
        summary = sys.stdout
    print("\n".join(summary_lines(per_system, signature)), file=summary)


def summary_lines(per_system: Mapping[str, Mapping[str, Sequence[float]]], signature: str | None) -> list[str]:
    """Each system's mean per direction; with --long-source windows, then the sentences and windows scored, totals
    over the segments, in a table of their own under a line that says they are counts; last the signature."""
    keys = list(next(iter(per_system.values())))
    directions = [key for key in keys if not key.endswith(COUNT_SUFFIXES)]
    counts = [key for key in keys if key.endswith(COUNT_SUFFIXES)]
    lines = _system_table(per_system, directions, lambda values: f"{sum(values) / len(values):.4f}")
    if counts:
        segments = len(per_system[next(iter(per_system))][counts[0]])
        lines.append(f"counts of --long-source windows, summed over the {segments} segment(s):")
        lines += _system_table(per_system, counts, lambda values: str(sum(values)))
    lines.append(f"signature: {signature}")
    return lines


def _system_table(
    per_system: Mapping[str, Mapping[str, Sequence[float]]], keys: Sequence[str], cell: Callable[[Sequence[float]], str]
) -> list[str]:
    """A header line and one line per system: its name, then cell(values) of each key, right-aligned."""
    width = max(6, *map(len, per_system))
    widths = [max(12, len(key)) for key in keys]
    lines = ["system".ljust(width) + "".join(f"  {key:>{w}}" for key, w in zip(keys, widths))]
    for name, values in per_system.items():
        lines.append(name.ljust(width) + "".join(f"  {cell(values[key]):>{w}}" for key, w in zip(keys, widths)))
    return lines


def write_segments(
    per_system: Mapping[str, Mapping[str, Sequence[float]]],
    ids: Sequence[str] | None,
    output_format: str,
    handle: IO[str],
) -> None:
    """One line per system and segment, the segment numbered from 1 as its line or row of the input (the number the
    command line's messages give it), with the input's id when it has an id column."""
    directions = list(next(iter(per_system.values())))
    id_column = ["id"] if ids is not None else []
    if output_format == "tsv":
        handle.write("\t".join(["system", "segment", *id_column, *directions]) + "\n")
    for name, scores in per_system.items():
        for index in range(len(scores[directions[0]])):
            segment_id = {"id": ids[index]} if ids is not None else {}
            if output_format == "tsv":
                values = [_cell(scores[d][index]) for d in directions]
                handle.write("\t".join([name, str(index + 1), *segment_id.values(), *values]) + "\n")
            else:
                row = {"system": name, "segment": index + 1, **segment_id, **{d: scores[d][index] for d in directions}}
                handle.write(json_text(row) + "\n")


def _cell(value: float) -> str:
    """A TSV cell: a score to six decimals, a count (long_source="windows") as it is."""
    return str(value) if isinstance(value, int) else f"{value:.6f}"
