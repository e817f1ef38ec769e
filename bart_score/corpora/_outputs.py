"""Output files, one way for every writer (the command line's -o files, baseline files, meta-eval's tables): checked
before any work is done, written atomically, and valid JSON. Nothing here imports torch."""

import contextlib
import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable
from typing import IO, Any, NoReturn

from ..errors import InputError, OutputFileError
from ..messages import Mention, Part


def _refuse(*parts: Part, named: Part, remedy: str | None = None) -> NoReturn:
    """An InputError about an output or input named so: its option when it is a Mention."""
    raise InputError(*parts, option=named.option if isinstance(named, Mention) else None, remedy=remedy)


def check_output_path(path: str, what: Part, *, make_folders: bool = False, stdout_hint: str | None = None) -> None:
    """Refuses (InputError, naming `what` and the file) an output that could not be written as a new file renamed
    over the old one: an empty name; anything but a regular file under that name (a folder, a device such as
    /dev/null or /dev/stdout, a FIFO, a socket), which renaming would replace; a read-only file; a folder that is
    missing or not writable. what: the output as the caller names it (a Mention of its option, or the caller's own
    words: the command line's flag). make_folders: missing folders will be made, so the nearest existing one above
    must be a writable folder. stdout_hint: how to write to stdout instead (e.g. '-o -'), said when the name is not
    a file."""
    if path == "":
        _refuse(what, " is empty", named=what, remedy="give a file name")
    try:
        mode = _mode(path)  # through links as the kernel follows them (/dev/stdout into a pipe, say)
    except OSError as error:
        _refuse("cannot write ", what, f" {path}: {error.strerror or error}", named=what)
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device, FIFO or socket)"
        hint = f"to write to stdout use {stdout_hint}" if stdout_hint and not stat.S_ISDIR(mode) else None
        _refuse(
            "cannot write ",
            what,
            f" {path}: it is {kind}, and only a regular file can be replaced",
            named=what,
            remedy=hint,
        )
    folder = os.path.dirname(os.path.realpath(path))
    if make_folders:
        while not os.path.lexists(folder):
            folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        reason = "is not a folder" if os.path.lexists(folder) else "does not exist"
        _refuse("cannot write ", what, f" {path}: {folder} {reason}", named=what)
    if not os.access(folder, os.W_OK | os.X_OK):
        _refuse("cannot write ", what, f" {path}: the folder {folder} is not writable", named=what)
    # os.access alone would let root through; no write permission bit at all is a file its owner made read-only.
    if mode is not None and (not os.access(path, os.W_OK) or not mode & 0o222):
        _refuse("cannot write ", what, f" {path}: the file exists and is read-only", named=what)


def check_not_an_input(path: str, inputs: Iterable[tuple[Part, str | None]], what: Part) -> None:
    """Refuses an output (`what`: as the caller names it) that is the same file as one of `inputs` ((option, path)
    pairs, each option as the caller names it; None paths are skipped)."""
    if not os.path.exists(path):
        return
    for option, input_path in inputs:
        if input_path and os.path.exists(input_path) and os.path.samefile(path, input_path):
            _refuse(
                what,
                f" {path} is the same file as ",
                option,
                f" {input_path}; writing it would replace an input",
                named=what,
            )


def check_distinct_outputs(outputs: Iterable[tuple[Part, str]]) -> None:
    """Refuses two outputs ((option, path) pairs, each option as the caller names it) that name the same file."""
    seen: dict[str, tuple[Part, str]] = {}  # real path -> (option, path as given)
    for option, path in outputs:
        key = os.path.realpath(path)
        if key in seen:
            earlier, given = seen[key]
            _refuse(
                option, f" {path} is the same file as ", earlier, f" {given}", named=option, remedy="give each its own"
            )
        seen[key] = (option, path)


def write_atomically(
    path: str, write: Callable[[IO[str]], object], *, make_folders: bool = False, newline: str | None = None
) -> None:
    """Writes a file through `write(handle)` into a temporary file beside it, flushed to disk, then renamed over it:
    an error, a kill or a full disk midway leaves the previous file whole and no partial file under its name. A link
    keeps pointing where it did (its target is replaced); the file keeps the old one's permissions, or the umask's.
    Anything but a regular file under the name (a device, a FIFO, a folder) is refused rather than replaced.
    make_folders: missing folders are made first."""
    mode = _mode(path)
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputFileError("not a regular file (a folder, device, FIFO or socket); it is not replaced", path=path)
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    if make_folders:
        os.makedirs(folder, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".partial")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline=newline) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode) if os.path.exists(target) else 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    descriptor = os.open(folder, os.O_RDONLY)  # the rename itself reaches the disk
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _mode(path: str) -> int | None:
    """The file's st_mode through links, or None when there is no file under the name."""
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # a file above it that is not a folder: said by the caller
        return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def finite_or_null(value: Any) -> Any:
    """JSON has no NaN or infinity (a single segment gives NaN p-values, a direction that cannot be rescaled NaN
    rescaled scores): they become None (null). Dicts, lists and tuples are converted throughout."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: finite_or_null(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_null(item) for item in value]
    return value


def json_text(value: Any, **options: Any) -> str:
    """json.dumps of `value` with NaN and infinities as null: always valid JSON."""
    return json.dumps(finite_or_null(value), allow_nan=False, **options)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def spreadsheet_cell(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (starting with =, +, -, @, tab or carriage return) gets a
    leading apostrophe, so that it shows as text, as OWASP advises for CSV files; numbers, and texts that are plain
    numbers (such as "-1.5"), are left as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_json_and_csv(prefix: str, report: Any, csv_text: str) -> tuple[str, str]:
    """PREFIX.json (the whole report, NaN and infinities as null) and PREFIX.csv (`csv_text`), each written
    atomically, their folders made as needed."""
    json_report = json_text(report, indent=2, ensure_ascii=False) + "\n"
    write_atomically(prefix + ".json", lambda handle: handle.write(json_report), make_folders=True, newline="")
    write_atomically(prefix + ".csv", lambda handle: handle.write(csv_text), make_folders=True, newline="")
    return prefix + ".json", prefix + ".csv"
