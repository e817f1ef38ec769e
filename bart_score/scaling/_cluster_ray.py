"""Ray itself for a run on Ray (bart_score.scaling.cluster): importing it (the ray extra), reaching a cluster at an
address (asked first whether Ray answers there) or starting a local one with a watcher that ends its processes when
the driver ends, and keeping Ray's own lines off the terminal for the run."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from types import ModuleType

from ..errors import BARTScoreError, MissingExtraError, ScoringError, first_line
from ..messages import Mention
from ..options import ClusterOptions
from ._cluster_pool import CHECKPOINT_FILTER_CPUS, READ_AND_WRITE_CPUS, _sized

RAY_EXTRA = 'pip install "bartscore[ray]"'
# How long a cluster's address is given to answer, as Ray, before the run is refused.
PROBE_SECONDS = 10
# The environment variable that marks every process of a local cluster the run starts (its value is the run's own),
# by which a watcher of the driver ends them if the driver dies: Ray's agents otherwise outlive their raylet by a
# minute, trying to tell the dead cluster so.
LOCAL_CLUSTER_MARK = "BARTSCORE_LOCAL_RAY_CLUSTER"
# Ray Data reads the footers of Parquet files (the input's, and on a rerun its checkpoint's) with a pool of actors, 32
# by default, each a process of its own: starting them took most of a rerun's 29.4 s to load a checkpoint of 3 tiny
# files on two busy cores. A few read thousands of footers in seconds.
FOOTER_READERS_VARIABLE = "RAY_DATA_PARQUET_FOOTER_NUM_ACTORS"
FOOTER_READERS = 2


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
