"""The command line: ``bartscore score``, ``compare``, ``baseline``, ``meta-eval``, ``convert`` and ``cluster``
(also ``python -m bart_score``).

Each subcommand is a module with ``add_parser``, a ``check`` that finds every mistake in the request before any
model is loaded and returns the checked request (a dataclass; the parsed arguments are never written), and a ``run``
that takes it. Both raise what stops them; ``main`` says it once, in the command line's words, and ends with the exit
status of its error (exit_status). Heavy libraries are imported only by ``run``, so that help and usage errors answer
at once. What the subcommands share is in three modules: their argparse arguments (_arguments), parsed arguments
turned into the library's requests, checked and scored (_requests), and the command line's words for what the
library's messages name, its flags and the ``baseline`` command a missing baseline's recipe is, and for the errors
that stop a run (_wording). ``meta-eval --select`` has a module of its own (meta_eval_select), and what it shares with
plain meta-eval is _meta_eval_common. ``convert`` writes a GGUF file as a plain folder. ``cluster`` is ray_cluster,
which reads a table of its own rather than the plain-text inputs the others share."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO, TypeVar

from ..errors import (
    BARTScoreError,
    BARTScoreWarning,
    BaselineError,
    CacheFileError,
    FewerReferencePairsWarning,
    InputError,
    UnsupportedModelError,
)
from ..options import CorpusPoints
from . import baseline, compare, convert, meta_eval, ray_cluster, score
from ._arguments import add_input_arguments, add_model_arguments
from ._wording import COMMAND_LINE, OPTION_FLAGS, Failed, said_on_the_command_line

SUBCOMMANDS = (score, compare, baseline, meta_eval, convert, ray_cluster)
# The errors of a request the user can mend (exit status 2): bad input or options, a checkpoint the engine cannot
# drive, a baseline or a score cache that cannot be used.
USAGE_ERRORS = (InputError, UnsupportedModelError, BaselineError, CacheFileError)
_Result = TypeVar("_Result")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bartscore", description="BARTScore from the command line.")
    shared = argparse.ArgumentParser(add_help=False)
    add_input_arguments(shared)
    add_model_arguments(shared)
    commands = parser.add_subparsers(dest="command", required=True)
    for subcommand in SUBCOMMANDS:
        subcommand.add_parser(commands, [shared])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status (exit_status): 0 success, 2 usage error, 1 runtime failure, 130
    interrupted (Ctrl-C), 141 when the reader of stdout went away (`| head`), as a shell reports a process ended by
    SIGPIPE.

    Every subcommand ends here the same way: what stops it (an error of bart_score's, a Failed, an OSError, Ctrl-C, a
    closed pipe or a failed write to stdout) is said once, in one line and the command line's words (or, for the
    pipe, none), never a traceback. Files are written atomically, so an interrupted run leaves no partial file under
    an output's name."""
    command = "bartscore"
    try:
        with _stdout_that_names_its_failures():
            try:
                args = build_parser().parse_args(argv)  # argparse reports its own usage errors with status 2
            except SystemExit:  # --help, or a usage error: what help printed must fail here too, if it fails
                sys.stdout.flush()
                raise
            command = f"bartscore {args.command}"
            from ..long_documents.windows import splitting_once

            with splitting_once():  # a text the check splits (its sentences counted) is not split again to score
                request = args.check(args)
                from ..scaling._distributed import torchrun_process_group  # torch: after the check, which needs none

                with torchrun_process_group(), warnings_as_lines(command, hidden=unasked_notes(args)):
                    args.run(request)
            sys.stdout.flush()  # here, not at exit, so that a failure is reported like any other
        return 0
    except (BARTScoreError, Failed, OSError, StdoutWriteError, KeyboardInterrupt) as error:
        if isinstance(error, (BrokenPipeError, StdoutWriteError)):
            _discard_stdout()
        for line in said_lines(error):
            print(f"{command}: {line}", file=sys.stderr)
        return exit_status(error)


def exit_status(error: BaseException) -> int:
    """The exit status of a run that `error` ended (docs/cli.md, "Exit status"), keyed on bart_score's error family
    (a Failed's by its error): 2 for a usage error (USAGE_ERRORS), 130 for Ctrl-C, 141 for a closed pipe, and 1 for a
    failure at run time (a checkpoint missing or damaged, an optional extra missing, benchmark data that cannot be
    had, an output file that cannot be written, scoring that failed, any other OSError)."""
    while isinstance(error, Failed):
        error = error.error
    if isinstance(error, KeyboardInterrupt):
        return 130
    if isinstance(error, BrokenPipeError):
        return 141
    return 2 if isinstance(error, USAGE_ERRORS) else 1


def said_lines(error: BaseException) -> list[str]:
    """What the command line says of the error that ended a run, line by line, each after the command's name: a
    usage error as "error: <message>", a Failed's error after its context ("scoring failed: <message>") and then its
    notes, Ctrl-C as "interrupted", a failed write to stdout by that name; nothing for a closed pipe or a quiet
    Failed."""
    context: str | None = None
    reason: str | None = None
    notes: tuple[str, ...] = ()
    if isinstance(error, Failed):
        if error.quiet:
            return []
        context, reason, notes, error = error.context, error.reason, error.notes, error.error
    if isinstance(error, BrokenPipeError):
        return []
    if isinstance(error, KeyboardInterrupt):
        said = "interrupted"
    elif isinstance(error, StdoutWriteError):
        said = f"cannot write the output to stdout: {error}"
    elif exit_status(error) == 2:
        said = f"error: {said_on_the_command_line(error)}"
    else:
        words = reason or said_on_the_command_line(error)
        said = words if context is None else f"{context}: {words}"
    return [said, *notes]


class StdoutWriteError(Exception):
    """A write to stdout failed (a full disk, /dev/full, an I/O error). Deliberately not an OSError, so that the
    subcommands' handlers for their own files do not report it as a failure of one of those."""


class _NamingStdout:
    """sys.stdout during a run: a failed write raises StdoutWriteError; a closed pipe stays BrokenPipeError."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._guarded(self._stream.write, text)

    def writelines(self, lines: Iterable[str]) -> None:
        return self._guarded(self._stream.writelines, lines)

    def flush(self) -> None:
        return self._guarded(self._stream.flush)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @staticmethod
    def _guarded(operation: Callable[..., _Result], *arguments: Any) -> _Result:
        try:
            return operation(*arguments)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise StdoutWriteError(error.strerror or str(error)) from error


@contextlib.contextmanager
def _stdout_that_names_its_failures() -> Iterator[None]:
    original = sys.stdout
    sys.stdout = _NamingStdout(original)
    try:
        yield
    finally:
        sys.stdout = original


def _discard_stdout() -> None:
    """Points stdout's descriptor at /dev/null: what is still buffered then goes nowhere when the interpreter
    flushes it at exit, instead of failing there again with a message of Python's own."""
    with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def unasked_notes(args: argparse.Namespace) -> tuple[type[Warning], ...]:
    """The library's warnings that tell this run's user nothing they can act on, so the command line does not print
    them: FewerReferencePairsWarning where --rescale-pairs is offered but not given (`--rescale corpus` on a small
    file always takes fewer pairs than the default budget, and every pair the texts give is scored). Given
    --rescale-pairs, or from `baseline` (whose corpus is chosen to give its reference points), it is shown."""
    pairs = OPTION_FLAGS[f"{CorpusPoints.PREFIX}pairs"][0].dest
    unasked = hasattr(args, pairs) and getattr(args, pairs) is None
    return (FewerReferencePairsWarning,) if unasked else ()


@contextlib.contextmanager
def warnings_as_lines(prefix: str, hidden: tuple[type[Warning], ...] = ()) -> Iterator[None]:
    """Warnings (truncation, rescaling, ...) printed as one line each for the user, without the Python source line
    that raised them; bart_score's in the command line's words (its flags, as its errors). Warnings of the `hidden`
    classes are not printed."""
    default = warnings.formatwarning
    warnings.formatwarning = lambda message, *_args, **_kwargs: f"{prefix}: warning: {_warning_said(message)}\n"
    try:
        with warnings.catch_warnings():
            for category in hidden:
                warnings.filterwarnings("ignore", category=category)
            yield
    finally:
        warnings.formatwarning = default


def _warning_said(message: Warning | str) -> str:
    return message.said(COMMAND_LINE) if isinstance(message, BARTScoreWarning) else str(message)
