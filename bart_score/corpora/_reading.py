"""Reading the files bart_score is given, within bounds: every file input goes through ``read_bounded`` (whole) or
``open_bounded`` (line by line), and every JSON text through ``parse_json``.

A file input must be a regular file (or a pipe, such as a shell's ``<(...)``, read up to the size limit): a device
(/dev/zero, /dev/urandom, a terminal) or a folder is refused before anything is read, a regular file larger than the
limit before it is opened, and a pipe that goes on past the limit as soon as it does. A JSON text may nest at most
MAX_JSON_DEPTH arrays and objects: a deeper one is refused with an error naming where it is, instead of a
RecursionError. Each caller passes the error class of its kind of file (InputError for corpora, BaselineError,
CacheFileError, BenchmarkDataError), and may say what the file is (`what`, text or message parts, such as "the
score cache <path>"); a file it does not is named by its path, as a FileName part (bart_score.messages)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..messages import FileName, Part, parts_of

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

MAX_FILE_BYTES = 1 << 30  # 1 GiB: corpora, tables, score caches, benchmark files
MAX_JSON_DEPTH = 64  # the project's own files nest 5 deep at most
# What a message says a file is: text or parts ("the baseline file <path>"); None: the file's path, as a FileName.
What = str | Sequence[Part] | None


def _named(path: str, what: What) -> tuple[Part, ...]:
    return (FileName(str(path)),) if what is None else parts_of(what)


def size_text(size: int) -> str:
    """A size in bytes as a message says it."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


def check_input_file(path: str, what: What = None, *, limit: int = MAX_FILE_BYTES, error: type = InputError) -> None:
    """Refuses (with `error`, naming `what`, default the path) what cannot be read as a bounded file: a missing file
    (FileNotFoundError's message), a folder, a device, or a regular file over `limit` bytes. A pipe passes: it is
    read under the limit."""
    named = _named(path, what)
    try:
        mode = os.stat(path)
    except OSError as problem:
        raise error("cannot read ", *named, f": {problem.strerror or problem}") from None
    if stat.S_ISDIR(mode.st_mode):
        raise error(*named, " is a folder, not a file")
    if not (stat.S_ISREG(mode.st_mode) or stat.S_ISFIFO(mode.st_mode)):
        kind = "a character device" if stat.S_ISCHR(mode.st_mode) else "a device or socket"
        raise error(*named, f" is {kind}, not a file", remedy="give a regular file")
    if stat.S_ISREG(mode.st_mode) and mode.st_size > limit:
        raise error(
            *named,
            f" is {mode.st_size:,} bytes, over the limit of {limit:,} bytes ({size_text(limit)}) on a file input",
        )


class _Limited(io.RawIOBase):
    """A file's bytes, failing once more than `limit` have come (a pipe, or a file that grows while it is read)."""

    def __init__(self, handle: io.RawIOBase, what: tuple[Part, ...], limit: int, error: type) -> None:
        self._handle, self._what, self._limit, self._error = handle, what, limit, error
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int | None:
        count = self._handle.readinto(buffer)
        self._count += count or 0
        if self._count > self._limit:
            raise self._error(*self._what, f" goes on past the {size_text(self._limit)} limit on a file input")
        return count

    def close(self) -> None:
        self._handle.close()
        super().close()


def open_bounded(
    path: str, what: What = None, *, limit: int = MAX_FILE_BYTES, error: type = InputError
) -> io.BufferedReader:
    """A binary handle (buffered) on a file input, checked by check_input_file and failing past `limit` bytes.
    Wrap it in io.TextIOWrapper to read text."""
    check_input_file(path, what, limit=limit, error=error)
    try:
        handle = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by the handle returned, which owns it)
    except OSError as problem:
        raise error("cannot read ", *_named(path, what), f": {problem.strerror or problem}") from None
    return io.BufferedReader(_Limited(handle, _named(path, what), limit, error))


def read_bounded(path: str, what: What = None, *, limit: int = MAX_FILE_BYTES, error: type = InputError) -> bytes:
    """A file input's bytes, at most `limit` of them (see check_input_file)."""
    with open_bounded(path, what, limit=limit, error=error) as handle:
        try:
            return handle.read()
        except OSError as problem:
            raise error("cannot read ", *_named(path, what), f": {problem.strerror or problem}") from None


def parse_json(
    text: str | bytes,
    where: str | Sequence[Part],
    *,
    error: type = InputError,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """A JSON text's value, refusing (with `error`, naming `where`: a file, a file's line, as text or parts) invalid
    JSON and values nested more than MAX_JSON_DEPTH deep. object_pairs_hook: as json.loads'."""
    named = parts_of(where)
    try:
        value = json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise error(*named, f" nests JSON too deeply (more than {MAX_JSON_DEPTH} levels)") from None
    except UnicodeDecodeError:
        raise error(*named, " is not UTF-8 text") from None
    except ValueError as problem:  # JSONDecodeError, and numbers too long to convert
        raise error(*named, f" is not valid JSON: {getattr(problem, 'msg', problem)}") from None
    if _depth_over(value, MAX_JSON_DEPTH):
        raise error(*named, f" nests JSON too deeply (more than {MAX_JSON_DEPTH} levels)")
    return value


def _depth_over(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` deep in a parsed JSON value (walked without recursion)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def read_json(path: str, what: What = None, *, limit: int = MAX_FILE_BYTES, error: type = InputError) -> Any:
    """A JSON file's value (UTF-8, a byte-order mark allowed), read by read_bounded and parsed by parse_json."""
    data = read_bounded(path, what, limit=limit, error=error)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise error(*_named(path, what), " is not UTF-8 text") from None
    return parse_json(text, _named(path, what), error=error)


def file_sha256(path: str) -> str:
    """The SHA-256 of a file's bytes (hex), read a MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
