"""The command line: ``bartscore score``, ``compare``, ``baseline`` and ``meta-eval`` (also ``python -m bart_score``).

Each subcommand is a module with ``add_parser``, a ``check`` that finds every mistake in the request before any
model is loaded (exit status 2), and a ``run`` (exit status 0, or 1 for a failure at run time). Heavy libraries are
imported only by ``run``, so that help and usage errors answer at once. What the subcommands share is in three
modules: their argparse arguments (arguments), parsed arguments turned into the library's requests, checked and
scored (requests), and the command line's words for what the library's messages name, its flags and the ``baseline``
command a missing baseline's recipe is, in which it says errors and warnings (wording). ``meta-eval --select`` has a
module of its own (meta_eval_select), and what it shares with plain meta-eval is meta_eval_common."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO, TypeVar

from ..errors import BARTScoreWarning
from . import baseline, compare, meta_eval, score
from .arguments import add_input_arguments, add_model_arguments
from .wording import COMMAND_LINE, said_on_the_command_line

SUBCOMMANDS = (score, compare, baseline, meta_eval)
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
    """Runs the command line; returns the exit status: 0 success, 2 usage error, 1 runtime failure, 130 interrupted
    (Ctrl-C), 141 when the reader of stdout went away (`| head`), as a shell reports a process ended by SIGPIPE.

    Every subcommand ends here the same way: Ctrl-C, a closed pipe or a failed write to stdout is one line (or,
    for the pipe, none), never a traceback. Files are written atomically, so an interrupted run leaves no partial
    file under an output's name."""
    command = "bartscore"
    try:
        with _stdout_that_names_its_failures():
            try:
                args = build_parser().parse_args(argv)  # argparse reports its own usage errors with status 2
            except SystemExit:  # --help, or a usage error: what help printed must fail here too, if it fails
                sys.stdout.flush()
                raise
            command = f"bartscore {args.command}"
            status = _check_and_run(args, command)
            sys.stdout.flush()  # here, not at exit, so that a failure is reported like any other
        return status
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _discard_stdout()
        return 141
    except StdoutWriteError as error:
        _discard_stdout()
        print(f"{command}: cannot write the output to stdout: {error}", file=sys.stderr)
        return 1


def _check_and_run(args: argparse.Namespace, command: str) -> int:
    try:
        corpus, options = args.check(args)
    except (ValueError, TypeError) as error:  # InputError is a ValueError
        print(f"{command}: error: {said_on_the_command_line(error)}", file=sys.stderr)
        return 2
    from ..distributed import torchrun_process_group

    with torchrun_process_group(), warnings_as_lines(command):
        return args.run(args, corpus, options)


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


@contextlib.contextmanager
def warnings_as_lines(prefix: str) -> Iterator[None]:
    """Warnings (truncation, rescaling, ...) printed as one line each for the user, without the Python source line
    that raised them; bart_score's in the command line's words (its flags, as its errors)."""
    default = warnings.formatwarning
    warnings.formatwarning = lambda message, *_args, **_kwargs: f"{prefix}: warning: {_warning_said(message)}\n"
    try:
        yield
    finally:
        warnings.formatwarning = default


def _warning_said(message: Warning | str) -> str:
    return message.said(COMMAND_LINE) if isinstance(message, BARTScoreWarning) else str(message)
