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

import collections
import contextlib
import copy
import dataclasses
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..baselines.files import load_baseline
from ..corpora.corpus import Corpus, score_corpus
from ..corpora.outputs import json_text, write_atomically
from ..corpora.reading import check_input_file, parse_json, read_bounded
from ..corpora.table_files import _check_given_columns, _check_roles, _role_columns
from ..errors import BARTScoreError, InputError, InputTypeError, MissingExtraError, ScoringError, first_line
from ..inputs import check_text, counted, describe
from ..messages import FileName, Mention, Part
from ..options import (
    BATCHES_PER_ACTOR,
    BATCHES_PER_ACTOR_TARGET,
    MAX_AUTO_BATCH_ROWS,
    ClusterOptions,
    EngineOptions,
    ScoringOptions,
    too_long_error,
)
from ..scoring.progress import progress_bar
from ..scoring.signature import Signature

if TYPE_CHECKING:
    import pyarrow

    from ..scoring.engine import BARTScorer

RAY_EXTRA = 'pip install "bartscore[ray]"'
SCORES, CHECKPOINT, RUN_FILE = "scores", "checkpoint", "run.json"
RUN_FORMAT = "bartscore-ray-scores"
SIGNATURE_COLUMN = "signature"
# The input formats, by file name ending: the Ray Data reader and the pyarrow dataset format of each.
READERS = {
    ".parquet": ("read_parquet", "parquet"),
    ".jsonl": ("read_json", "json"),
    ".csv": ("read_csv", "csv"),
}
# Ray Data reads a table with one task and writes with another besides the scorers, and a rerun adds its checkpoint
# filter (an actor of one CPU): a pool that leaves them no CPU waits forever.
READ_AND_WRITE_CPUS = 2
CHECKPOINT_FILTER_CPUS = 1
SHOWN_IDS = 3
# How long a cluster's address is given to answer, as Ray, before the run is refused.
PROBE_SECONDS = 10
# The most bytes of key-value metadata (the schema's) of one Parquet file of the input. Ray Data copies a file's
# schema, metadata and all, into every block it reads, and 50 MB of it on 6 rows took 4.56 GB and 97 s; pandas and
# datasets write a few KiB.
MAX_TABLE_METADATA_BYTES = 1 << 20
# The most bytes of one line of a JSON-lines input, which pyarrow's reader takes in one block (a 500 MB line ended in
# a failed allocation of 500 MB under 3 GB of address space): 16 texts of max_chars's default 1,000,000 characters of
# 4 bytes each.
MAX_JSON_LINE_BYTES = 64 << 20
# The environment variable that marks every process of a local cluster the run starts (its value is the run's own),
# by which a watcher of the driver ends them if the driver dies: Ray's agents otherwise outlive their raylet by a
# minute, trying to tell the dead cluster so.
LOCAL_CLUSTER_MARK = "BARTSCORE_LOCAL_RAY_CLUSTER"
# Ray Data reads the footers of Parquet files (the input's, and on a rerun its checkpoint's) with a pool of actors, 32
# by default, each a process of its own: starting them took most of a rerun's 29.4 s to load a checkpoint of 3 tiny
# files on two busy cores. A few read thousands of footers in seconds.
FOOTER_READERS_VARIABLE = "RAY_DATA_PARQUET_FOOTER_NUM_ACTORS"
FOOTER_READERS = 2
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


@dataclass(frozen=True)
class _Columns:
    """The input's columns by role: the ids, the source (None: none), the references, the systems."""

    id: str
    source: str | None
    references: tuple[str, ...]
    systems: tuple[str, ...]


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


@contextlib.contextmanager
def _footer_readers() -> Iterator[None]:
    """RAY_DATA_PARQUET_FOOTER_NUM_ACTORS at FOOTER_READERS for the run, unless it is set (inherited by a local
    cluster's processes, and read by this driver as it plans a read of Parquet files)."""
    given = os.environ.get(FOOTER_READERS_VARIABLE)
    if given is None:
        os.environ[FOOTER_READERS_VARIABLE] = str(FOOTER_READERS)
    try:
        yield
    finally:
        if given is None:
            os.environ.pop(FOOTER_READERS_VARIABLE, None)


@dataclass(frozen=True)
class _Request:
    """A score_on_ray call's settings, checked: the id column, the given roles of the other columns (source,
    references, systems), and the options."""

    id_column: str
    roles: tuple[str | None, Sequence[str] | None, Sequence[str] | None]
    engine: EngineOptions
    options: ScoringOptions
    cluster: ClusterOptions


@dataclass(frozen=True)
class _Placement:
    """Where the scorers run: how many actors, the GPUs of each (0 or 1), and the rows of a batch."""

    actors: int
    gpus: int
    rows_per_batch: int


@dataclass(frozen=True)
class _Scoring:
    """What a scorer of these options gives, found before any row is scored: the signature of its scores without the
    number of references (Signature.reference_counts None), and the output's columns after the id."""

    identity: str
    columns: tuple[str, ...]


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


# -- checks before connecting --------------------------------------------------------------------------------------


def _check_request(options: ScoringOptions, engine: EngineOptions, id_column: str) -> None:
    """What the options and the id column's name can be refused for without the input or the cluster."""
    if options.rescale == "corpus":
        raise InputError(
            Mention("rescale", "corpus"),
            " takes reference points from the texts scored together, and a cluster scores the rows in batches, each "
            "of which would have reference points of its own",
            option="rescale",
            value="corpus",
            remedy=["rescale with a baseline file: ", Mention("rescale", "baseline")],
        )
    device = str(engine.device) if engine.device is not None else None
    if device is not None and device.startswith("cuda:"):
        raise InputError(
            Mention("device", device),
            " names one GPU, and on a cluster each scorer is given a GPU of its own",
            option="device",
            value=device,
            remedy=["give ", Mention("device", "cuda"), " or leave it out"],
        )
    if not isinstance(id_column, str) or not id_column:
        raise InputTypeError(
            Mention("id_column"), f" must be a column name, got {id_column!r}", option="id_column", value=id_column
        )
    if id_column == SIGNATURE_COLUMN:
        raise InputError(
            Mention("id_column", id_column),
            " is the name of the output's column of signatures",
            option="id_column",
            value=id_column,
            remedy="rename the input's id column",
        )


def _ray_modules(local: bool) -> ModuleType:
    """The ray package with ray.data loaded, or MissingExtraError naming the extra. For a local cluster, Ray is told
    (where this import is its first) to take the loopback address as the node's, so that every server the cluster
    starts listens on 127.0.0.1 alone rather than on every interface; a driver joining a cluster elsewhere keeps the
    node's own address, which the cluster's workers reach it by."""
    if local:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
        import ray.data
    except ImportError:
        raise MissingExtraError(
            "scoring on a Ray cluster needs Ray Data (ray[data]), which is not installed", remedy=RAY_EXTRA
        ) from None
    return ray


def _input_source(ray: ModuleType, data: Any) -> Any:
    """A Ray Dataset as it is (checked once connected), or (ending, paths, files) for files: each path there, each
    file's name ending in one format's (READERS), every file of one format."""
    if isinstance(data, ray.data.Dataset):
        return data
    paths = [data] if isinstance(data, (str, os.PathLike)) else data
    if not isinstance(paths, (list, tuple)) or not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise InputTypeError(
            Mention("data"),
            f" must be a path, a list of paths or a Ray Dataset, got {describe(data)}",
            option="data",
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


# -- the cluster -----------------------------------------------------------------------------------------------------


def _connect(ray: ModuleType, cluster: ClusterOptions, rows: int | None) -> subprocess.Popen[bytes] | None:
    """Joins the cluster at cluster.address (never starting one), or starts a local one for the run (see
    _start_local_cluster). An address is first asked, within PROBE_SECONDS, whether Ray answers there: one that
    cannot be reached, or where something else listens, is one ScoringError, rather than Ray's minutes of retries
    and warnings. Returns the local cluster's watcher (None when joining)."""
    if cluster.address is None:
        return _start_local_cluster(ray, cluster, rows)
    try:
        if cluster.address != "auto":  # Ray finds a cluster of this machine's itself, or says at once there is none
            _probe(cluster.address)
        ray.init(address=cluster.address, log_to_driver=False, logging_level=logging.ERROR)
    except BARTScoreError:
        raise
    except Exception as error:  # OSError from the probe; ConnectionError, RuntimeError, ... from Ray, by address kind
        reason = error.strerror if isinstance(error, OSError) and error.strerror else first_line(error)
        raise _unreachable(cluster.address, reason) from None
    return None


def _unreachable(address: str, reason: str) -> ScoringError:
    return ScoringError(
        f"cannot reach the Ray cluster at {address!r}: {reason}",
        remedy=["start it, or give the address of a running one as ", Mention("address")],
    )


def _probe(address: str) -> None:
    """Connects to a "host:port" (a head's GCS) or "ray://host:port" (a Ray Client server) and asks it what only Ray
    answers (the cluster's id; a ping), all within PROBE_SECONDS; refused with a ScoringError otherwise."""
    import grpc
    from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc, ray_client_pb2, ray_client_pb2_grpc

    deadline = time.monotonic() + PROBE_SECONDS
    client = address.startswith("ray://")
    host, _, port = address.removeprefix("ray://").rpartition(":")
    socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_SECONDS).close()
    token = _token_metadata()
    with grpc.insecure_channel(f"{host}:{port}") as channel:
        try:
            if client:
                ping = ray_client_pb2.ClusterInfoRequest(type=ray_client_pb2.ClusterInfoType.PING)  # type: ignore[attr-defined]
                ray_client_pb2_grpc.RayletDriverStub(channel).ClusterInfo(
                    ping, timeout=deadline - time.monotonic(), metadata=token
                )
            else:
                request = gcs_service_pb2.GetClusterIdRequest()  # type: ignore[attr-defined]
                gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel).GetClusterId(
                    request, timeout=deadline - time.monotonic(), metadata=token
                )
        except grpc.RpcError as error:
            code = error.code()
            if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
                # Ray is there, and refuses this driver (where ray.init would retry, a line a second, for a minute).
                refused = "this process's authentication token" if token else "a driver without an authentication token"
                raise ScoringError(
                    f"the Ray cluster at {address!r} refuses {refused}",
                    remedy="set RAY_AUTH_MODE=token, with the cluster's token in RAY_AUTH_TOKEN, in the file "
                    "RAY_AUTH_TOKEN_PATH names, or in ~/.ray/auth_token",
                ) from None
            server = "a Ray Client server" if client else "a Ray cluster's head"
            how = f"within {PROBE_SECONDS} s" if code == grpc.StatusCode.DEADLINE_EXCEEDED else f"({code.name.lower()})"
            raise _unreachable(address, f"what listens there does not answer as {server} {how}") from None


def _token_metadata() -> tuple[tuple[str, str], ...]:
    """The authentication header Ray would send from this process (where RAY_AUTH_MODE=token, its token, from
    RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH's file or ~/.ray/auth_token), as gRPC metadata; none without."""
    try:
        from ray._raylet import AuthenticationTokenLoader  # type: ignore[attr-defined]

        loader = AuthenticationTokenLoader.instance()
        if not loader.has_token():  # none, or token authentication not on here (RAY_AUTH_MODE)
            return ()
        return tuple(loader.get_token_for_http_header().items())
    except (ImportError, AttributeError, TypeError):  # a Ray without token authentication
        return ()


def _start_local_cluster(ray: ModuleType, cluster: ClusterOptions, rows: int | None) -> subprocess.Popen[bytes] | None:
    """A local cluster for the run: logical CPUs enough for the pool (no more scorers than the table's rows need),
    the reads, the writes and the checkpoint filter (more than this machine's cores if need be: they are Ray's units
    of scheduling, not threads), no dashboard, and Ray's own logging off the terminal. Each of its processes
    carries LOCAL_CLUSTER_MARK in its environment, and a watcher process (returned; None where there is no /proc to
    find them in, see _WATCHER) ends them once this process's end closes the watcher's stdin, whether the run ends or
    the driver is killed."""
    actors = cluster.actors or 1
    if rows is not None:
        actors = _sized(actors, rows, cluster.rows_per_batch)[0]
    cpus = max(os.cpu_count() or 1, actors + READ_AND_WRITE_CPUS + CHECKPOINT_FILTER_CPUS)
    mark = uuid.uuid4().hex
    watcher = None
    if os.path.isdir("/proc"):
        watcher = subprocess.Popen(
            [sys.executable, "-c", _WATCHER, LOCAL_CLUSTER_MARK, mark], stdin=subprocess.PIPE, env=_without_mark()
        )
    os.environ[LOCAL_CLUSTER_MARK] = mark  # inherited by the cluster's servers, and through them by its workers
    try:
        ray.init(
            num_cpus=cpus,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    except BaseException:
        if watcher is not None:
            _stop(watcher)
        raise
    finally:
        del os.environ[LOCAL_CLUSTER_MARK]  # the processes this one starts later are none of the cluster's
    return watcher


def _stop(watcher: subprocess.Popen[bytes]) -> None:
    """The run is over: the watcher, its stdin closed, ends what is left of the local cluster, and exits."""
    assert watcher.stdin is not None
    watcher.stdin.close()
    watcher.wait()


def _without_mark() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != LOCAL_CLUSTER_MARK}


# The watcher of a local cluster, a process of its own (argv: the mark's name and value). Once a second, until its
# stdin closes (when the driver ends, in any way), it notes the cluster's processes: the driver's children that carry
# the mark, and every process they start, and theirs (Ray's agents rewrite their environment with their titles, so
# the mark alone would lose them). Then it kills with SIGKILL those still alive (the same process: its start time
# unchanged), any process they started since, and any process that carries the mark; never another process of the
# driver's, nor another run's cluster.
_WATCHER = """
import os, signal, sys, threading

def table():
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
            found[int(pid)] = (int(fields[1]), fields[19])
        except (OSError, IndexError, ValueError):
            pass
    return found

def marked(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return mark in handle.read().split(b"\\0")
    except OSError:
        return False

def note(now, every):
    for pid, (parent, started) in now.items():
        if pid not in cluster and (parent == driver or every) and pid != os.getpid() and marked(pid):
            cluster[pid] = started
    grown = True
    while grown:
        known = {pid for pid, started in cluster.items() if now.get(pid, (0, None))[1] == started}
        children = {pid: now[pid][1] for pid in now if now[pid][0] in known and pid not in cluster}
        cluster.update(children)
        grown = bool(children)

mark = (sys.argv[1] + "=" + sys.argv[2]).encode()
driver = os.getppid()
cluster = {}
ended = threading.Event()
threading.Thread(target=lambda: (sys.stdin.buffer.read(), ended.set()), daemon=True).start()
while not ended.wait(1.0):
    note(table(), every=False)
now = table()
note(now, every=True)
for pid, started in cluster.items():
    if now.get(pid, (0, None))[1] == started:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
"""


def _placement(
    ray: ModuleType, engine: EngineOptions, cluster: ClusterOptions, *, rows: int, rerun: bool
) -> _Placement:
    """The pool the cluster can hold for `rows` rows to score: one actor per GPU (each with its GPU) or the actors
    asked for, no more than the batches need (_sized), and the CPUs they, the reads and writes, and on a rerun the
    checkpoint filter need; refused rather than left waiting."""
    resources = ray.cluster_resources()
    cpus, gpus = int(resources.get("CPU", 0)), int(resources.get("GPU", 0))
    device = str(engine.device) if engine.device is not None else None
    if device == "cuda" and not gpus:
        raise InputError(
            Mention("device", "cuda"),
            " asks for GPUs, and the Ray cluster has none",
            option="device",
            value="cuda",
            remedy="leave it out to score on the CPUs",
        )
    on_gpus = gpus > 0 and device in (None, "cuda")
    actors = cluster.actors or (gpus if on_gpus else 1)
    if on_gpus and actors > gpus:
        raise InputError(
            Mention("actors", actors),
            f" need a GPU each, and the Ray cluster has {counted(gpus, 'GPU')}",
            option="actors",
            value=actors,
            remedy=f"ask for {gpus} at most",
        )
    actors, rows_per_batch = _sized(actors, rows, cluster.rows_per_batch)
    needed = actors + READ_AND_WRITE_CPUS + (CHECKPOINT_FILTER_CPUS if rerun else 0)
    if cpus < needed:
        uses = f"{READ_AND_WRITE_CPUS} for reading and writing" + (", 1 for the checkpoint filter" if rerun else "")
        raise InputError(
            Mention("actors", actors),
            f" take a CPU each, and with {uses} the run needs {needed}; the Ray cluster has {cpus}",
            option="actors",
            value=actors,
            remedy=f"ask for {max(cpus - needed + actors, 0)} actors at most, or give the cluster more CPUs",
        )
    return _Placement(actors, 1 if on_gpus else 0, rows_per_batch)


def _sized(actors: int, rows: int, rows_per_batch: int | None) -> tuple[int, int]:
    """(actors, rows per batch) for `rows` rows and the actors asked for: the batches BATCHES_PER_ACTOR_TARGET per
    actor, of at most MAX_AUTO_BATCH_ROWS rows, unless rows_per_batch is given; then the actors cut to one per
    BATCHES_PER_ACTOR batches, so that each gets several and none loads a model for nothing."""
    if rows_per_batch is None:
        rows_per_batch = min(MAX_AUTO_BATCH_ROWS, max(1, -(-rows // (actors * BATCHES_PER_ACTOR_TARGET))))
    batches = -(-max(rows, 1) // rows_per_batch)
    return min(actors, -(-batches // BATCHES_PER_ACTOR)), rows_per_batch


def _scoring_remotely(
    ray: ModuleType, placement: _Placement, engine: EngineOptions, options: ScoringOptions, columns: _Columns
) -> _Scoring:
    """_scoring on one of the cluster's workers, placed as a scorer is: the model loaded where the scorers load it,
    checked against the options (and a baseline found) before anything is scored."""
    task = ray.remote(num_cpus=1, num_gpus=placement.gpus)(_scoring)
    try:
        return ray.get(task.remote(engine, options, columns))
    except Exception as error:
        raise _said_as_ours(error) from None


def _scoring(engine: EngineOptions, options: ScoringOptions, columns: _Columns) -> _Scoring:
    """What a scorer of `engine` gives under `options` for the input's columns (see _Scoring): score_corpus on no
    rows."""
    return _scoring_of(_scorer(engine), options, columns)


def _scoring_of(scorer: BARTScorer, options: ScoringOptions, columns: _Columns) -> _Scoring:
    nothing = Corpus(
        {system: [] for system in columns.systems},
        sources=[] if columns.source is not None else None,
        references=[] if columns.references else None,
    )
    per_system, signature = score_corpus(scorer, nothing, options)
    assert per_system is not None and signature is not None  # a scorer of its own (distributed=False) has results
    keys = list(next(iter(per_system.values())))
    names = tuple(f"{system}/{key}" for system in columns.systems for key in keys)
    return _Scoring(_on_ray(Signature.parse(signature)).format(), names)


def _scorer(engine: EngineOptions) -> BARTScorer:
    from ..scoring.engine import BARTScorer

    return BARTScorer(engine.replace(distributed=False))


def _on_ray(signature: Signature) -> Signature:
    """The signature of a score computed on Ray: the engine's fields and Ray's version."""
    import ray

    return dataclasses.replace(signature, scorer_fields=(*signature.scorer_fields, f"ray:{ray.__version__}"))


def _said_as_ours(error: BaseException) -> BARTScoreError:
    """A failure on the cluster as an error of the family: the error of ours it carries (a batch's, naming its rows,
    or a check's), else a ScoringError saying Ray's in one line."""
    chain = [error]
    while len(chain) < 10:
        cause = getattr(chain[-1], "cause", None) or chain[-1].__cause__  # a RayTaskError keeps the original as cause
        if not isinstance(cause, BaseException) or cause in chain:
            break
        chain.append(cause)
    ours = [e for e in chain if isinstance(e, BARTScoreError) and type(e).__module__.startswith("bart_score")]
    if ours:
        return ours[-1]
    return ScoringError(f"the run on Ray failed: {type(error).__name__}: {first_line(error)}")


# -- the input -------------------------------------------------------------------------------------------------------


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
                        f"{self.label} row {len(ids)} has the id {row_id!r} ({describe(row_id)}); ids are text or "
                        f"whole numbers",
                        option="id_column",
                        value=columns.id,
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
                        f" line {number} holds more than {MAX_JSON_LINE_BYTES:,} bytes, the most a row of JSON lines "
                        f"may hold here",
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
            f" holds {size:,} bytes of schema metadata, more than the {MAX_TABLE_METADATA_BYTES:,} a table may hold "
            f"here (Ray Data copies it into every block it reads)",
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


def _checked_input(table: _Input, request: _Request) -> tuple[_Columns, list[Any]]:
    """The input's columns by role, the directions they allow checked against the options, and its ids (each column
    of a role checked, and each text's length)."""
    with _unreadable_as_input_error(table.label):
        columns = _columns(table.label, table.names(), request.id_column, *request.roles)
        request.options.directions_for(has_references=bool(columns.references), has_sources=columns.source is not None)
        return columns, table.ids(columns, request.options.max_chars)


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
            " is a Ray Dataset that does not start with a read of files (ray.data.read_parquet, read_json, "
            "read_csv), and Ray Data can checkpoint only such a Dataset",
            option="data",
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
            f"{label} has no id column {id_column!r}; its columns are {list(names)}",
            option="id_column",
            value=id_column,
            remedy=["name the column of unique row ids as ", Mention("id_column")],
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


# -- scoring ---------------------------------------------------------------------------------------------------------


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


@contextlib.contextmanager
def _ray_lines_to_its_logs(ray: ModuleType) -> Iterator[None]:
    """For the run, what Ray writes to this process's terminal goes to a file of its logs folder on this machine
    (bartscore-driver-<pid>.log; none with Ray Client): file descriptor 2, where Ray's C++ code writes its lines of
    level error beside its own log file (one for each scorer, as Ray Data keeps the scorers' constructor arguments in
    the object store, which Ray warns a restarted actor might not find), and sys.stdout, where Ray prints the
    warnings its servers send the driver (a raylet's, that many workers have started); nothing else keeps them off
    the terminal (RAY_BACKEND_LOG_LEVEL prints a line of its own). sys.stderr, where it wrote to that descriptor,
    writes to a copy of it, so that the progress bar stays."""
    node = getattr(ray._private.worker, "_global_node", None)
    if node is None:
        yield
        return
    try:
        python_on_the_descriptor = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError):  # replaced, by a notebook or a test's capture
        python_on_the_descriptor = False
    path = os.path.join(node.get_logs_dir_path(), f"bartscore-driver-{os.getpid()}.log")
    python_stdout, python_stderr = sys.stdout, sys.stderr
    python_stdout.flush()
    python_stderr.flush()
    terminal = os.dup(2)
    with open(path, "a", encoding="utf-8", errors="replace", buffering=1) as log:
        os.dup2(log.fileno(), 2)
        sys.stdout = log
        if python_on_the_descriptor:
            sys.stderr = open(  # noqa: SIM115  (closed below, once the run is over)
                os.dup(terminal), "w", encoding=python_stderr.encoding, errors=python_stderr.errors, buffering=1
            )
        try:
            yield
        finally:
            if python_on_the_descriptor:
                sys.stderr.close()
            sys.stdout, sys.stderr = python_stdout, python_stderr
            os.dup2(terminal, 2)
            os.close(terminal)


@contextlib.contextmanager
def _quiet_ray_data() -> Iterator[None]:
    """Ray Data's loggers without their handlers that write to the terminal (its log file is kept), for the run."""
    import ray.data  # noqa: F401  (Ray Data sets its loggers up when imported)

    taken = []
    for name in ("ray.data", "ray"):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                logger.removeHandler(handler)
                taken.append((logger, handler))
    try:
        yield
    finally:
        for logger, handler in taken:
            logger.addHandler(handler)


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


class _BatchScorer:
    """A Ray actor of the pool: one scorer, loaded once, scoring batches of rows into the output's columns (names,
    in the order _scoring found them) with each row's signature. A batch that fails raises an error of the family
    naming its row, or its rows."""

    def __init__(self, engine: EngineOptions, options: ScoringOptions, columns: _Columns, names: Sequence[str]) -> None:
        self.scorer = _scorer(engine)
        self.options, self.columns, self.names = options, columns, names

    def __call__(self, batch: pyarrow.Table) -> pyarrow.Table:
        import pyarrow

        ids = batch.column(self.columns.id).to_pylist()
        try:
            corpus = _batch_corpus(batch, self.columns, ids)
            per_system, signature = score_corpus(self.scorer, corpus, self.options)
        except BARTScoreError as error:
            raise _named_by_row(error, ids, self.columns) from None
        except Exception as error:  # from outside the library (torch, CUDA): perhaps passing, so a ScoringError
            raise ScoringError(
                _ids_said(ids, "rows"), f" could not be scored: {type(error).__name__}: {first_line(error)}"
            ) from None
        assert per_system is not None and signature is not None  # a scorer of its own has results
        table = {self.columns.id: batch.column(self.columns.id)}
        for name in self.names:
            system, _, key = name.rpartition("/")
            table[name] = per_system[system][key]
        counts = [len(references) for references in corpus.references] if corpus.references is not None else None
        table[SIGNATURE_COLUMN] = _row_signatures(signature, counts, len(ids))
        return pyarrow.table(table)


def _batch_corpus(batch: pyarrow.Table, columns: _Columns, ids: Sequence[Any]) -> Corpus:
    """A batch's rows as a Corpus, every text checked and a bad one named by its row's id and its column."""

    def texts(column: str) -> list[str]:
        return [_text(value, row_id, column) for value, row_id in zip(batch.column(column).to_pylist(), ids)]

    references = None
    if columns.references:
        cells = [batch.column(column).to_pylist() for column in columns.references]
        references = [_references(row_id, [cell[row] for cell in cells], columns) for row, row_id in enumerate(ids)]
    return Corpus(
        {system: texts(system) for system in columns.systems},
        sources=texts(columns.source) if columns.source is not None else None,
        references=references,
    )


def _text(value: Any, row_id: Any, column: str) -> str:
    where = f"row {row_id!r}, column {column!r}"
    if not isinstance(value, str):
        raise InputError(f"{where}: expected text, got {'nothing' if value is None else describe(value)}")
    return check_text(value, where)


def _references(row_id: Any, cells: Sequence[Any], columns: _Columns) -> list[str]:
    """A row's references, in column order (a cell may hold a list): an empty or blank one is no reference, but
    every row needs one."""
    references = []
    for column, cell in zip(columns.references, cells):
        for value in cell if isinstance(cell, list) else [cell]:
            if value is not None and (not isinstance(value, str) or value.strip()):
                references.append(_text(value, row_id, column))
    if not references:
        raise InputError(f"row {row_id!r} has no reference (its columns {list(columns.references)} are empty)")
    return references


def _named_by_row(error: BARTScoreError, ids: Sequence[Any], columns: _Columns) -> BARTScoreError:
    """The error of a batch, its texts named by row and column (a Mention of predictions[i] or sources[i], as
    score_corpus numbers them: system after system), else said to be about the batch's rows."""
    parts: list[Part] = []
    for part in error.parts:
        if isinstance(part, Mention) and part.option in ("predictions", "sources") and isinstance(part.index, int):
            column = columns.systems[part.index // len(ids)] if part.option == "predictions" else columns.source
            parts.append(f"the text of row {ids[part.index % len(ids)]!r} in column {column!r}")
        else:
            parts.append(part)
    if parts == list(error.parts):
        parts = [_ids_said(ids, "rows"), ": ", *parts]
    named = copy.copy(error)
    named.parts = tuple(parts)
    named.args = (named.said(),)
    return named


def _ids_said(ids: Sequence[Any], noun: str | None = None) -> str:
    """Row ids for a message: all of a few, the first ones of many ("rows 'a', 'b', 'c' and 997 more")."""
    shown = ", ".join(map(repr, ids[:SHOWN_IDS]))
    more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    if noun is None:
        return f"{'the first: ' if more else ''}{shown}{'...' if more else ''}"
    return f"{noun if len(ids) > 1 else noun.rstrip('s')} {shown}{more}"


def _row_signatures(signature: str, reference_counts: Sequence[int] | None, rows: int) -> list[str]:
    """Each row's signature: the batch's, on Ray, with the row's own number of references."""
    batch = _on_ray(Signature.parse(signature))
    if reference_counts is None:
        return [batch.format()] * rows
    by_count: dict[int, str] = {}
    for count in set(reference_counts):
        by_count[count] = dataclasses.replace(batch, reference_counts=(count, count)).format()
    return [by_count[count] for count in reference_counts]


def _merged_signature(signatures: Iterable[str]) -> Signature:
    """The signature of rows scored under `signatures` (each row's): their one identity, with the fewest and most
    references of any row; rows of two identities are an error (never merged)."""
    parsed = {Signature.parse(text) for text in signatures}
    identities = {dataclasses.replace(signature, reference_counts=None) for signature in parsed}
    if len(identities) != 1:
        shown = " and ".join(sorted(repr(identity.format()) for identity in identities)[:2])
        raise ScoringError(f"the rows were scored under {len(identities)} signatures ({shown}), not one")
    counts = [signature.reference_counts for signature in parsed if signature.reference_counts is not None]
    merged = (min(fewest for fewest, _ in counts), max(most for _, most in counts)) if counts else None
    return dataclasses.replace(identities.pop(), reference_counts=merged)


# -- the output folder -----------------------------------------------------------------------------------------------


class _OutputFolder:
    """The output folder of a run (see the module's text), checked before anything is read or scored: a new or empty
    folder, or one holding this layout and nothing else."""

    def __init__(self, path: str) -> None:
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise InputTypeError(Mention("output"), f" must be a folder's path, got {path!r}", option="output")
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
                f" holds {', '.join(strangers[:SHOWN_IDS])}{', ...' if len(strangers) > SHOWN_IDS else ''}, which "
                f"a run's output does not",
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

    def committed_files(self) -> list[str]:
        """The checkpoint's committed files (not those pending: a pending file's rows are deleted and scored again by
        the next run)."""
        return [path for path in self._files(self.checkpoint) if not path.endswith(".pending.parquet")]

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
        files = self._files(self.scores)
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
        files = self._files(self.scores)
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
                f" holds scores of other settings: its rows were scored under {identity.format()!r}, and this run "
                f"would score under {scoring.identity!r}",
                remedy="give another output folder, or the settings of that run",
            )

    def finish(self, ids: Sequence[Any], id_column: str) -> str:
        """The output checked, each input id exactly once, then signed: run.json written (if it says something new)
        with the rows' signature; returns that signature."""
        files = self._files(self.scores)
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
