"""The output folder of a run on Ray (bart_score.scaling.cluster): scores/, Ray Data's checkpoint/ and run.json,
checked before anything is read or scored (a new folder, or one of an earlier run of the same input and settings),
and at the end (each input row exactly once) before run.json is written."""

from __future__ import annotations

import collections
import dataclasses
import os
from collections.abc import Sequence
from typing import Any

from ..corpora._outputs import json_text, write_atomically
from ..corpora._reading import parse_json, read_bounded
from ..errors import InputError, InputTypeError, ScoringError
from ..inputs import counted
from ..messages import FileName, Mention
from ._cluster_input import _Columns, _unreadable_as_input_error
from ._cluster_pool import SIGNATURE_COLUMN, _ids_said, _merged_signature, _Scoring

SCORES, CHECKPOINT, RUN_FILE = "scores", "checkpoint", "run.json"
RUN_FORMAT = "bartscore-ray-scores"
# The suffix of the files of Ray Data's checkpoint that are not committed yet.
PENDING_SUFFIX = ".pending.parquet"


class _OutputFolder:
    """The output folder of a run (see the module's text), checked before anything is read or scored: a new or empty
    folder, or one holding this layout and nothing else."""

    def __init__(self, path: str) -> None:
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise InputTypeError(Mention("output"), f" must be a folder's path, got {path!r}")
        self.path = os.path.abspath(os.fspath(path))
        self.scores = os.path.join(self.path, SCORES)
        self.checkpoint = os.path.join(self.path, CHECKPOINT)
        self.run_file = os.path.join(self.path, RUN_FILE)
        if os.path.lexists(self.path) and not os.path.isdir(self.path):
            raise InputError(FileName(self.path), " is not a folder", remedy="give a folder for the scores")
        entries = sorted(os.listdir(self.path)) if os.path.isdir(self.path) else []
        strangers = [name for name in entries if name not in (SCORES, CHECKPOINT, RUN_FILE)]
        if strangers:
            raise InputError(
                FileName(self.path),
                f" holds {_ids_said(strangers)}, which a run's output does not",
                remedy="give a new or empty folder, or the folder of an earlier run",
            )
        self._refuse_links()
        self.run = self._run_record()

    def _refuse_links(self) -> None:
        """run.json, scores/, checkpoint/ and the files in them are never reached through a symbolic link: a link
        would have the run overwrite, create or read a file elsewhere."""
        places = [self.run_file, self.scores, self.checkpoint]
        for folder in (self.scores, self.checkpoint):
            if os.path.isdir(folder) and not os.path.islink(folder):
                places += [os.path.join(folder, name) for name in sorted(os.listdir(folder))]
        for place in places:
            if os.path.islink(place):
                raise InputError(
                    FileName(place),
                    " is a symbolic link, which a run's output never follows",
                    remedy="give a new or empty folder, or the folder of an earlier run as it wrote it",
                )

    def _run_record(self) -> dict[str, Any] | None:
        if not os.path.exists(self.run_file):
            return None
        record = parse_json(read_bounded(self.run_file, error=InputError).decode("utf-8", "replace"), self.run_file)
        if not isinstance(record, dict) or record.get("format") != RUN_FORMAT:
            raise InputError(FileName(self.run_file), f" is not a {RUN_FORMAT} file")
        return record

    def _files(self, folder: str) -> list[str]:
        if not os.path.isdir(folder):
            return []
        names = (name for name in os.listdir(folder) if name.endswith(".parquet") and not name.startswith((".", "_")))
        return sorted(os.path.join(folder, name) for name in names)

    def _column(self, files: Sequence[str], column: str) -> list[Any]:
        import pyarrow.dataset

        with _unreadable_as_input_error(self.path):
            dataset = pyarrow.dataset.dataset(list(files), format="parquet")
            return dataset.to_table(columns=[column]).column(0).to_pylist()

    def score_files(self) -> list[str]:
        """The files of scores/ that hold rows, but those a pending checkpoint names. Ray Data writes a batch's pending
        checkpoint, then its file of scores, then commits the checkpoint; a run killed in between leaves the file
        (whole or cut short), which the next run's recovery deletes, its rows scored again. Until then no check reads
        it: a file cut short is not a Parquet file."""
        pending = [
            os.path.basename(path)[: -len(PENDING_SUFFIX)]
            for path in self._files(self.checkpoint)
            if path.endswith(PENDING_SUFFIX)
        ]
        return [path for path in self._files(self.scores) if not os.path.basename(path).startswith(tuple(pending))]

    def committed_files(self) -> list[str]:
        """The checkpoint's committed files (not those pending: a pending file's rows are deleted and scored again by
        the next run)."""
        return [path for path in self._files(self.checkpoint) if not path.endswith(PENDING_SUFFIX)]

    def committed_ids(self, id_column: str) -> set[Any]:
        """The ids of the rows whose files Ray Data's checkpoint has committed."""
        files = self.committed_files()
        if files and any(id_column not in _schema_names(path) for path in files[:1]):
            raise InputError(
                FileName(self.path),
                f" holds the rows of another run, keyed by column {_schema_names(files[0])[0]!r}, not {id_column!r}",
                remedy="give another output folder, or the input and id column of that run",
            )
        return set(self._column(files, id_column)) if files else set()

    def check_ids(self, ids: Sequence[Any], done: set[Any], id_column: str) -> None:
        """The rows already written are rows of this input (an id the input lacks, in the checkpoint or in scores/,
        means another input's rows), and every row the checkpoint has committed is in scores/ (else the run would
        take it for scored, and never score it)."""
        files = self.score_files()
        if files and _schema_names(files[0])[:1] != [id_column]:
            raise InputError(
                FileName(self.scores),
                f" holds the scores of another run, keyed by column {_schema_names(files[0])[0]!r}, not {id_column!r}",
                remedy="give another output folder, or the input and id column of that run",
            )
        written = set(self._column(files, id_column)) if files else set()
        stray = (done | written).difference(ids)
        if stray:
            raise InputError(
                FileName(self.path),
                f" holds rows of another input: the id {sorted(stray, key=repr)[0]!r} is not in this one",
                remedy="give another output folder, or that run's input",
            )
        lost = [row_id for row_id in ids if row_id in done and row_id not in written]
        if lost:
            raise InputError(
                FileName(self.checkpoint),
                f" records {counted(len(lost), 'row')} as written ({_ids_said(lost)}) that {SCORES}/ does not hold",
                remedy=f"give another output folder, or take {CHECKPOINT}/ out to score every row again",
            )

    def check_scoring(self, scoring: _Scoring, columns: _Columns) -> None:
        """Rows already written were scored as this run would score them (the same signature, but for the number of
        references) into the same columns: another run's rows are refused, never merged."""
        files = self.score_files()
        if not files:
            return
        names = [columns.id, *scoring.columns, SIGNATURE_COLUMN]
        if _schema_names(files[0]) != names:
            raise InputError(
                FileName(self.path),
                f" holds the scores of another run, in columns {_schema_names(files[0])}; this run's are {names}",
                remedy="give another output folder, or the input columns of that run",
            )
        identity = dataclasses.replace(_merged_signature(self._column(files, SIGNATURE_COLUMN)), reference_counts=None)
        if identity.format() != scoring.identity:
            raise InputError(
                FileName(self.path),
                f" holds scores of other settings, {identity.format()!r}, where this run's are {scoring.identity!r}",
                remedy="give another output folder, or the settings of that run",
            )

    def finish(self, ids: Sequence[Any], id_column: str) -> str:
        """The output checked, each input id exactly once, then signed: run.json written (if it says something new)
        with the rows' signature; returns that signature."""
        files = self.score_files()
        written = collections.Counter(self._column(files, id_column))
        twice = [row_id for row_id, count in written.items() if count > 1]
        missing = [row_id for row_id in ids if row_id not in written]
        stray = sorted(set(written).difference(ids), key=repr)
        found = [
            f"{what} ({_ids_said(which)})"
            for what, which in (
                ("rows given twice", twice),
                ("rows missing", missing),
                ("rows not in the input", stray),
            )
            if which
        ]
        if found:
            raise ScoringError(FileName(self.path), f" does not hold each input row once: {'; '.join(found)}")
        signature = _merged_signature(self._column(files, SIGNATURE_COLUMN)).format()
        record = {"format": RUN_FORMAT, "signature": signature, "rows": len(ids), "id_column": id_column}
        if record != self.run:
            write_atomically(self.run_file, lambda handle: handle.write(json_text(record, indent=1) + "\n"))
            self.run = record
        return signature


def _schema_names(path: str) -> list[str]:
    import pyarrow.parquet

    with _unreadable_as_input_error(path):
        return list(pyarrow.parquet.read_schema(path).names)
