"""Scoring on Ray through failures (bart_score.scaling.cluster, docs/scaling.md): a local Ray cluster (4 logical CPUs,
no dashboard, its servers bound to 127.0.0.1) scores one table with the tiny BART three times, and each output's rows
are counted: an uninterrupted run; a run whose scorer is killed with SIGKILL while it scores a batch; and `bartscore
cluster --address` killed with SIGKILL once some rows are committed, then the same command again. Printed per run: the
seconds, the rows written (and by the rerun), the distinct ids, the missing ones, and the largest difference to the
uninterrupted run's scores; the uninterrupted run's largest difference to the single-process engine (score_corpus on
every row at once), which float32's rounding in batches of other rows makes; and the seconds the rerun took to load
the checkpoint, as Ray Data's log says.

    python bench/bench_cluster_failures.py                                   # 400 rows, 2 scorers, batches of 20
    python bench/bench_cluster_failures.py --rows 100 --actors 1 --batch-rows 10
    RAY_DATA_PARQUET_FOOTER_NUM_ACTORS=32 python bench/bench_cluster_failures.py   # Ray Data's own footer readers

Only this script's own processes are killed (the cluster it started, and its driver), never another cluster's."""

import os

# Read by Ray when it is imported: the local cluster binds its servers to 127.0.0.1 only.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

import _setup
import pyarrow as pa
import pyarrow.parquet as pq
from support.models import build_tiny, prebuilt
from support.text import english_like, english_like_text

from bart_score import BARTScorer, Corpus, score_corpus
from bart_score.options import ClusterOptions, EngineOptions
from bart_score.scaling.cluster import score_on_ray

# The title Ray gives a scorer of the pool while it scores a batch.
BATCH_RUNNING = "MapBatches(_BatchScorer)).submit"


def descendants():
    """{pid: command line} of the processes this one started, and theirs (its cluster's servers and workers)."""
    table = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
                state, parent = handle.read().rpartition(")")[2].split()[:2]
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                line = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z":
            table[int(pid)] = (int(parent), line)
    ours, grown = {os.getpid()}, True
    while grown:
        children = {pid for pid, (parent, _) in table.items() if parent in ours} - ours
        ours |= children
        grown = bool(children)
    return {pid: table[pid][1] for pid in ours - {os.getpid()} if pid in table}


def kill_one_scorer_mid_batch(killed, stop):
    while not stop.is_set() and not killed:
        for pid, line in descendants().items():
            if BATCH_RUNNING in line:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.005)


def write_input(folder, count):
    rng = random.Random(0)
    rows = [
        {
            "id": f"row-{index}",
            "source": english_like_text(rng, 16),
            "reference": english_like(rng, 7),
            "a": english_like(rng, 6),
            "b": english_like(rng, 8),
        }
        for index in range(count)
    ]
    os.makedirs(folder)
    pq.write_table(pa.Table.from_pylist(rows), os.path.join(folder, "rows.parquet"))
    return rows


def engine_difference(checkpoint, rows, written):
    """The largest difference, and the largest relative one, of the scores `written` to the single-process engine's
    (score_corpus on every row at once): what float32's rounding in batches of other rows moves."""
    scorer = BARTScorer(checkpoint=checkpoint, device="cpu")
    corpus = Corpus(
        {system: [row[system] for row in rows] for system in ("a", "b")},
        sources=[row["source"] for row in rows],
        references=[[row["reference"]] for row in rows],
    )
    expected, _ = score_corpus(scorer, corpus, show_progress=False)
    pairs = [
        (written[row["id"]][f"{system}/{direction}"], value)
        for system, directions in expected.items()
        for direction, values in directions.items()
        for row, value in zip(rows, values)
    ]
    return max(abs(got - value) for got, value in pairs), max(abs(got - value) / abs(value) for got, value in pairs)


def committed(output):
    """The ids Ray Data's checkpoint has committed so far."""
    folder = os.path.join(output, "checkpoint")
    if not os.path.isdir(folder):
        return []
    names = [n for n in os.listdir(folder) if n.endswith(".parquet") and not n.endswith(".pending.parquet")]
    return [i for name in names for i in pq.read_table(os.path.join(folder, name), columns=["id"])["id"].to_pylist()]


def counts(output, ids, baseline=None):
    """(rows written, distinct ids, missing ids, largest difference to `baseline`'s scores or None)."""
    table = pq.read_table(os.path.join(output, "scores")).to_pylist()
    written = {row["id"]: row for row in table}
    largest = None
    if baseline is not None:
        columns = [name for name in table[0] if "/" in name]
        largest = max(abs(written[i][c] - baseline[i][c]) for i in ids for c in columns if i in written)
    return len(table), len(written), len(set(ids) - set(written)), largest, written


def checkpoint_loading(ray):
    """What Ray Data's log of this cluster says of the last checkpoint it loaded (its seconds)."""
    path = os.path.join(ray._private.worker._global_node.get_logs_dir_path(), "ray-data.log")
    with open(path, encoding="utf-8", errors="replace") as handle:
        said = [line for line in handle if "Checkpoint loaded" in line]
    return said[-1].split(" -- ", 1)[-1].split(". SizeBytes")[0] if said else "not in ray-data.log"


def report(name, seconds, ids, output, baseline, note=""):
    rows, distinct, missing, largest, written = counts(output, ids, baseline)
    difference = "" if largest is None else f", largest difference {largest:.1e}"
    print(f"{name}: {seconds:.1f} s, {rows} rows written, {distinct} distinct, {missing} missing{difference}{note}")
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--batch-rows", type=int, default=20)
    parser.add_argument("--commit-before-kill", type=int, default=None, help="rows committed (default: rows / 4)")
    args = parser.parse_args()
    import ray

    work = tempfile.mkdtemp(prefix="bench-cluster-")
    checkpoint = prebuilt(os.path.join(work, "tiny-bart"), build_tiny, family="bart")
    data = os.path.join(work, "input")
    rows = write_input(data, args.rows)
    ids = [row["id"] for row in rows]
    engine = EngineOptions(checkpoint=checkpoint, device="cpu")
    cluster = ClusterOptions(actors=args.actors, rows_per_batch=args.batch_rows)
    # Inherited by the cluster's processes and the driver; given, kept (32 is Ray Data's own default).
    os.environ.setdefault("RAY_DATA_PARQUET_FOOTER_NUM_ACTORS", "1")
    start = time.perf_counter()
    ray.init(num_cpus=max(4, args.actors + 3), include_dashboard=False, log_to_driver=False)
    address = ray.get_runtime_context().gcs_address
    print(
        f"ray {ray.__version__}: a local cluster in {time.perf_counter() - start:.1f} s; {args.rows} rows, "
        f"{args.actors} scorers, batches of {args.batch_rows}; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    try:
        start = time.perf_counter()
        score_on_ray(data, os.path.join(work, "plain"), engine=engine, cluster=cluster)
        baseline = report("uninterrupted", time.perf_counter() - start, ids, os.path.join(work, "plain"), None)
        largest, relative = engine_difference(checkpoint, rows, baseline)
        print(f"  against the single-process engine: largest difference {largest:.1e}, relative {relative:.1e}")

        killed, stop = [], threading.Event()
        killer = threading.Thread(target=kill_one_scorer_mid_batch, args=(killed, stop), daemon=True)
        start = time.perf_counter()
        killer.start()
        score_on_ray(data, os.path.join(work, "actor"), engine=engine, cluster=cluster)
        stop.set()
        killer.join()
        seconds = time.perf_counter() - start
        report(
            "a scorer killed mid-batch",
            seconds,
            ids,
            os.path.join(work, "actor"),
            baseline,
            f" ({len(killed)} scorer killed)",
        )

        output = os.path.join(work, "driver")
        command = [
            sys.executable,
            os.path.join(_setup.REPO, "bartscore.py"),
            "cluster",
            "-i",
            data,
            "-o",
            output,
            "-m",
            checkpoint,
            "--device",
            "cpu",
            "-q",
            "--address",
            address,
            "--actors",
            str(args.actors),
            "--batch-rows",
            str(args.batch_rows),
        ]
        environment = {**os.environ, "PYTHONPATH": _setup.REPO, "HF_HUB_OFFLINE": "1"}
        threshold = args.commit_before_kill or args.rows // 4
        start = time.perf_counter()
        driver = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while driver.poll() is None and len(committed(output)) < threshold:
            time.sleep(0.05)
        still_running = driver.poll() is None
        driver.kill()
        driver.wait()
        first = time.perf_counter() - start
        before = committed(output)
        print(
            f"driver killed after {first:.1f} s (still running: {still_running}): {len(before)} rows committed, "
            f"{len(set(before))} distinct"
        )
        start = time.perf_counter()
        rerun = subprocess.run(command, env=environment, capture_output=True, text=True)
        said = rerun.stdout.splitlines()[0] if rerun.stdout else rerun.stderr.strip()[-500:]
        report("the same command again", time.perf_counter() - start, ids, output, baseline, f" ({said})")
        print(f"  of which loading the checkpoint: {checkpoint_loading(ray)}")
    finally:
        ray.shutdown()
    print(f"(the outputs are under {work})")


if __name__ == "__main__":
    main()
