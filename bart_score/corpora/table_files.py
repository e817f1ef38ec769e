"""Table files (.csv, .jsonl) read under limits into a `Corpus`: one row per segment, with columns for the source,
the references and each system."""

from __future__ import annotations

import collections
import contextlib
import csv
import json
import re
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..inputs import check_text, counted, describe
from ..messages import FileName
from ._reading import parse_json
from .corpus import Corpus, utf8_lines


@dataclass(frozen=True)
class TableLimits:
    """Limits a table reader enforces while it reads, so that a file over them is refused before it is built: the
    most data rows, columns, and characters in one cell (None: no limit)."""

    max_rows: int | None = None
    max_columns: int | None = None
    max_chars: int | None = None


@dataclass(frozen=True)
class Table:
    """A table file's named columns, one dict per data row, and the line of each row (its last, for a CSV row that
    spans lines)."""

    columns: list[str]
    rows: list[dict[str, Any]]
    lines: list[int]


def read_table(path: str, limits: TableLimits = TableLimits(), *, kind: str | None = None) -> Table:
    """A .csv or .jsonl file (UTF-8; kind "csv" or "jsonl" whatever its name), read row by row under `limits`: every
    column named, each name once. A blank line is no row; a CSV row of empty cells is a row of empty texts."""
    kind = kind or (
        "jsonl" if path.lower().endswith((".jsonl", ".json")) else "csv" if path.lower().endswith(".csv") else None
    )
    if kind is None:
        raise InputError(FileName(path), ": a table must be a .jsonl or .csv file")
    with utf8_lines(path) as lines:
        columns, rows, line_numbers = (_jsonl_rows if kind == "jsonl" else _csv_rows)(path, lines, limits)
    if not columns:
        raise InputError(FileName(path), " is empty")
    for number, name in enumerate(columns, start=1):
        if not name.strip():
            raise InputError(FileName(path), f": column {number} has no name")
    repeated = sorted(name for name, count in collections.Counter(columns).items() if count > 1)
    if repeated:
        raise InputError(FileName(path), f": column names appear more than once: {', '.join(_first(repeated))}")
    return Table(columns, rows, line_numbers)


def read_table_corpus(
    path: str,
    source_column: str | None = None,
    reference_columns: Sequence[str] | None = None,
    system_columns: Sequence[str] | None = None,
    id_column: str = "id",
    limits: TableLimits = TableLimits(),
) -> Corpus:
    """A .csv or .jsonl file (UTF-8) with one row per segment.

    Source: the given column (which must exist), else a ``source`` column if there is one. References: the given
    columns, else every column named ``reference``, ``references`` or ``reference_<n>`` (a JSONL cell may hold a list;
    empty or blank cells are no reference and are counted in ``blank_references``; every row needs one). Systems: the
    given columns, else every column but the source, the references and the id. A column has one role, the defaults
    (source, id) included. A row of empty cells is a row of empty texts; a blank line is no row. Texts are
    scored exactly as written: an empty output is the empty text, while a JSONL row that lacks a system's or the
    source's value is an error. `limits` are checked row by row as the file is read; reading takes time linear in
    the file's size."""
    table = read_table(path, limits)
    columns, rows = table.columns, table.rows
    _check_given_columns(path, columns, source_column, reference_columns, system_columns)
    source_given = source_column is not None
    source_column = source_column or "source"
    reference_columns, system_columns = _role_columns(
        columns, source_column, source_given, id_column, reference_columns, system_columns
    )
    known = set(columns)
    _check_roles(path, known, source_column, source_given, id_column, reference_columns, system_columns)
    _check_scorable(path, columns, rows, source_column, id_column, reference_columns, system_columns)
    references, blank = _reference_texts(path, rows, reference_columns) if reference_columns else (None, 0)
    return Corpus(
        systems={column: _column_cells(path, rows, column, _text) for column in system_columns},
        sources=_column_cells(path, rows, source_column, _text) if source_column in known else None,
        references=references,
        ids=_column_cells(path, rows, id_column, _id_text) if id_column in known else None,
        blank_references=blank,
    )


def _check_given_columns(
    path: str,
    columns: Sequence[str],
    source_column: str | None,
    reference_columns: Sequence[str] | None,
    system_columns: Sequence[str] | None,
) -> None:
    """The columns the caller named exist, and none is named for two roles (checked before any default is chosen, so
    that a typo is reported as one rather than as a conflict with a default)."""
    given = [*([source_column] if source_column else []), *(reference_columns or []), *(system_columns or [])]
    known = set(columns)
    missing = [c for c in given if c not in known]
    if missing:
        raise InputError(FileName(path), f" has no column {missing[0]!r}; its columns are {_listed(columns)}")
    twice = sorted(name for name, count in collections.Counter(given).items() if count > 1)
    if twice:
        raise InputError(f"column {twice[0]!r} is given two roles (source, reference or system)", remedy="give it one")


def _role_columns(
    columns: Sequence[str],
    source_column: str,
    source_given: bool,
    id_column: str,
    reference_columns: Sequence[str] | None,
    system_columns: Sequence[str] | None,
) -> tuple[Sequence[str], Sequence[str]]:
    """The reference and system columns: those given, else the defaults (see read_table_corpus). A column named as a
    reference is not one when given another role; the systems are what no other role takes."""
    if reference_columns is None:
        taken = {*(system_columns or ()), *([source_column] if source_given else [])}
        reference_columns = [c for c in columns if re.fullmatch(r"references?|reference_[0-9]+", c) and c not in taken]
    if system_columns is None:
        not_systems = {source_column, id_column, *reference_columns}
        system_columns = [c for c in columns if c not in not_systems]
    return reference_columns, system_columns


def _check_scorable(
    path: str,
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    source_column: str,
    id_column: str,
    reference_columns: Sequence[str],
    system_columns: Sequence[str],
) -> None:
    """Something to score against (a source, references or both), something to score (a system) and rows, in this
    order, so that a file of column names alone is told first what its columns lack."""
    if source_column not in columns and not reference_columns:
        raise InputError(
            FileName(path),
            f" needs a {source_column!r} column and/or reference columns (reference, references "
            f"or reference_1, reference_2, ...); its columns are {_listed(columns)}",
        )
    if not system_columns:
        raise InputError(
            FileName(path),
            f" has no system column: every column but {source_column!r}, {id_column!r} and the "
            f"references holds one system's outputs",
        )
    if not rows:
        raise InputError(FileName(path), " has column names but no rows")


def _text(path: str, number: int, column: str, value: object) -> str:
    """A cell's text; anything else, a missing JSONL value included, is refused (texts are scored as written)."""
    if not isinstance(value, str):
        raise InputError(
            FileName(path),
            f" row {number}, column {column!r}: expected text, got {'nothing' if value is None else describe(value)}",
        )
    return value


def _column_cells(
    path: str, rows: Sequence[Mapping[str, Any]], column: str, as_text: Callable[[str, int, str, object], str]
) -> list[str]:
    """A column's cell in each row, in row order, read by `as_text` (_text, or _id_text for ids)."""
    return [as_text(path, number, column, row.get(column)) for number, row in enumerate(rows, start=1)]


def _reference_texts(
    path: str, rows: Sequence[Mapping[str, Any]], reference_columns: Sequence[str]
) -> tuple[list[list[str]], int]:
    """Each row's references, in column order (a JSONL cell may hold a list), and the number of blank ones: an empty
    or blank cell is no reference, so that a row may have fewer than another, but every row needs one."""
    references, blank = [], 0
    for number, row in enumerate(rows, start=1):
        refs = []
        for column in reference_columns:
            cell = row.get(column)
            for value in cell if isinstance(cell, list) else [cell]:
                if value is not None and (not isinstance(value, str) or value.strip()):
                    refs.append(_text(path, number, column, value))
                else:
                    blank += 1
        if not refs:
            raise InputError(
                FileName(path), f" row {number} has no reference (its columns {_listed(reference_columns)} are empty)"
            )
        references.append(refs)
    return references, blank


def _listed(names: Sequence[str]) -> str:
    """Column names for a message, as a list: all of a few, the first ones of many."""
    return str(_first(names)).replace("'...'", "...")


def _first(names: Sequence[str], shown: int = 12) -> list[str]:
    """The names, or the first `shown` of them and '...' (a file may have many thousands of columns)."""
    return list(names) if len(names) <= shown else [*names[:shown], "..."]


def _check_roles(
    path: str,
    known: AbstractSet[str],
    source_column: str,
    source_given: bool,
    id_column: str,
    reference_columns: Sequence[str],
    system_columns: Sequence[str],
) -> None:
    """A column has one role, the defaults included: a column named source is the source unless another is given,
    and a column named id holds the segment ids, so neither can also be given another role."""
    roles, defaults = {}, {}
    if source_column in known:
        roles[source_column] = "the source"
        if not source_given:
            defaults[source_column] = f"a column named {source_column} is the source unless another column is given"
    claims = [(id_column, "the id column")] if id_column in known else []
    claims += [(name, "a reference") for name in reference_columns] + [(name, "a system") for name in system_columns]
    defaults.setdefault(id_column, f"a column named {id_column} holds the segment ids")
    for name, role in claims:
        if name in roles:
            why = f" ({defaults[name]})" if name in defaults else ""
            raise InputError(
                FileName(path),
                f": column {name!r} is {roles[name]} and cannot also be {role}{why}; a column has one role",
            )
        roles[name] = role


def _id_text(path: str, number: int, column: str, value: object) -> str:
    """A segment id as text: a JSONL id may be a string or a number (written as JSON writes it); a missing or null id
    is the empty id; anything else (an object, a list, true/false) is refused."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)
    raise InputError(
        FileName(path), f" row {number}, column {column!r}: an id is text or a number, got {describe(value)}"
    )


def _check_size(path: str, limits: TableLimits, rows: int, columns: Collection[str], line: int | None = None) -> None:
    """The limits on rows and columns, checked as each row is read (`line`: a JSONL line, whose columns add up)."""
    if limits.max_rows is not None and rows > limits.max_rows:
        raise InputError(
            FileName(path), f" has more than {counted(limits.max_rows, 'row')}; the limit is {limits.max_rows}"
        )
    if limits.max_columns is not None and len(columns) > limits.max_columns:
        columns_read = counted(len(columns), "column")
        how_many = f"at least {columns_read} (by line {line})" if line else columns_read
        raise InputError(FileName(path), f" has {how_many}; the limit is {limits.max_columns}")


def _check_length(path: str, limits: TableLimits, number: int, column: str, value: object) -> None:
    """Each text of a cell (a JSONL cell may hold a list) within the length limit."""
    if limits.max_chars is None:
        return
    for text in value if isinstance(value, list) else [value]:
        if isinstance(text, str) and len(text) > limits.max_chars:
            raise InputError(
                FileName(path),
                f" row {number}, column {column!r} has {counted(len(text), 'character')}; the limit is "
                f"{limits.max_chars}",
            )


def _encodable(text: str, path: str, where: str) -> str:
    """JSON escapes can spell lone surrogates, which no file, tokenizer or web page can take (`where`: the line or the
    row and column of the file at `path`)."""
    try:
        return check_text(text, where)
    except InputError as error:
        raise InputError(FileName(path), " ", *error.parts, remedy=error.remedy) from None


# csv.field_size_limit is one setting for the whole process; readers raise it (so that a cell's length is checked by
# the reader's own limit, which names its row and column) and put it back, one at a time.
_CSV_FIELD_LIMIT_LOCK = threading.Lock()


@contextlib.contextmanager
def _csv_field_limit_lifted() -> Iterator[None]:
    with _CSV_FIELD_LIMIT_LOCK:
        previous = csv.field_size_limit()
        try:
            csv.field_size_limit(sys.maxsize)
        except OverflowError:  # a C long of 32 bits (Windows)
            csv.field_size_limit(2**31 - 1)
        try:
            yield
        finally:
            csv.field_size_limit(previous)


def _csv_rows(
    path: str, lines: Iterable[str], limits: TableLimits
) -> tuple[list[str], list[dict[str, str]], list[int]]:
    """Column names (stripped), one dict per data row, and the line each row ends on. A blank line (no field at all:
    nothing, not even a comma) is no row; a row whose cells are empty is a row of empty texts."""
    reader = csv.reader(lines)
    columns: list[str] = []
    rows: list[dict[str, str]] = []
    line_numbers: list[int] = []
    try:
        with _csv_field_limit_lifted():
            for row in reader:
                if not row:
                    continue
                if not columns:
                    columns = [name.strip() for name in row]
                    _check_size(path, limits, 0, columns)
                    continue
                if len(row) != len(columns):
                    raise InputError(
                        FileName(path),
                        f" line {reader.line_num} has {counted(len(row), 'field')} but the header has {len(columns)}",
                    )
                _check_size(path, limits, len(rows) + 1, columns)
                for column, value in zip(columns, row):
                    _check_length(path, limits, len(rows) + 1, column, value)
                rows.append(dict(zip(columns, row)))
                line_numbers.append(reader.line_num)
    except csv.Error as error:
        raise InputError(FileName(path), f" line {reader.line_num} is not valid CSV: {error}") from None
    return columns, rows, line_numbers


class _KeyTwice(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's dict, refusing a key that appears twice (json.loads would keep its last value)."""
    row = {}
    for key, value in pairs:
        if key in row:
            raise _KeyTwice(key)
        row[key] = value
    return row


def _jsonl_rows(
    path: str, lines: Iterable[str], limits: TableLimits
) -> tuple[list[str], list[dict[str, Any]], list[int]]:
    """Column names (in order of first appearance), one dict per non-blank line, and its line number; a key that
    appears twice in one object (at any depth) is refused."""
    columns: dict[str, None] = {}  # an ordered set
    rows: list[dict[str, Any]] = []
    line_numbers: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            where = (FileName(path), f" line {number}")
            row = parse_json(line, where, error=InputError, object_pairs_hook=_unique_keys)
        except _KeyTwice as error:
            raise InputError(FileName(path), f" line {number}: key {error.key!r} appears twice") from None
        if not isinstance(row, dict):
            raise InputError(FileName(path), f" line {number} is not a JSON object")
        for name in row:
            if name not in columns:
                columns[_encodable(name, path, f"line {number}: the column name {name!r}")] = None
        _check_size(path, limits, len(rows) + 1, columns, number)
        for column, value in row.items():
            _check_length(path, limits, len(rows) + 1, column, value)
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str):
                    _encodable(text, path, f"row {len(rows) + 1}, column {column!r}")
        rows.append(row)
        line_numbers.append(number)
    return list(columns), rows, line_numbers
