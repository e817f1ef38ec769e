"""The input of a run on Ray (bart_score.scaling.cluster): files or a Ray Dataset, read here for their columns and ids
before the cluster is reached, and every check of them (formats, the columns' roles and types, ids, texts' lengths,
metadata and JSON lines' sizes) that Ray Data would otherwise fail on, or take too much memory over, on the cluster."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..corpora._reading import check_input_file
from ..corpora.table_files import _check_given_columns, _check_roles, _role_columns
from ..errors import InputError, InputTypeError, first_line
from ..inputs import counted, describe
from ..messages import FileName, Mention
from ..options import too_long_error

if TYPE_CHECKING:
    import pyarrow


# The input formats, by file name ending: the Ray Data reader and the pyarrow dataset format of each.
READERS = {
    ".parquet": ("read_parquet", "parquet"),
    ".jsonl": ("read_json", "json"),
    ".csv": ("read_csv", "csv"),
}
# The most bytes of key-value metadata (the schema's) of one Parquet file of the input. Ray Data copies a file's
# schema, metadata and all, into every block it reads, and 50 MB of it on 6 rows took 4.56 GB and 97 s; pandas and
# datasets write a few KiB.
MAX_TABLE_METADATA_BYTES = 1 << 20
# The most bytes of one line of a JSON-lines input, which pyarrow's reader takes in one block (a 500 MB line ended in
# a failed allocation of 500 MB under 3 GB of address space): 16 texts of max_chars's default 1,000,000 characters of
# 4 bytes each.
MAX_JSON_LINE_BYTES = 64 << 20


@dataclass(frozen=True)
class _Columns:
    """The input's columns by role: the ids, the source (None: none), the references, the systems."""

    id: str
    source: str | None
    references: tuple[str, ...]
    systems: tuple[str, ...]


def _input_source(ray: ModuleType, data: Any) -> Any:
    """A Ray Dataset as it is (checked once connected), or (ending, paths, files) for files: each path there, each
    file's name ending in one format's (READERS), every file of one format."""
    if isinstance(data, ray.data.Dataset):
        return data
    paths = [data] if isinstance(data, (str, os.PathLike)) else data
    if not isinstance(paths, (list, tuple)) or not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise InputTypeError(
            Mention("data"), f" must be a path, a list of paths or a Ray Dataset, got {describe(data)}"
        )
    files: dict[str, list[str]] = {}  # ending -> the files of that format
    for path in map(os.fspath, paths):
        for name in _files_under(path):
            ending = os.path.splitext(name)[1].lower()
            if ending not in READERS:
                raise InputError(
                    FileName(name), f" is not a table Ray Data reads here (the endings are {', '.join(READERS)})"
                )
            files.setdefault(ending, []).append(os.path.abspath(name))
    if len(files) > 1:
        shown = " and ".join(repr(names[0]) for names in files.values())
        raise InputError(f"the input mixes formats ({shown})", remedy="give files of one format")
    ending, names = next(iter(files.items()))
    return ending, [os.fspath(path) for path in paths], names


def _files_under(path: str) -> list[str]:
    """The files a path gives Ray Data: itself, or a folder's files (hidden ones, and those starting with _, apart, as
    Ray Data leaves them); a missing path or a folder without files is refused."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise InputError(
            f"cannot read {path}: {'no such file or folder' if not os.path.lexists(path) else 'not a file'}"
        )
    files = [
        os.path.join(folder, name)
        for folder, subfolders, names in os.walk(path)
        for name in names
        if not name.startswith((".", "_"))
    ]
    if not files:
        raise InputError(FileName(path), " is a folder without files")
    return sorted(files)


class _Input:
    """The input, and how messages name it: files (their format's ending and their paths), read here as a pyarrow
    dataset for their column names and ids, before the cluster is reached, and by Ray Data on the cluster to be
    scored; or a Ray Dataset, copied so that the run's settings stay its own, which must start with a read of files,
    as Ray Data's checkpoint needs to leave out the rows already written."""

    def __init__(self, ray: ModuleType, source: Any) -> None:
        self.files: tuple[str, list[str]] | None = None
        self.given: Any = None
        if isinstance(source, tuple):
            ending, paths, files = source
            self.files = ending, files
            more = f" (and {counted(len(paths) - 1, 'more path')})" if len(paths) > 1 else ""
            self.label = f"{paths[0]}{more}"
            self.local: Any = _read_locally(ending, files, self.label)
            return
        _check_checkpointable(source)
        self.given = type(source).copy(source, _deep_copy=True)
        self.local = None
        self.label = "the dataset"

    def dataset(self, ray: ModuleType) -> Any:
        """The Ray Dataset to score (a new one at each call, for settings of its own)."""
        if self.files is None:
            return type(self.given).copy(self.given, _deep_copy=True)
        ending, files = self.files
        # JSON lines too are read by pyarrow's JSON reader (read_json without lines=True), into Arrow blocks as Ray
        # Data's checkpoint filter needs them (with lines=True, pandas reads them into pandas blocks).
        return getattr(ray.data, READERS[ending][0])(files)

    def names(self) -> list[str]:
        return list(self.schema().names)

    def schema(self) -> Any:
        return self.local.schema if self.local is not None else self.given.schema()

    def ids(self, columns: _Columns, max_chars: int) -> list[Any]:
        """The rows' ids in input order, each text or a whole number, none missing and none twice (the first id given
        twice is named, with both its rows); every column of a role holding text (and references lists of text), no
        text of more than max_chars characters."""
        _check_column_types(self.label, self.schema(), columns)
        ids: list[Any] = []
        first_row: dict[Any, int] = {}
        texts = [name for name in (columns.source, *columns.references, *columns.systems) if name is not None]
        for batch in self._batches([columns.id, *texts]):
            before = len(ids)
            batch_ids = batch.column(columns.id).to_pylist()
            for name in texts:
                _check_lengths(batch.column(name), batch_ids, name, max_chars)
            for row_id in batch_ids:
                ids.append(row_id)
                if row_id is None:
                    raise InputError(f"{self.label} row {len(ids)} has no id (column {columns.id!r} is empty there)")
                if isinstance(row_id, bool) or not isinstance(row_id, (str, int)):
                    raise InputError(
                        f"{self.label} row {len(ids)}: ",
                        Mention("id_column", columns.id),
                        f" holds {row_id!r} ({describe(row_id)}) there, and ids are text or whole numbers",
                    )
                if row_id in first_row:
                    raise InputError(
                        f"{self.label} gives the id {row_id!r} twice, to rows {first_row[row_id]} and {len(ids)}; "
                        f"each row needs an id of its own"
                    )
                first_row[row_id] = len(ids)
            assert len(ids) == before + batch.num_rows
        if not ids:
            raise InputError(f"{self.label} has no rows")
        return ids

    def _batches(self, names: Sequence[str]) -> Iterable[pyarrow.RecordBatch]:
        if self.local is not None:
            return self.local.to_batches(columns=list(names))
        scan = type(self.given).copy(self.given, _deep_copy=True)
        scan.context.execution_options.preserve_order = True
        return scan.select_columns(list(names)).iter_batches(batch_format="pyarrow", batch_size=None)


def _read_locally(ending: str, files: Sequence[str], label: str) -> Any:
    """The input files as a pyarrow dataset, read here as Ray Data reads them on the cluster: Parquet files (each
    with at most MAX_TABLE_METADATA_BYTES of metadata), CSV files, and JSON lines read whole by pyarrow's JSON reader
    in blocks that hold the longest line (its dataset reader reads a first row longer than its block of 1 MiB as a
    row without values, and every other row of its block too; its reader refuses a row over two blocks). What
    pyarrow cannot read is an InputError naming the input."""
    import pyarrow
    import pyarrow.dataset
    import pyarrow.json

    with _unreadable_as_input_error(label):
        if ending == ".jsonl":
            for path in files:
                check_input_file(path)
            tables = [
                pyarrow.json.read_json(path, read_options=pyarrow.json.ReadOptions(block_size=_block_size(path)))
                for path in files
            ]
            return pyarrow.dataset.dataset(pyarrow.concat_tables(tables) if len(tables) > 1 else tables[0])
        if ending == ".parquet":
            for path in files:
                _check_table_metadata(path)
        return pyarrow.dataset.dataset(list(files), format=READERS[ending][1])


def _block_size(path: str) -> int:
    """A block of pyarrow's JSON reader that holds the longest line of a file, and at least its default 1 MiB (found
    reading the file a MiB at a time); a line of more than MAX_JSON_LINE_BYTES is refused, naming it, and so is a
    file whose first value is not an object (pyarrow 26's reader crashes the process on a first value of null)."""
    longest = length = 0
    number = 1
    first = b""
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            first = first or chunk.lstrip(b" \t\r\n")[:1]
            if first not in (b"", b"{"):
                raise InputError(FileName(path), " does not start with a JSON object: each line must hold one")
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                length += (end if end >= 0 else len(chunk)) - start
                if length > MAX_JSON_LINE_BYTES:
                    raise InputError(
                        FileName(path),
                        f" line {number} holds more than {MAX_JSON_LINE_BYTES:,} bytes, the most a row may hold here",
                        remedy="write the table as Parquet",
                    )
                if end < 0:
                    break
                longest, length, start, number = max(longest, length), 0, end + 1, number + 1
    return max(1 << 20, longest, length) + 1


@contextlib.contextmanager
def _unreadable_as_input_error(label: str) -> Iterator[None]:
    import pyarrow

    try:
        yield
    except (pyarrow.ArrowException, OSError, UnicodeError) as error:  # ArrowIOError is an OSError; a column's name
        # that is not UTF-8 fails as pyarrow decodes it
        raise InputError(f"cannot read {label}: {first_line(error)}") from None


def _check_table_metadata(path: str) -> None:
    import pyarrow.parquet

    metadata = pyarrow.parquet.read_schema(path).metadata or {}
    size = sum(len(key) + len(value) for key, value in metadata.items())
    if size > MAX_TABLE_METADATA_BYTES:
        raise InputError(
            FileName(path),
            f" holds {size:,} bytes of schema metadata, over the {MAX_TABLE_METADATA_BYTES:,} a table may hold here",
            remedy="write the table without it (pyarrow: table.replace_schema_metadata())",
        )


def _check_column_types(label: str, schema: Any, columns: _Columns) -> None:
    """Each column of a role holds values of its kind, by the schema's types (where they are pyarrow's): text in the
    source and system columns, text or lists of text in the reference columns, text or whole numbers in the id
    column (a column of nothing but empty cells passes, for the rows to be refused one by one)."""
    import pyarrow

    def text(kind: Any) -> bool:
        return bool(pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind) or pyarrow.types.is_null(kind))

    def texts(kind: Any) -> bool:
        listed = pyarrow.types.is_list(kind) or pyarrow.types.is_large_list(kind)
        return text(kind) or (listed and text(kind.value_type))

    kinds = dict(zip(schema.names, schema.types))
    expected = [(columns.id, lambda kind: text(kind) or pyarrow.types.is_integer(kind), "text or whole numbers")]
    expected += [(name, text, "text") for name in (columns.source, *columns.systems) if name is not None]
    expected += [(name, texts, "text or lists of text") for name in columns.references]
    for name, fits, kind_said in expected:
        kind = kinds[name]
        if isinstance(kind, pyarrow.DataType) and not fits(kind):
            raise InputError(f"{label} column {name!r} holds values of type {kind}, where it takes {kind_said}")


def _check_lengths(values: Any, ids: Sequence[Any], column: str, max_chars: int) -> None:
    """No text of a batch's column (a pyarrow array, its lists' texts too) longer than max_chars characters."""
    import pyarrow
    import pyarrow.compute

    rows = None
    if pyarrow.types.is_list(values.type) or pyarrow.types.is_large_list(values.type):
        rows, values = pyarrow.compute.list_parent_indices(values), pyarrow.compute.list_flatten(values)
    if not (pyarrow.types.is_string(values.type) or pyarrow.types.is_large_string(values.type)) or not len(values):
        return
    lengths = pyarrow.compute.utf8_length(values)
    longest = pyarrow.compute.max(lengths).as_py()
    if longest is not None and longest > max_chars:
        at = pyarrow.compute.index(lengths, longest).as_py()
        row = rows[at].as_py() if rows is not None else at
        raise too_long_error(f"row {ids[row]!r}, column {column!r}", longest, max_chars)


def _check_checkpointable(dataset: Any) -> None:
    """A Ray Dataset whose every branch starts with a read of files, as Ray Data's planner requires of a Dataset it
    checkpoints (without one it would only warn, and score every row again on a rerun)."""
    from ray.data._internal.logical.operators import Read, ReadFiles

    def read_on_every_path(operator: Any) -> bool:
        return isinstance(operator, (Read, ReadFiles)) or (
            bool(operator.input_dependencies)
            and all(read_on_every_path(before) for before in operator.input_dependencies)
        )

    if not read_on_every_path(dataset._logical_plan.dag):
        raise InputError(
            Mention("data"),
            " is a Ray Dataset that does not start with a read of files, the only kind Ray Data can checkpoint",
            remedy="write it to Parquet files and give those",
        )


def _columns(
    label: str,
    names: Sequence[str],
    id_column: str,
    source_column: str | None,
    reference_columns: Sequence[str] | None,
    system_columns: Sequence[str] | None,
) -> _Columns:
    """The columns' roles, as a local table's (bart_score.corpora.table_files), with the id column required."""
    if id_column not in names:
        raise InputError(
            Mention("id_column", id_column),
            f" is no column of {label}, whose columns are {list(names)}",
            remedy="name its column of unique row ids",
        )
    _check_given_columns(label, names, source_column, reference_columns, system_columns)
    source_given = source_column is not None
    source = source_column or "source"
    references, systems = _role_columns(names, source, source_given, id_column, reference_columns, system_columns)
    _check_roles(label, set(names), source, source_given, id_column, references, systems)
    if source not in names and not references:
        raise InputError(
            f"{label} needs a {source!r} column and/or reference columns (reference, references or reference_1, "
            f"reference_2, ...); its columns are {list(names)}"
        )
    if not systems:
        raise InputError(
            f"{label} has no system column: every column but {source!r}, {id_column!r} and the references holds one "
            f"system's outputs"
        )
    return _Columns(id_column, source if source in names else None, tuple(references), tuple(systems))
