"""Scoring across a Ray cluster (bart_score.scaling.cluster), on a real local cluster: the scores of the tiny BART and
of a tiny causal LM equal the plain reference loops and the single-process engine, whatever the pool and the batch size,
under the engine's signature with Ray's version added; an actor killed with SIGKILL mid-batch, and a driver killed
mid-run then run again, leave every row exactly once, the rerun scoring only the missing rows; a batch the scorer
refuses fails the run naming its row; a run onto a finished output writes nothing; and what is refused.

The cluster (4 logical CPUs, no dashboard, its servers bound to 127.0.0.1) is started once, by the first test that
needs it, and stopped at the end of the session with no Ray process left behind; those tests are slow. What is refused
before any cluster is reached runs in the fast subset."""

import csv
import json
import os

# Read by Ray when it is imported: a local cluster then binds its servers to 127.0.0.1 only.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

import random
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from support.extras import lacking, reason, require_extra

require_extra("ray")

import pyarrow as pa
import pyarrow.parquet as pq
from support.cli import run_cli
from support.models import load_tiny, tiny_checkpoint_for
from support.reference import causal_score, reference_directions
from support.text import english_like, english_like_text

from bart_score import BARTScorer, Corpus, InputError, InputTypeError, ScoringError, score_corpus
from bart_score.cli import main
from bart_score.options import ClusterOptions, EngineOptions
from bart_score.scaling.cluster import score_on_ray

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Against the single-process engine: 1e-6, or a millionth of the score. The engine's own float32 scores move by up to a
# few units in the last place with the batches they are computed in (about 1.4e-6 on these scores of about -7, between
# batch_size=1 and its default), and a cluster's batches are others.
TOLERANCE = {"abs": 1e-6, "rel": 1e-6}
REFERENCE_TOLERANCE = {"abs": 1e-5}  # against the plain loops, as tests/test_engine.py
# The title Ray gives an actor of the pool while it scores a batch (ray::<actor>.<method>).
BATCH_RUNNING = "MapBatches(_BatchScorer)).submit"


def processes():
    """{pid: (parent pid, command line)} of this machine's live processes (zombies apart)."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
                state, parent = handle.read().rpartition(")")[2].split()[:2]
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                line = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z":
            found[int(pid)] = (int(parent), line)
    return found


def cluster_processes(root=None):
    """Ray's processes among those `root` (by default this test process) started, and theirs: its cluster's servers
    and workers. (Another pytest worker may run a cluster of its own at the same time, and this worker may hold the
    session's cluster while a test's driver starts one of its own.)"""
    table = processes()
    root = os.getpid() if root is None else root
    ours, grown = {root}, True
    while grown:
        children = {pid for pid, (parent, _) in table.items() if parent in ours} - ours
        ours |= children
        grown = bool(children)
    return {pid: table[pid][1] for pid in ours - {root} if pid in table and is_ray(table[pid][1])}


def is_ray(command_line):
    """Whether a process is one of Ray's: its servers (gcs_server, raylet, Ray's own Python modules) and its workers
    (named ray::...). Other tests on the same worker leave processes of their own (a chat renderer, a resource
    tracker) that are not the cluster's."""
    return command_line.startswith("ray::") or "/ray/" in command_line or "raylet" in command_line


@pytest.fixture(scope="session")
def ray_address():
    """A local Ray cluster for the session, joined by this process (score_on_ray then runs on it): 4 logical CPUs
    (the scorers', the reads' and writes', and a rerun's checkpoint filter), no dashboard; its workers import this
    checkout's bart_score. Stopped at the end, when none of its processes may be left (another pytest worker's
    own tests, run with -n and another --dist, may start a cluster of their own: each sees only its own)."""
    import ray

    settings = {
        "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])),
        # One process reading Parquet footers rather than Ray Data's 32, which two cores take seconds to start.
        "RAY_DATA_PARQUET_FOOTER_NUM_ACTORS": "1",
    }
    given = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)  # the cluster's processes inherit them
    try:
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    finally:
        for name, value in given.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value
    yield ray.get_runtime_context().gcs_address
    started = cluster_processes()
    ray.shutdown()
    deadline = time.monotonic() + 30
    while (left := {pid: line for pid, line in processes().items() if pid in started}) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"Ray processes outlived the tests: {left}"


def corpus_rows(count, seed=0):
    """Rows of a table corpus: an id, a source, one or two references (a list cell), and two systems' outputs."""
    rng = random.Random(seed)
    return [
        {
            "id": f"row-{index}",
            "source": english_like_text(rng, 16),
            "reference": [english_like(rng, 7) for _ in range(1 + index % 2)],
            "a": english_like(rng, 6),
            "b": english_like(rng, 8),
        }
        for index in range(count)
    ]


def write_rows(folder, rows, files=1):
    """The rows as `files` Parquet files in `folder` (made), in order; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    share = -(-len(rows) // files)
    for part in range(files):
        chunk = rows[part * share : (part + 1) * share]
        pq.write_table(pa.Table.from_pylist(chunk), folder / f"part-{part}.parquet")
    return str(folder)


def output_rows(output):
    """{id: row} of an output folder's scores, and the number of rows (ids written twice would make them differ)."""
    table = pq.read_table(os.path.join(output, "scores")).to_pylist()
    return {row["id"]: row for row in table}, len(table)


def committed_ids(output):
    """The ids of the rows Ray Data's checkpoint has committed, read from its files as they are."""
    folder = os.path.join(output, "checkpoint")
    names = [n for n in os.listdir(folder) if n.endswith(".parquet") and not n.endswith(".pending.parquet")]
    return [row_id for name in names for row_id in pq.read_table(os.path.join(folder, name))["id"].to_pylist()]


def folder_state(folder):
    """Every file under a folder with its size and modification time: what a run that writes nothing leaves alone."""
    state = {}
    for place, _, names in os.walk(folder):
        for name in names:
            info = os.stat(os.path.join(place, name))
            state[os.path.relpath(os.path.join(place, name), folder)] = (info.st_size, info.st_mtime_ns)
    return state


def engine_scores(scorer, rows, systems=("a", "b"), **options):
    """The single-process engine's scores and signature on the same rows: score_corpus, all at once."""
    corpus = Corpus(
        {system: [row[system] for row in rows] for system in systems},
        sources=[row["source"] for row in rows],
        references=[row["reference"] for row in rows] if "reference" in rows[0] else None,
    )
    return score_corpus(scorer, corpus, **options)


def assert_scores_equal(output, rows, expected, tolerance, systems=("a", "b")):
    """Every input row once in the output, with each system's directions equal to `expected` ({system: {direction:
    per-row scores}})."""
    written, count = output_rows(output)
    assert count == len(rows) and set(written) == {row["id"] for row in rows}
    for system in systems:
        for direction, scores in expected[system].items():
            got = [written[row["id"]][f"{system}/{direction}"] for row in rows]
            assert got == pytest.approx(scores, **tolerance), (system, direction)


class ActorKiller:
    """Kills a scorer of this process's cluster with SIGKILL while it scores a batch (Ray titles its process by the
    method it runs), once, or every time (`every`); `killed` lists the pids."""

    def __init__(self, every=False):
        self.every, self.killed, self._stop = every, [], threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _watch(self):
        while not self._stop.is_set() and (self.every or not self.killed):
            for pid, line in cluster_processes().items():
                if BATCH_RUNNING in line and pid not in self.killed:
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
            time.sleep(0.005)


# -- the same numbers ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_scores_equal_the_engine_and_the_reference_whatever_the_pool(
    ray_address, tmp_path, tiny_checkpoint, scorer, reference_model
):
    """Two scorers, batches of 7 rows over three input files: every row once, each system's four directions equal to
    the single-process engine's (1e-6) and to the plain loops', under the engine's signature with ray:<version>; run
    again, the finished output gets nothing new; with other settings, the folder is refused, not merged."""
    import ray

    rows = corpus_rows(40)
    data = write_rows(tmp_path / "input", rows, files=3)
    output = str(tmp_path / "output")
    engine = EngineOptions(checkpoint=tiny_checkpoint, device="cpu")
    run = score_on_ray(data, output, engine=engine, cluster=ClusterOptions(actors=2, rows_per_batch=7))

    expected, signature = engine_scores(scorer, rows)
    assert (run.rows, run.before, run.written) == (40, 0, 40)
    assert run.signature == f"{signature}|ray:{ray.__version__}"
    assert_scores_equal(output, rows, expected, TOLERANCE)
    plain = {
        system: reference_directions(
            *reference_model,
            [row[system] for row in rows],
            references=[row["reference"] for row in rows],
            sources=[row["source"] for row in rows],
        )
        for system in ("a", "b")
    }
    assert_scores_equal(output, rows, plain, REFERENCE_TOLERANCE)

    finished = folder_state(output)
    again = score_on_ray(data, output, engine=engine, cluster=ClusterOptions(actors=1, rows_per_batch=11))
    assert (again.before, again.written, again.signature) == (40, 0, run.signature)
    assert folder_state(output) == finished

    with pytest.raises(InputError, match="holds scores of other settings") as refused:
        score_on_ray(data, output, engine=engine, aggregation="max", cluster=ClusterOptions(actors=1))
    assert "agg:mean" in str(refused.value) and "agg:max" in str(refused.value)
    assert folder_state(output) == finished


@pytest.mark.slow
def test_a_causal_lm_from_a_ray_dataset_scores_as_the_engine_and_the_plain_loop(ray_address, tmp_path_factory):
    """A tiny GPT-2 given sources only (faithfulness), the input a Ray Dataset read from JSON lines, one scorer in
    batches of 12 rows: the single-process engine's scores and the plain loop's."""
    import ray

    checkpoint = tiny_checkpoint_for(tmp_path_factory, "gpt2")
    rows = [{key: row[key] for key in ("id", "source", "a")} for row in corpus_rows(30, seed=3)]
    data = tmp_path_factory.mktemp("causal-input") / "rows.jsonl"
    pa_rows = pa.Table.from_pylist(rows)
    data.write_text("".join(pa_rows.slice(i, 1).to_pandas().to_json(orient="records", lines=True) for i in range(30)))
    output = str(tmp_path_factory.mktemp("causal") / "output")
    run = score_on_ray(
        ray.data.read_json(str(data), lines=True),
        output,
        engine=EngineOptions(checkpoint=checkpoint, device="cpu"),
        cluster=ClusterOptions(actors=1, rows_per_batch=12),
    )

    expected, signature = engine_scores(BARTScorer(checkpoint=checkpoint, device="cpu"), rows, systems=("a",))
    assert run.signature == f"{signature}|ray:{ray.__version__}" and "|dirs:faithfulness|" in run.signature
    assert_scores_equal(output, rows, expected, TOLERANCE, systems=("a",))
    model, tokenizer = load_tiny(checkpoint)
    plain = {"a": {"faithfulness": [causal_score(model, tokenizer, row["source"], row["a"]) for row in rows]}}
    assert_scores_equal(output, rows, plain, REFERENCE_TOLERANCE, systems=("a",))


# -- exactly once ----------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_an_actor_killed_mid_batch_is_restarted_and_its_batch_scored_again(
    ray_address, tmp_path, tiny_checkpoint, scorer
):
    """SIGKILL to the scorer while it scores a batch: Ray restarts it and the batch runs again; every row is in the
    output once, with the scores of an uninterrupted run."""
    rows = corpus_rows(120, seed=1)
    data = write_rows(tmp_path / "input", rows)
    output = str(tmp_path / "output")
    with ActorKiller() as killer:
        run = score_on_ray(
            data,
            output,
            engine=EngineOptions(checkpoint=tiny_checkpoint, device="cpu"),
            cluster=ClusterOptions(actors=1, rows_per_batch=10),
        )
    assert len(killer.killed) == 1
    assert (run.rows, run.written) == (120, 120)
    expected, _ = engine_scores(scorer, rows)
    assert_scores_equal(output, rows, expected, TOLERANCE)


@pytest.mark.slow
def test_a_batch_that_keeps_failing_is_tried_again_a_bounded_number_of_times(ray_address, tmp_path, tiny_checkpoint):
    """Every try of a batch killed: with retries=1 the batch runs twice, then the run fails, counting and naming the
    rows not in the output (which a rerun scores), and nothing is dropped silently."""
    rows = corpus_rows(30, seed=2)
    data = write_rows(tmp_path / "input", rows)
    output = str(tmp_path / "output")
    with ActorKiller(every=True) as killer, pytest.raises(ScoringError, match="run the same call again") as failed:
        score_on_ray(
            data,
            output,
            engine=EngineOptions(checkpoint=tiny_checkpoint, device="cpu"),
            cluster=ClusterOptions(actors=1, rows_per_batch=30, retries=1),
        )
    assert len(killer.killed) == 2
    assert "30 rows are not in" in str(failed.value) and "'row-" in str(failed.value)
    assert not os.path.exists(os.path.join(output, "run.json"))


def write_format(folder, rows, kind):
    """The rows as one file of `kind` (parquet, jsonl or csv: a CSV cell holds one reference, not a list) in `folder`
    (made); returns the file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rows.{kind}"
    if kind == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif kind == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({**row, "reference": row["reference"][0]} for row in rows)
    return str(path)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["parquet", "jsonl", "csv"])
def test_a_driver_killed_mid_run_then_the_same_command_again_scores_only_the_missing_rows(
    ray_address, tmp_path, tiny_checkpoint, scorer, kind
):
    """`bartscore cluster` joining the cluster by address, killed with SIGKILL once some files are committed; the same
    command again scores exactly the rows not committed, into new files, and says so: every row once, with the
    engine's scores; for each input format (JSON lines were read into pandas blocks, which Ray Data's checkpoint
    filter failed on at the rerun)."""
    rows = [{**row, "reference": row["reference"][:1]} for row in corpus_rows(100, seed=4)]
    data = write_format(tmp_path / "input", rows, kind)
    output = str(tmp_path / "output")
    command = ["cluster", "-i", data, "-o", output, "-m", tiny_checkpoint, "--device", "cpu", "-q"]
    command += ["--address", ray_address, "--actors", "1", "--batch-rows", "10"]
    with open(tmp_path / "driver.log", "wb") as log:
        driver = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "bartscore.py"), *command],
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 150
        while driver.poll() is None and time.monotonic() < deadline:
            if os.path.isdir(os.path.join(output, "checkpoint")) and len(committed_ids(output)) >= 20:
                break
            time.sleep(0.05)
        running = driver.poll() is None
        driver.kill()
        driver.wait()
    assert running, (tmp_path / "driver.log").read_text()[-3000:]  # killed mid-run, not after it ended

    committed = committed_ids(output)
    assert 20 <= len(committed) < len(rows) and len(set(committed)) == len(committed)
    files_before = set(os.listdir(os.path.join(output, "scores")))
    status, stdout, stderr = run_cli(*command)

    assert status == 0, stderr[-3000:]
    missing = len(rows) - len(committed)
    assert stdout.splitlines()[0] == f"scored {missing} of 100 rows into {output} ({len(committed)} were there already)"
    new_files = set(os.listdir(os.path.join(output, "scores"))) - files_before
    new_ids = [
        row_id for name in new_files for row_id in pq.read_table(os.path.join(output, "scores", name))["id"].to_pylist()
    ]
    assert len(new_ids) == missing and not set(new_ids) & set(committed)
    expected, _ = engine_scores(scorer, rows)
    assert_scores_equal(output, rows, expected, TOLERANCE)


@pytest.mark.slow
def test_quiet_the_command_prints_its_own_lines_alone(tmp_path, tiny_checkpoint):
    """`bartscore cluster -q` on a small table, on a local cluster of its own: stdout holds its two lines, stderr
    nothing (Ray's warnings, its INFO lines, Ray Data's progress and its C++ lines went to the terminal); and the six
    rows were cut into several batches, each written as it was scored, rather than one."""
    data = write_rows(tmp_path / "input", corpus_rows(6, seed=6))
    output = str(tmp_path / "output")
    status, stdout, stderr = run_cli(
        "cluster", "-i", data, "-o", output, "-m", tiny_checkpoint, "--device", "cpu", "-q"
    )
    assert (status, stderr) == (0, "")
    lines = stdout.splitlines()
    assert len(lines) == 2 and lines[0] == f"scored 6 of 6 rows into {output} (0 were there already)"
    assert lines[1].startswith("signature: ckpt:") and lines[1].endswith(f"|ray:{ray_version()}")
    assert len(os.listdir(os.path.join(output, "scores"))) > 1


def ray_version():
    import ray

    return ray.__version__


@pytest.mark.slow
def test_no_process_of_a_local_cluster_outlives_its_killed_driver(tmp_path, tiny_checkpoint):
    """`bartscore cluster` on a local cluster of its own, killed with SIGKILL while its scorer scores: every Ray
    process it started (its servers, agents and workers) is gone soon after; Ray's dashboard and runtime-env agents
    lived on for 60 s, trying to tell the dead cluster so. The bound leaves a margin on a busy machine: the watcher
    ends them within a second or two (docs/scaling.md)."""
    data = write_rows(tmp_path / "input", corpus_rows(60, seed=7))
    command = [sys.executable, os.path.join(ROOT, "bartscore.py"), "cluster", "-i", data, "-o", str(tmp_path / "out")]
    command += ["-m", tiny_checkpoint, "--device", "cpu", "-q", "--batch-rows", "1"]
    with open(tmp_path / "driver.log", "wb") as log:
        driver = subprocess.Popen(command, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdout=log, stderr=log)
    started = {}
    deadline = time.monotonic() + 240
    while driver.poll() is None and time.monotonic() < deadline:
        started.update(cluster_processes(driver.pid))
        lines = started.values()
        # on a busy machine the agents may start after the first batch: the test is about them too
        if any(BATCH_RUNNING in line for line in lines) and any("DashboardAgent" in line for line in lines):
            break
        time.sleep(0.05)
    running = driver.poll() is None
    started.update(cluster_processes(driver.pid))
    driver.kill()
    driver.wait()
    assert running, (tmp_path / "driver.log").read_text()[-3000:]
    assert any("DashboardAgent" in line for line in started.values()), started

    deadline = time.monotonic() + 30
    while (left := {pid: line for pid, line in processes().items() if pid in started}) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"Ray processes outlived their driver by 30 s: {left}"


# -- a batch the scorer refuses --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_batch_the_scorer_refuses_fails_the_run_naming_its_row(ray_address, tmp_path, tiny_checkpoint):
    """long_source="windows" with max_sentences=3 and one output of five sentences: the run fails at once (an error of
    the input's is not tried again), naming the row and its column; the row is not in the output, and the run is
    not signed."""
    if lacking("long"):
        pytest.skip(reason("long"))
    rows = corpus_rows(24, seed=5)
    rows[13]["a"] = " ".join(f"Sentence number {n} is here." for n in range(5))
    data = write_rows(tmp_path / "input", rows)
    output = str(tmp_path / "output")
    with pytest.raises(InputError, match=r"the text of row 'row-13' in column 'a' has more than 3 sentences"):
        score_on_ray(
            data,
            output,
            engine=EngineOptions(checkpoint=tiny_checkpoint, device="cpu"),
            long_source="windows",
            retriever="bm25",
            max_sentences=3,
            directions="faithfulness",
            cluster=ClusterOptions(actors=1, rows_per_batch=6),
        )
    assert "row-13" not in (committed_ids(output) if os.path.isdir(os.path.join(output, "checkpoint")) else [])
    assert not os.path.exists(os.path.join(output, "run.json"))


# -- refused ---------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_an_unreachable_address_is_one_line_before_any_work(tmp_path):
    """`bartscore cluster` in a process of its own: a closed port answers at once, in one line naming the address
    and the flag, with the exit status of a run-time failure; nothing is written."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data, output = write_rows(tmp_path / "input", corpus_rows(3)), str(tmp_path / "out")
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        status, stdout, stderr = run_cli("cluster", "-i", data, "-o", output, "--address", address)
        assert (status, stdout) == (1, "")
        assert stderr == (
            f"bartscore cluster: cannot reach the Ray cluster at {address!r}: Connection refused; start it, or give "
            f"the address of a running one as --address\n"
        )
        assert not os.path.exists(output)


@pytest.mark.slow
def test_a_cluster_that_refuses_the_driver_without_its_token_is_one_line(ray_address, tmp_path):
    """The session's cluster, with token authentication, joined by a driver without RAY_AUTH_MODE=token: one line
    saying so, rather than Ray's line a second for a minute and a traceback; nothing written."""
    data, output = write_rows(tmp_path / "input", corpus_rows(3)), str(tmp_path / "out")
    environment = {name: value for name, value in os.environ.items() if name != "RAY_AUTH_MODE"}
    command = ["cluster", "-i", data, "-o", output, "--address", ray_address]
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bartscore.py"), *command],
        capture_output=True,
        text=True,
        env={**environment, "HF_HUB_OFFLINE": "1"},
        timeout=180,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"bartscore cluster: the Ray cluster at {ray_address!r} refuses a driver without an authentication token; "
        f"set RAY_AUTH_MODE=token, with the cluster's token in RAY_AUTH_TOKEN, in the file RAY_AUTH_TOKEN_PATH names, "
        f"or in ~/.ray/auth_token\n"
    )
    assert not os.path.exists(output)


@pytest.mark.slow
def test_a_ray_dataset_that_does_not_start_with_a_read_is_refused(ray_address, tmp_path):
    import ray

    with pytest.raises(InputError, match="does not start with a read of files"):
        score_on_ray(ray.data.from_items(corpus_rows(3)), str(tmp_path / "out"))


@pytest.mark.slow
def test_the_command_line_says_a_refused_input_as_a_usage_error(tmp_path, capsys):
    rows = corpus_rows(5)
    rows[3]["id"] = rows[1]["id"]
    data = write_rows(tmp_path / "input", rows)
    assert main(["cluster", "-i", data, "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"bartscore cluster: error: {data} gives the id 'row-1' twice, to rows 2 and 4; each row needs an id of its "
        f"own\n"
    )


@pytest.mark.slow
def test_the_input_needs_its_id_column_and_unique_ids(tmp_path):
    rows = corpus_rows(5)
    with pytest.raises(InputError, match=r"id_column='key' is no column of .*, whose columns are \['id', 'source'"):
        score_on_ray(write_rows(tmp_path / "a", rows), str(tmp_path / "out"), id_column="key")
    rows[3]["id"] = rows[1]["id"]
    with pytest.raises(InputError, match=r"gives the id 'row-1' twice, to rows 2 and 4"):
        score_on_ray(write_rows(tmp_path / "b", rows), str(tmp_path / "out"))
    rows[3]["id"] = None
    with pytest.raises(InputError, match=r"row 4 has no id"):
        score_on_ray(write_rows(tmp_path / "c", rows), str(tmp_path / "out"))
    assert not os.path.exists(tmp_path / "out")


def test_an_output_folder_of_something_else_is_refused(tmp_path):
    data = write_rows(tmp_path / "input", corpus_rows(3))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine\n")
    with pytest.raises(InputError, match=r"holds 'todo.txt', which a run's output does not"):
        score_on_ray(data, str(tmp_path / "notes"))
    with pytest.raises(InputError, match="is not a folder"):
        score_on_ray(data, str(tmp_path / "notes" / "todo.txt"))


def test_what_a_cluster_cannot_do_is_refused_before_it_is_reached(tmp_path):
    data = write_rows(tmp_path / "input", corpus_rows(3))
    output = str(tmp_path / "out")
    with pytest.raises(InputError, match="rescale='corpus' takes reference points"):
        score_on_ray(data, output, rescale="corpus")
    with pytest.raises(InputError, match="device='cuda:1' names one GPU"):
        score_on_ray(data, output, engine=EngineOptions(device="cuda:1"))
    with pytest.raises(InputError, match="id_column='signature' is the name of the output's column"):
        score_on_ray(data, output, id_column="signature")
    (tmp_path / "mixed").mkdir()
    pq.write_table(pa.table({"id": ["x"]}), tmp_path / "mixed" / "a.parquet")
    (tmp_path / "mixed" / "b.csv").write_text("id\ny\n")
    with pytest.raises(InputError, match="the input mixes formats"):
        score_on_ray(str(tmp_path / "mixed"), output)
    with pytest.raises(InputError, match="no such file or folder"):
        score_on_ray(str(tmp_path / "nowhere"), output)
    with pytest.raises(InputTypeError, match="must be a path, a list of paths or a Ray Dataset"):
        score_on_ray({"id": [1]}, output)
    with pytest.raises(InputError, match="address must be 'auto'"):
        ClusterOptions(address="head")
    assert not os.path.exists(output)


def test_without_the_extra_the_call_names_it(tmp_path, monkeypatch):
    from bart_score import MissingExtraError

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    with pytest.raises(MissingExtraError, match=r'pip install "bartscore\[ray\]"'):
        score_on_ray(str(tmp_path), str(tmp_path / "out"))


def test_without_the_extra_the_command_says_which_to_install_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)
    data = write_rows(tmp_path / "input", corpus_rows(3))
    assert main(["cluster", "-i", data, "-o", str(tmp_path / "out")]) == 1
    said = capsys.readouterr()
    assert said.out == "" and said.err.count("\n") == 1
    assert said.err.startswith("bartscore cluster: scoring on a Ray cluster needs Ray Data")
    assert said.err.rstrip().endswith('pip install "bartscore[ray]"')
    assert not os.path.exists(tmp_path / "out")


def test_a_local_cluster_asks_ray_for_the_loopback_address_and_a_joining_driver_leaves_ray_its_own(monkeypatch):
    """What Ray reads as it is first imported (the slow test below sees it read, in processes of their own): set for a
    cluster the run starts, left alone for a driver that joins one, and an operator's own setting kept."""
    from bart_score.scaling._cluster_ray import _ray_modules

    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    _ray_modules(local=False)
    assert "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" not in os.environ
    _ray_modules(local=True)
    assert os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "1")
    _ray_modules(local=True)
    assert os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "1"


@pytest.mark.slow  # Ray's first import in a process is what is tested: two processes of their own
def test_a_local_cluster_is_given_the_loopback_address_and_a_joining_driver_its_own():
    """Ray takes the node's address, which its servers listen on, when it is first imported: for a cluster the run
    starts, the loopback one; a driver that joins a cluster keeps Ray's own choice, the address its workers reach."""
    probe = (
        "import os, sys; from bart_score.scaling._cluster_ray import _ray_modules; "
        "_ray_modules(local=sys.argv[1] == 'local'); from ray._private.services import get_node_ip_address; "
        "print(get_node_ip_address(), os.environ.get('RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER'))"
    )
    environment = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    said = {}
    for kind in ("local", "joining"):
        done = subprocess.run(
            [sys.executable, "-c", probe, kind], capture_output=True, text=True, env=environment, timeout=120
        )
        assert done.returncode == 0, done.stderr
        said[kind] = done.stdout.split()
    assert said["local"] == ["127.0.0.1", "0"] and said["joining"][1] == "None", said
