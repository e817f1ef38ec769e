"""Corpora: plain-text and table readers, and scoring every system of a corpus, or a `datasets` corpus, at once."""

from __future__ import annotations

import ast
import collections
import contextlib
import csv
import io
import json
import os
import re
import sys
import threading
import types
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import InputError, InputTypeError, UsageError
from .inputs import check_text, describe
from .options import DIRECTIONS, RESULT_SUFFIXES, ScoringOptions
from .reading import open_bounded, parse_json, read_bounded
from .rescale import LIBRARY_REMEDY, corpus_documents
from .wording import counted

if TYPE_CHECKING:
    from .engine import BARTScorer


@dataclass
class Corpus:
    """Segments to score: one hypothesis list per system, aligned with the sources and/or references."""

    systems: dict[str, list[str]]  # system name -> hypotheses
    sources: list[str] | None = None
    references: list[list[str]] | None = None  # one list of references per segment
    ids: list[str] | None = None  # segment ids, when the input names them
    blank_references: int = 0  # blank reference lines or cells, which are not references and were skipped


def _read_text(path: str) -> str:
    """A UTF-8 file's text (a byte-order mark is dropped); unreadable, unbounded (a device) or non-UTF-8 files are
    usage errors."""
    raw = read_bounded(path, error=UsageError)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise UsageError(
            f"{path} is not UTF-8 text (byte 0x{raw[error.start]:02x} on line {line}); save it as UTF-8"
        ) from None


@contextlib.contextmanager
def _text_lines(path: str) -> Iterator[io.TextIOWrapper]:
    """The lines of a UTF-8 file (a byte-order mark is dropped), read and decoded as they are needed, so that a
    reader that stops early (a limit crossed) costs little; non-UTF-8 files are usage errors naming byte and line."""
    try:
        with io.TextIOWrapper(open_bounded(path, error=UsageError), encoding="utf-8-sig", newline="") as handle:
            yield handle
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        _read_text(path)  # finds the byte and its line, and raises the usage error that names them
        raise


def _read_lines(path: str) -> list[str]:
    """One segment per line ("\n" or "\r\n"); a final newline does not make an extra segment."""
    lines = _read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_texts(path: str) -> tuple[list[str], int]:
    """A plain-text file's texts, one per line, and the number of blank lines, which are not texts and are skipped."""
    lines = _read_lines(path)
    texts = [line for line in lines if line.strip()]
    if not texts:
        raise UsageError(f"{path} has no text: it is empty or blank")
    return texts, len(lines) - len(texts)


def read_plain_corpus(
    sources: str | None = None, references: Sequence[str] = (), hypotheses: Sequence[str] = ()
) -> Corpus:
    """Plain-text files, one segment per line: a sources file, reference files (one reference each per segment; a
    blank line is no reference, so segments may have different counts, but each needs one), and one file per system
    (named after the file)."""
    if not hypotheses:
        raise UsageError("give at least one --hypotheses file (or --input with system columns)")
    files = {}
    if sources:
        files[sources] = _read_lines(sources)
    for path in [*references, *hypotheses]:
        files[path] = _read_lines(path)
    first = next(iter(files))
    lines: Sequence[str]  # a file's lines, then below a segment's line in each reference file
    for path, lines in files.items():
        if len(lines) != len(files[first]):
            raise UsageError(
                f"{path} has {counted(len(lines), 'line')} but {first} has {len(files[first])}; every file needs "
                f"one line per segment"
            )
    if not files[first]:
        raise UsageError(f"{', '.join(files)} {'are' if len(files) > 1 else 'is'} empty: no segments to score")
    systems = {}
    for path in hypotheses:
        name = os.path.basename(path)
        if name in systems:
            raise UsageError(f"two hypothesis files are named {name}; system names come from file names")
        systems[name] = files[path]
    refs, blank = None, 0
    if references:
        refs = []
        for number, lines in enumerate(zip(*(files[path] for path in references)), start=1):
            refs.append([line for line in lines if line.strip()])
            blank += len(lines) - len(refs[-1])
            if not refs[-1]:
                raise UsageError(
                    f"segment {number} has no reference: line {number} is blank in {', '.join(references)}"
                )
    return Corpus(systems, files[sources] if sources else None, refs, blank_references=blank)


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
        raise UsageError(f"{path}: a table must be a .jsonl or .csv file")
    with _text_lines(path) as lines:
        columns, rows, line_numbers = (_jsonl_rows if kind == "jsonl" else _csv_rows)(path, lines, limits)
    if not columns:
        raise UsageError(f"{path} is empty")
    for number, name in enumerate(columns, start=1):
        if not name.strip():
            raise UsageError(f"{path}: column {number} has no name")
    repeated = sorted(name for name, count in collections.Counter(columns).items() if count > 1)
    if repeated:
        raise UsageError(f"{path}: column names appear more than once: {', '.join(_first(repeated))}")
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
    given = [*([source_column] if source_column else []), *(reference_columns or []), *(system_columns or [])]
    known = set(columns)
    missing = [c for c in given if c not in known]
    if missing:
        raise UsageError(f"{path} has no column {missing[0]!r}; its columns are {_listed(columns)}")
    twice = sorted(name for name, count in collections.Counter(given).items() if count > 1)
    if twice:
        raise UsageError(f"column {twice[0]!r} is given two roles (source, reference or system); give it one")
    source_given = source_column is not None
    source_column = source_column or "source"
    if reference_columns is None:  # the columns named as references, unless given another role
        taken = {*(system_columns or ()), *([source_column] if source_given else [])}
        reference_columns = [c for c in columns if re.fullmatch(r"references?|reference_\d+", c) and c not in taken]
    if system_columns is None:
        not_systems = {source_column, id_column, *reference_columns}
        system_columns = [c for c in columns if c not in not_systems]
    _check_roles(path, known, source_column, source_given, id_column, reference_columns, system_columns)
    if source_column not in known and not reference_columns:
        raise UsageError(
            f"{path} needs a {source_column!r} column and/or reference columns (reference, references "
            f"or reference_1, reference_2, ...); its columns are {_listed(columns)}"
        )
    if not system_columns:
        raise UsageError(
            f"{path} has no system column: every column but {source_column!r}, {id_column!r} and the "
            f"references holds one system's outputs"
        )
    if not rows:
        raise UsageError(f"{path} has column names but no rows")

    def text_of(row: Mapping[str, Any], number: int, column: str) -> str:
        value = row.get(column)
        if not isinstance(value, str):
            raise UsageError(
                f"{path} row {number}, column {column!r}: expected text, got "
                f"{'nothing' if value is None else describe(value)}"
            )
        return value

    references, blank = None, 0
    if reference_columns:
        references = []
        for number, row in enumerate(rows, start=1):
            refs = []
            for column in reference_columns:
                cell = row.get(column)
                for value in cell if isinstance(cell, list) else [cell]:
                    if value is not None and (not isinstance(value, str) or value.strip()):
                        refs.append(text_of({column: value}, number, column))
                    else:
                        blank += 1
            if not refs:
                raise UsageError(
                    f"{path} row {number} has no reference (its columns {_listed(reference_columns)} are empty)"
                )
            references.append(refs)
    numbered = list(enumerate(rows, start=1))
    return Corpus(
        systems={c: [text_of(row, n, c) for n, row in numbered] for c in system_columns},
        sources=[text_of(row, n, source_column) for n, row in numbered] if source_column in known else None,
        references=references,
        ids=[_id_text(path, n, id_column, row.get(id_column)) for n, row in numbered] if id_column in known else None,
        blank_references=blank,
    )


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
            raise UsageError(
                f"{path}: column {name!r} is {roles[name]} and cannot also be {role}{why}; a column has one role"
            )
        roles[name] = role


def _id_text(path: str, number: int, column: str, value: object) -> str:
    """A segment id as text: a JSONL id may be a string or a number (written as JSON writes it); a missing or null id
    is the empty id; anything else (an object, a list, true/false) is refused."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)
    raise UsageError(f"{path} row {number}, column {column!r}: an id is text or a number, got {describe(value)}")


def _check_size(path: str, limits: TableLimits, rows: int, columns: Collection[str], line: int | None = None) -> None:
    """The limits on rows and columns, checked as each row is read (`line`: a JSONL line, whose columns add up)."""
    if limits.max_rows is not None and rows > limits.max_rows:
        raise UsageError(f"{path} has more than {counted(limits.max_rows, 'row')}; the limit is {limits.max_rows}")
    if limits.max_columns is not None and len(columns) > limits.max_columns:
        columns_read = counted(len(columns), "column")
        how_many = f"at least {columns_read} (by line {line})" if line else columns_read
        raise UsageError(f"{path} has {how_many}; the limit is {limits.max_columns}")


def _check_length(path: str, limits: TableLimits, number: int, column: str, value: object) -> None:
    """Each text of a cell (a JSONL cell may hold a list) within the length limit."""
    if limits.max_chars is None:
        return
    for text in value if isinstance(value, list) else [value]:
        if isinstance(text, str) and len(text) > limits.max_chars:
            raise UsageError(
                f"{path} row {number}, column {column!r} has {counted(len(text), 'character')}; the limit is "
                f"{limits.max_chars}"
            )


def _encodable(text: str, where: str) -> str:
    """JSON escapes can spell lone surrogates, which no file, tokenizer or web page can take."""
    try:
        return check_text(text, where)
    except ValueError as error:
        raise UsageError(str(error)) from None


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
                    raise UsageError(
                        f"{path} line {reader.line_num} has {counted(len(row), 'field')} but the header has "
                        f"{len(columns)}"
                    )
                _check_size(path, limits, len(rows) + 1, columns)
                for column, value in zip(columns, row):
                    _check_length(path, limits, len(rows) + 1, column, value)
                rows.append(dict(zip(columns, row)))
                line_numbers.append(reader.line_num)
    except csv.Error as error:
        raise UsageError(f"{path} line {reader.line_num} is not valid CSV: {error}") from None
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
            row = parse_json(line, f"{path} line {number}", error=UsageError, object_pairs_hook=_unique_keys)
        except _KeyTwice as error:
            raise UsageError(f"{path} line {number}: key {error.key!r} appears twice") from None
        if not isinstance(row, dict):
            raise UsageError(f"{path} line {number} is not a JSON object")
        for name in row:
            if name not in columns:
                columns[_encodable(name, f"{path} line {number}: the column name {name!r}")] = None
        _check_size(path, limits, len(rows) + 1, columns, number)
        for column, value in row.items():
            _check_length(path, limits, len(rows) + 1, column, value)
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str):
                    _encodable(text, f"{path} row {len(rows) + 1}, column {column!r}")
        rows.append(row)
        line_numbers.append(number)
    return list(columns), rows, line_numbers


def check_corpus_request(
    corpus: Corpus, options: ScoringOptions, *, option: str = "rescale='corpus'", remedy: str = LIBRARY_REMEDY
) -> tuple[str, ...]:
    """The directions `options` compute on `corpus`, every problem found before any model is used: the directions
    against the corpus's sources and references, and rescale="corpus" on rows from two documents or more (checked on
    the segments as given, not once per system). option, remedy: how the one-document error names the setting and
    what to do instead."""
    directions = options.directions_for(
        has_references=corpus.references is not None, has_sources=corpus.sources is not None
    )
    if options.rescale == "corpus" and not options.corpus_points.unrelated_texts:  # type: ignore[union-attr]  # set for corpus
        segments = len(next(iter(corpus.systems.values())))
        corpus_documents(segments, corpus.sources, corpus.references, option=option, remedy=remedy)
    return directions


def score_corpus(
    scorer: Any, corpus: Corpus, options: ScoringOptions | None = None, **keywords: Any
) -> tuple[dict[str, dict[str, list[float]]], str] | tuple[None, None]:
    """Scores every system in one planned call (sources and references shared by all systems are encoded once) and
    returns ({system: {direction: per-segment scores}}, signature), or (None, None) on ranks that get no results.
    `options` (a ScoringOptions) or its fields as keywords. When rescaling, each system also has
    ``<direction>_rescaled``; with long_source="windows", ``faithfulness_sentences`` and ``faithfulness_windows``
    (per segment, the sentences scored and the distinct windows); rescale="corpus" takes the reference points from
    every system's outputs together, so that the systems share one scale."""
    options = ScoringOptions.resolve(options, **keywords)
    check_corpus_request(corpus, options)
    names = list(corpus.systems)
    segments = len(corpus.systems[names[0]])
    result = scorer.score_directions(
        [hypothesis for name in names for hypothesis in corpus.systems[name]],
        references=corpus.references * len(names) if corpus.references is not None else None,
        sources=corpus.sources * len(names) if corpus.sources is not None else None,
        options=options,
    )
    if result is None:
        return None, None
    directions = [key for d in DIRECTIONS for key in (d + suffix for suffix in RESULT_SUFFIXES) if key in result]
    per_system = {
        name: {d: result[d][k * segments : (k + 1) * segments] for d in directions} for k, name in enumerate(names)
    }
    return per_system, result["signature"]


# ---------------------------------------------------------------------------------------------------------------------
# `datasets` corpora

_SCORERS_OF_THIS_PROCESS: dict[str, BARTScorer] = {}  # repr of the arguments -> the scorer


def score_dataset(
    dataset: Any,
    scorer: Any,
    *,
    predictions: str = "prediction",
    references: str | None = None,
    sources: str | None = None,
    prefix: str = "bartscore_",
    rows_per_batch: int = 1000,
    num_proc: int | None = None,
    options: ScoringOptions | None = None,
    **keywords: Any,
) -> Any:
    """Adds one column per direction (``bartscore_faithfulness``, ...) to a ``datasets.Dataset`` or
    ``IterableDataset`` with a batched ``map``: a Dataset is written batch by batch to datasets' cache files, an
    IterableDataset is scored lazily as it is iterated, so corpora larger than memory stream through.

    scorer: a ``BARTScorer``, or a dict of ``BARTScorer`` arguments (``{"checkpoint": "cnn"}``) from which each
    process builds its own: with ``num_proc=N`` (one process per GPU), process k uses ``cuda:k`` (modulo the GPU count)
    or the CPU. Under torchrun, give each rank its shard (``datasets.distributed.split_dataset_by_node``); a dict builds
    scorers with distributed=False, since each rank scores different rows.
    predictions, references, sources: column names (a reference cell may hold a list of references).
    options (a ScoringOptions) or its fields as keywords (directions, aggregation, prompt, prompt_side, batch_size,
    ...); rescaling takes a baseline file (rescale="baseline", baseline=...), which adds
    ``bartscore_<direction>_rescaled`` columns. rescale="corpus" is refused: each batch would get reference points of
    its own."""
    import datasets

    from .engine import BARTScorer

    options = ScoringOptions.resolve(options, **keywords)
    if isinstance(scorer, BARTScorer):
        if num_proc and num_proc > 1:
            raise InputError(
                "with num_proc > 1 pass the scorer as a dict of BARTScorer arguments, so that each "
                "process loads its own model on its own device"
            )
    elif not isinstance(scorer, dict):
        raise InputTypeError(f"scorer must be a BARTScorer or a dict of its arguments, got {describe(scorer)}")
    columns = dataset.column_names or []
    for argument, column in (("predictions", predictions), ("references", references), ("sources", sources)):
        if column is not None and columns and column not in columns:
            raise InputError(f"{argument}={column!r} is not a column of the dataset; its columns are {columns}")
    options.directions_for(has_references=references is not None, has_sources=sources is not None)
    if options.rescale == "corpus":
        raise InputError(
            "score_dataset scores the dataset in batches, and rescale='corpus' would give each batch reference points "
            "of its own; rescale with a baseline file (rescale='baseline', or baseline=)"
        )

    arguments = {
        "scorer": scorer,
        "predictions": predictions,
        "references": references,
        "sources": sources,
        "prefix": prefix,
        "options": options,
    }
    if isinstance(dataset, datasets.IterableDataset):
        return dataset.map(_score_rows, batched=True, batch_size=rows_per_batch, with_indices=True, fn_kwargs=arguments)
    if num_proc and num_proc > 1:
        _check_the_script_is_guarded(num_proc)
    # Forked workers inherit torch's thread pools mid-flight and can deadlock; spawned ones start clean.
    with _start_method("spawn" if num_proc else None):
        return dataset.map(
            _score_rows,
            batched=True,
            batch_size=rows_per_batch,
            num_proc=num_proc,
            with_indices=True,
            with_rank=bool(num_proc),
            fn_kwargs=arguments,
            desc="BARTScore",
        )


def _check_the_script_is_guarded(num_proc: int) -> None:
    """Refuses num_proc > 1 called from a script's top level outside ``if __name__ == "__main__":``. Each spawned
    worker runs the script again from the top; unguarded, that run calls score_dataset again, the worker dies at
    start-up, and datasets waits for it for minutes instead of failing."""
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    frame: types.FrameType | None = sys._getframe(1)
    line = None
    while frame is not None:  # the line of the script's own top level that led here, if it is running
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__":
            line = frame.f_lineno
        frame = frame.f_back
    if line is None or not script or not script.endswith(".py"):
        return  # from a function run later, a notebook or `python -c`: the workers do not run this call again
    try:
        with open(script, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return
    guards = [node for node in ast.walk(tree) if isinstance(node, ast.If) and _is_main_test(node.test)]
    if any(node.lineno < line <= (node.end_lineno or node.lineno) for node in guards):
        return
    raise InputError(
        f"score_dataset(num_proc={num_proc}) starts worker processes that run {script} again from the top, "
        f"and line {line} would call score_dataset again in each of them; put the script's code under "
        f'`if __name__ == "__main__":` (or pass num_proc=None)'
    )


def _is_main_test(test: ast.expr) -> bool:
    """Whether an if's test is ``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = {ast.dump(test.left), ast.dump(test.comparators[0])}
    return sides == {ast.dump(ast.Name("__name__", ast.Load())), ast.dump(ast.Constant("__main__"))}


def _score_rows(
    batch: Mapping[str, list[Any]],
    indices: Sequence[int],
    rank: int | None = None,
    *,
    scorer: BARTScorer | dict[str, Any],
    predictions: str,
    references: str | None,
    sources: str | None,
    prefix: str,
    options: ScoringOptions,
) -> dict[str, Any]:
    engine = scorer if not isinstance(scorer, dict) else _scorer_of_this_process(scorer, rank)
    try:
        result = engine.score_directions(
            batch[predictions],
            references=batch[references] if references else None,
            sources=batch[sources] if sources else None,
            options=options,
        )
    except InputError as error:  # named by the dataset's column and row, not the batch's argument
        columns = {"predictions": predictions, "references": references, "sources": sources}
        message = re.sub(
            r"\b(predictions|references|sources)\[(\d+)\]",
            lambda match: f"column {columns[match[1]]!r} at row {indices[int(match[2])]}",
            str(error),
        )
        raise type(error)(message) from None
    keys = [d + suffix for d in DIRECTIONS for suffix in RESULT_SUFFIXES]
    # A scorer of this process scores alone, so it has results.
    return {prefix + key: result[key] for key in keys if key in result}  # type: ignore[index, operator]


@contextlib.contextmanager
def _start_method(method: str | None) -> Iterator[None]:

    import multiprocess

    previous = multiprocess.get_start_method(allow_none=True)
    if method:
        multiprocess.set_start_method(method, force=True)
    try:
        yield
    finally:
        if method:
            multiprocess.set_start_method(previous, force=True)


def _scorer_of_this_process(arguments: Mapping[str, Any], rank: int | None) -> BARTScorer:
    import torch

    from .engine import BARTScorer

    arguments = dict(arguments)
    if "device" not in arguments and rank is not None and torch.cuda.is_available():
        arguments["device"] = f"cuda:{rank % torch.cuda.device_count()}"
    arguments.setdefault("distributed", False)
    key = repr(sorted(arguments.items()))
    if key not in _SCORERS_OF_THIS_PROCESS:
        _SCORERS_OF_THIS_PROCESS[key] = BARTScorer(**arguments)
    return _SCORERS_OF_THIS_PROCESS[key]
