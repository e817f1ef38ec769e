"""The command line: ``bartscore score``, ``compare``, ``baseline`` and ``meta-eval`` (also ``python -m bart_score``).

Each subcommand is a module with ``add_parser``, a ``check`` that finds every mistake in the request before any
model is loaded (exit status 2), and a ``run`` (exit status 0, or 1 for a failure at run time). Heavy libraries are
imported only by ``run``, so that help and usage errors answer at once."""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator, Sequence

from ..errors import UsageError
from . import baseline, common, compare, meta_eval, score

SUBCOMMANDS = (score, compare, baseline, meta_eval)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bartscore", description="BARTScore from the command line.")
    shared = argparse.ArgumentParser(add_help=False)
    common.add_input_arguments(shared)
    common.add_model_arguments(shared)
    commands = parser.add_subparsers(dest="command", required=True)
    for subcommand in SUBCOMMANDS:
        subcommand.add_parser(commands, [shared])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status: 0 success, 2 usage error, 1 runtime failure."""
    args = build_parser().parse_args(argv)  # argparse reports its own usage errors with status 2
    try:
        corpus, options = args.check(args)
    except (UsageError, ValueError, TypeError) as error:
        print(f"bartscore {args.command}: error: {common.flag_message(error)}", file=sys.stderr)
        return 2
    from ..distributed import torchrun_process_group

    with torchrun_process_group(), warnings_as_lines(f"bartscore {args.command}"):
        return args.run(args, corpus, options)


@contextlib.contextmanager
def warnings_as_lines(prefix: str) -> Iterator[None]:
    """Warnings (truncation, rescaling, ...) printed as one line each for the user, without the Python source line
    that raised them."""
    default = warnings.formatwarning
    warnings.formatwarning = lambda message, *_args, **_kwargs: f"{prefix}: warning: {message}\n"
    try:
        yield
    finally:
        warnings.formatwarning = default
