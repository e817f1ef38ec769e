"""A corpus scored across a Ray cluster with Ray Data (``score_on_ray``), surviving a lost scorer or a lost driver:
every input row is scored and written once, with its id, and a run started again onto the same output folder scores
only the rows that are not in it yet.

The input is a table Ray Data reads (Parquet, JSON lines or CSV files, or a Ray Dataset that starts with such a read),
one row per segment, with an id column and the columns of a local table corpus (bart_score.corpora.table_files: a
source, references, one column per system). A pool of Ray actors each loads one scorer
(bart_score.scoring.engine.BARTScorer, built from the EngineOptions given) and scores batches of rows through
``score_corpus``, so that a batch's pairs are planned and deduplicated together. The output folder holds:

    scores/       Parquet files of the scored rows: the id column, ``<system>/<direction>`` (and the other result
                  fields of a local corpus, such as ``<system>/<direction>_rescaled``) and ``signature``, the signature
                  each row was scored under (its own number of references)
    checkpoint/   Ray Data's checkpoint: the ids of the rows written, committed after their file (CheckpointConfig)
    run.json      written once every row is in: the run's signature, that of ``score_corpus`` on the same rows and
                  settings with ``ray:<version>`` added, and the rows' count

What each kind of failure does: a batch whose scorer raises an error of the input's (an InputError and the like) fails
the run at once, naming the row (or the batch's rows); any other error, and a lost actor or node (its actor is
restarted), has the batch tried again up to ClusterOptions.retries times, then fails the run, naming the rows; no block
is ever dropped (Ray Data's max_errored_blocks is 0). A driver that dies leaves the rows whose files were committed;
running the same call again scores the rest. Everything about the input and the output folder is checked before any
scoring, and the output is checked at the end: each input id exactly once.

Ray is imported by ``score_on_ray`` alone (the ``ray`` extra), never by importing this module."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..baselines.files import load_baseline
from ..errors import InputError, InputTypeError, ScoringError
from ..inputs import counted
from ..messages import FileName, Mention
from ..options import ClusterOptions, EngineOptions, ScoringOptions
from ..scoring._progress import progress_bar
from ._cluster_input import _Columns, _columns, _Input, _input_source, _unreadable_as_input_error
from ._cluster_output import _OutputFolder
from ._cluster_pool import (
    SIGNATURE_COLUMN,
    _BatchScorer,
    _ids_said,
    _Placement,
    _placement,
    _said_as_ours,
    _Scoring,
    _scoring_remotely,
)
from ._cluster_ray import _connect, _footer_readers, _quiet_ray_data, _ray_lines_to_its_logs, _ray_modules, _stop

# How often the progress bar counts the rows committed to the checkpoint.
PROGRESS_SECONDS = 1.0


@dataclass(frozen=True)
class ClusterRun:
    """What score_on_ray did: output, the folder; rows, the input's rows; before, those already in the folder when the
    run started; written, those this run scored and wrote (rows - before); signature, the output's (run.json's)."""

    output: str
    rows: int
    before: int
    written: int
    signature: str


def score_on_ray(
    data: Any,
    output: str,
    *,
    id_column: str = "id",
    source_column: str | None = None,
    reference_columns: Sequence[str] | None = None,
    system_columns: Sequence[str] | None = None,
    engine: EngineOptions | None = None,
    options: ScoringOptions | None = None,
    cluster: ClusterOptions | None = None,
    **keywords: Any,
) -> ClusterRun:
    """Scores every row of `data` on a Ray cluster into the folder `output` (see the module's text), and returns what
    it did.

    data: a Parquet, JSON lines (.jsonl) or CSV file or folder of them, a list of such paths, or a Ray Dataset that
    starts with a read of them; paths are read on the cluster, so they, and `output`, must be reachable from every node
    and from this process under the same names (a shared file system). id_column: the column of unique ids (text or
    whole numbers) the rows are written and checkpointed by. source_column, reference_columns, system_columns: the
    columns' roles, by the defaults of a local table (bart_score.read_table_corpus). engine: the scorers'
    EngineOptions (each actor builds its own BARTScorer from them; on a cluster with GPUs each actor has one, unless
    device="cpu"). options (a ScoringOptions) or its fields as keywords, as score_corpus takes them (a baseline file is
    read here, and its reference points travel to the scorers); rescale="corpus" is refused, as each batch would have
    reference points of its own. cluster: where and how (ClusterOptions)."""
    options = ScoringOptions.resolve(options, **keywords)
    engine = EngineOptions.resolve(engine)
    cluster = cluster or ClusterOptions()
    _check_request(options, engine, id_column)
    if isinstance(options.baseline, str):  # read here, so that the nodes need not see the file
        options = options.replace(baseline=load_baseline(options.baseline))
    ray = _ray_modules(local=cluster.address is None)
    request = _Request(id_column, (source_column, reference_columns, system_columns), engine, options, cluster)
    table = _Input(ray, _input_source(ray, data))
    folder = _OutputFolder(output)
    checked = _checked_input(table, request) if table.files is not None else None  # before the cluster is reached
    connected = ray.is_initialized()
    rows = None  # to score, where known before the cluster is reached: its pool is sized for them
    if checked is not None:
        done = folder.committed_ids(checked[0].id)
        folder.check_ids(checked[1], done, checked[0].id)
        rows = len(checked[1]) - len(done)
    with _footer_readers():
        watcher = _connect(ray, cluster, rows) if not connected else None
        try:
            with _ray_lines_to_its_logs(ray):
                return _score(ray, table, checked or _checked_input(table, request), request, folder)
        finally:
            if not connected:
                ray.shutdown()
            if watcher is not None:
                _stop(watcher)


@dataclass(frozen=True)
class _Request:
    """A score_on_ray call's settings, checked: the id column, the given roles of the other columns (source,
    references, systems), and the options."""

    id_column: str
    roles: tuple[str | None, Sequence[str] | None, Sequence[str] | None]
    engine: EngineOptions
    options: ScoringOptions
    cluster: ClusterOptions


def _score(
    ray: ModuleType,
    table: _Input,
    checked: tuple[_Columns, list[Any]],
    request: _Request,
    folder: _OutputFolder,
) -> ClusterRun:
    """score_on_ray once connected, the input checked (its columns and ids): the output folder's rows and the
    cluster's resources checked, the scorer loaded once to check the options against it, then the missing rows
    scored, and the output checked and signed."""
    columns, ids = checked
    dataset = table.dataset(ray)
    done = folder.committed_ids(columns.id)
    folder.check_ids(ids, done, columns.id)
    placement = _placement(ray, request.engine, request.cluster, rows=len(ids) - len(done), rerun=bool(done))
    scoring = _scoring_remotely(ray, placement, request.engine, request.options, columns)
    folder.check_scoring(scoring, columns)
    if len(done) < len(ids):
        _score_missing(dataset, folder, columns, ids, request, placement, scoring)
    signature = folder.finish(ids, columns.id)
    return ClusterRun(folder.path, len(ids), len(done), len(ids) - len(done), signature)


def _check_request(options: ScoringOptions, engine: EngineOptions, id_column: str) -> None:
    """What the options and the id column's name can be refused for without the input or the cluster."""
    if options.rescale == "corpus":
        raise InputError(
            Mention("rescale", "corpus"),
            " takes reference points from the texts scored together, and a cluster scores its rows in batches",
            remedy=["rescale with a baseline file: ", Mention("rescale", "baseline")],
        )
    device = str(engine.device) if engine.device is not None else None
    if device is not None and device.startswith("cuda:"):
        raise InputError(
            Mention("device", device),
            " names one GPU, and on a cluster each scorer is given a GPU of its own",
            remedy=["give ", Mention("device", "cuda"), " or leave it out"],
        )
    if not isinstance(id_column, str) or not id_column:
        raise InputTypeError(Mention("id_column"), f" must be a column name, got {id_column!r}", value=id_column)
    if id_column == SIGNATURE_COLUMN:
        raise InputError(
            Mention("id_column", id_column),
            " is the name of the output's column of signatures",
            remedy="rename the input's id column",
        )


def _checked_input(table: _Input, request: _Request) -> tuple[_Columns, list[Any]]:
    """The input's columns by role, the directions they allow checked against the options, and its ids (each column
    of a role checked, and each text's length)."""
    with _unreadable_as_input_error(table.label):
        columns = _columns(table.label, table.names(), request.id_column, *request.roles)
        request.options.directions_for(has_references=bool(columns.references), has_sources=columns.source is not None)
        return columns, table.ids(columns, request.options.max_chars)


def _score_missing(
    dataset: Any,
    folder: _OutputFolder,
    columns: _Columns,
    ids: Sequence[Any],
    request: _Request,
    placement: _Placement,
    scoring: _Scoring,
) -> None:
    """The rows not yet in the folder, scored by the pool in batches of placement.rows_per_batch and written with
    their ids: Ray Data's checkpoint leaves out the rows already written, and commits each file's ids once the file is
    whole. Ray Data's progress bars and its lines on the terminal are off (its log file keeps them), and a bar of our
    own counts the rows committed (show_progress). A failure is raised as an error of the family (_said_as_ours), with
    the rows still missing counted."""
    from ray.data import ActorPoolStrategy
    from ray.data.checkpoint import CheckpointConfig

    cluster = request.cluster
    context = dataset.context
    context.checkpoint_config = CheckpointConfig(
        id_column=columns.id, checkpoint_path=folder.checkpoint, delete_checkpoint_on_success=False
    )
    context.max_errored_blocks = 0  # a failed block fails the run: never dropped
    context.actor_task_retry_on_errors = [ScoringError]  # tried again up to max_task_retries; the input's never
    context.raise_original_map_exception = True  # the batch's own error, not Ray's wrapper of it
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    context.enable_auto_log_stats = False
    with warnings.catch_warnings():
        # Ray Data 2.60 takes max_task_retries only among the remote arguments it has deprecated for 2.64.
        warnings.filterwarnings("ignore", message=".*ray_remote_args.* is deprecated")
        scored = dataset.repartition(target_num_rows_per_block=placement.rows_per_batch).map_batches(
            _BatchScorer,
            fn_constructor_kwargs={
                "engine": request.engine,
                "options": request.options.replace(show_progress=False),  # an actor's bar would go to Ray's logs
                "columns": columns,
                "names": scoring.columns,
            },
            # One batch at a time per actor, so that a killed driver loses the batches being scored, not a queue.
            compute=ActorPoolStrategy(size=placement.actors, max_tasks_in_flight_per_actor=1),
            batch_size=placement.rows_per_batch,
            batch_format="pyarrow",
            num_cpus=1,
            num_gpus=placement.gpus,
            max_task_retries=cluster.retries,
        )
    try:
        with _quiet_ray_data(), _RowProgress(folder, len(ids), enabled=request.options.show_progress):
            scored.write_parquet(folder.scores)
    except Exception as error:
        failure = _said_as_ours(error)
        if isinstance(failure, ScoringError):
            failure = _with_missing_rows(failure, folder, columns.id, ids)
        raise failure from None


class _RowProgress:
    """A bar of the rows in the output folder (on stderr, when enabled), counted from the checkpoint's committed files
    every PROGRESS_SECONDS by a thread of its own, and once more at the end."""

    def __init__(self, folder: _OutputFolder, rows: int, *, enabled: bool) -> None:
        self.folder, self.enabled = folder, enabled
        self.counted: dict[str, int] = {}  # a committed file's rows, by name: a committed file never changes
        self.bar = progress_bar(rows, enabled=enabled, unit=" rows")
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> _RowProgress:
        if self.enabled:
            self._count()
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        if self.enabled:
            self.thread.join()
            self._count()
        self.bar.close()

    def _watch(self) -> None:
        while not self.stop.wait(PROGRESS_SECONDS):
            self._count()

    def _count(self) -> None:
        import pyarrow.parquet

        for path in self.folder.committed_files():
            if path not in self.counted:
                try:
                    self.counted[path] = pyarrow.parquet.read_metadata(path).num_rows
                except (OSError, ValueError):  # removed or rewritten by Ray Data as it reads it: counted next time
                    continue
        self.bar.update(sum(self.counted.values()) - self.bar.n)


def _with_missing_rows(
    failure: ScoringError, folder: _OutputFolder, id_column: str, ids: Sequence[Any]
) -> ScoringError:
    """A failed run's error, with how many rows the folder holds and which are missing (which a rerun scores)."""
    done = folder.committed_ids(id_column)
    missing = [row_id for row_id in ids if row_id not in done]
    return ScoringError(
        *failure.parts,
        f"; {counted(len(missing), 'row')} {'is' if len(missing) == 1 else 'are'} not in ",
        FileName(folder.path),
        f" ({_ids_said(missing)}), {len(done)} are",
        remedy="run the same call again to score the missing rows",
    )
