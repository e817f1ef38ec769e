"""What `bartscore cluster` and score_on_ray refuse before any cluster is reached (bart_score.scaling.cluster): hostile
tables (ids that change type, cells of dicts or lists, a text longer than max_chars, a first row longer than pyarrow's
block, Parquet schema metadata over its bound) and hostile output folders (run.json, scores/ or checkpoint/ through a
symbolic link, a checkpoint without its scores, a planted row of another input). Each is one line on the command line,
with nothing of the user's changed; the pool's size and the batches' (_sized); and, in processes of their own, an
address where something that is not Ray listens, refused within PROBE_SECONDS, and the largest hostile tables, within
60 s and 3 GB."""

import json
import os
import socket
import subprocess
import sys
import threading

import pytest
from support.extras import require_extra

require_extra("ray")

import pyarrow as pa
import pyarrow.parquet as pq
from support.cli import run_cli

from bart_score import InputError
from bart_score.cli import main
from bart_score.options import BATCHES_PER_ACTOR, BATCHES_PER_ACTOR_TARGET, MAX_AUTO_BATCH_ROWS
from bart_score.scaling._cluster_input import MAX_TABLE_METADATA_BYTES, _check_table_metadata
from bart_score.scaling._cluster_pool import _sized
from bart_score.scaling._cluster_ray import PROBE_SECONDS
from bart_score.scaling.cluster import score_on_ray

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rows(count):
    return [
        {"id": f"row-{index}", "source": f"Source text {index}.", "a": f"Output {index}."} for index in range(count)
    ]


def write_parquet(path, table_rows, metadata=None):
    table = pa.Table.from_pylist(table_rows)
    if metadata is not None:
        table = table.replace_schema_metadata(metadata)
    pq.write_table(table, path)
    return str(path)


def write_jsonl(path, lines):
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return str(path)


def cluster_says(capsys, *arguments):
    """(exit status, stdout, stderr) of `bartscore cluster` in this process."""
    status = main(["cluster", *arguments])
    said = capsys.readouterr()
    return status, said.out, said.err


def folder_state(folder):
    return {
        os.path.relpath(os.path.join(place, name), folder): open(os.path.join(place, name), "rb").read()
        for place, _, names in os.walk(folder)
        for name in names
    }


# -- hostile tables --------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ids_that_change_type_are_one_line_naming_the_file(tmp_path, capsys):
    data = write_jsonl(tmp_path / "rows.jsonl", [{**row, "id": 1 if n else "1"} for n, row in enumerate(rows(2))])
    status, out, err = cluster_says(capsys, "-i", data, "-o", str(tmp_path / "out"))
    assert (status, out) == (2, "")
    assert err == (
        f"bartscore cluster: error: cannot read {data}: JSON parse error: Column(/id) changed from string to number "
        f"in row 1\n"
    )
    assert not os.path.exists(tmp_path / "out")


@pytest.mark.parametrize(
    "column, cell, kind",
    [
        ("a", {"text": "a dict"}, "struct<text: string>"),
        ("a", ["a", "list"], "list<item: string>"),
        ("source", 7, "int64"),
        ("reference", [{"text": "a"}], "list<item: struct<text: string>>"),
    ],
)
def test_cells_that_are_not_text_are_one_line_naming_the_column(tmp_path, capsys, column, cell, kind):
    """Refused from the table's types before the cluster is reached (they were refused by a scorer, after about 150
    lines of Ray's on the terminal)."""
    table_rows = [{**row, "reference": "A reference."} for row in rows(3)]
    for row in table_rows:
        row[column] = cell
    data = write_jsonl(tmp_path / "rows.jsonl", table_rows)
    status, out, err = cluster_says(capsys, "-i", data, "-o", str(tmp_path / "out"))
    assert (status, out) == (2, "")
    taken = "text or lists of text" if column == "reference" else "text"
    assert (
        err
        == f"bartscore cluster: error: {data} column {column!r} holds values of type {kind}, where it takes {taken}\n"
    )


def test_a_text_longer_than_max_chars_is_refused_naming_its_row_and_column(tmp_path, capsys):
    table_rows = rows(4)
    table_rows[2]["a"] = "word " * 400
    data = write_parquet(tmp_path / "rows.parquet", table_rows)
    status, out, err = cluster_says(capsys, "-i", data, "-o", str(tmp_path / "out"), "--max-chars", "1000")
    assert (status, out) == (2, "")
    assert err.startswith("bartscore cluster: error: row 'row-2', column 'a' has 2,000 characters, more than ")
    assert err.count("\n") == 1


def test_a_reference_in_a_list_longer_than_max_chars_is_named_by_its_row(tmp_path):
    table_rows = [{**row, "reference": ["short", "short"]} for row in rows(3)]
    table_rows[1]["reference"] = ["short", "x" * 50]
    data = write_parquet(tmp_path / "rows.parquet", table_rows)
    with pytest.raises(InputError, match=r"row 'row-1', column 'reference' has 50 characters, more than max_chars=40"):
        score_on_ray(data, str(tmp_path / "out"), max_chars=40)


def test_a_first_row_longer_than_pyarrows_block_keeps_every_id(tmp_path):
    """pyarrow's dataset reader of JSON lines read a first row over its block of 1 MiB, and the rest of that block,
    as rows without values ("row 1 has no id"); the rows are read as they are, and the long text refused as such."""
    table_rows = rows(3)
    table_rows[0]["source"] = "x" * 1_200_000
    data = write_jsonl(tmp_path / "rows.jsonl", table_rows)
    with pytest.raises(InputError, match=r"^row 'row-0', column 'source' has 1,200,000 characters, more than max_c"):
        score_on_ray(data, str(tmp_path / "out"))
    assert not os.path.exists(tmp_path / "out")


def test_parquet_schema_metadata_over_its_bound_is_refused(tmp_path, capsys):
    metadata = {b"padding": b"x" * (MAX_TABLE_METADATA_BYTES + 1)}
    data = write_parquet(tmp_path / "rows.parquet", rows(6), metadata)
    status, out, err = cluster_says(capsys, "-i", data, "-o", str(tmp_path / "out"))
    assert (status, out) == (2, "")
    assert err == (
        f"bartscore cluster: error: {data} holds {MAX_TABLE_METADATA_BYTES + 8:,} bytes of schema metadata, over the "
        f"{MAX_TABLE_METADATA_BYTES:,} a table may hold here; write the table without it (pyarrow: "
        f"table.replace_schema_metadata())\n"
    )
    pandas_like = write_parquet(tmp_path / "pandas.parquet", rows(6), {b"pandas": b"x" * 4096})  # as pandas writes
    _check_table_metadata(pandas_like)


# -- hostile output folders ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["run.json", "scores", "checkpoint"])
@pytest.mark.parametrize("target", ["a file", "nothing", "a folder"])
def test_the_output_is_never_reached_through_a_link(tmp_path, capsys, name, target):
    """run.json, scores/ or checkpoint/ a symbolic link to a file elsewhere, to nothing, or to a folder: refused in one
    line, the file elsewhere unchanged, nothing created where a dangling link points."""
    data = write_parquet(tmp_path / "rows.parquet", rows(3))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.txt").write_text("the user's\n")
    pointed = {"a file": elsewhere / "mine.txt", "nothing": elsewhere / "made.json", "a folder": elsewhere}[target]
    output = tmp_path / "out"
    output.mkdir()
    os.symlink(pointed, output / name)
    before = folder_state(elsewhere)

    status, out, err = cluster_says(capsys, "-i", data, "-o", str(output))
    assert (status, out) == (2, "")
    assert err == (
        f"bartscore cluster: error: {output / name} is a symbolic link, which a run's output never follows; give a "
        f"new or empty folder, or the folder of an earlier run as it wrote it\n"
    )
    assert folder_state(elsewhere) == before and not os.path.exists(elsewhere / "made.json")


def test_a_file_of_scores_or_checkpoint_that_is_a_link_is_refused(tmp_path):
    data = write_parquet(tmp_path / "rows.parquet", rows(3))
    outside = write_parquet(tmp_path / "outside.parquet", [{"id": "row-0"}])
    for folder in ("scores", "checkpoint"):
        output = tmp_path / f"out-{folder}"
        (output / folder).mkdir(parents=True)
        os.symlink(outside, output / folder / "part.parquet")
        with pytest.raises(InputError, match=f"{folder}/part.parquet' is a symbolic link"):
            score_on_ray(data, str(output))


def test_a_checkpoint_without_its_scores_is_one_line(tmp_path, capsys):
    data = write_parquet(tmp_path / "rows.parquet", rows(5))
    output = tmp_path / "out"
    (output / "checkpoint").mkdir(parents=True)
    pq.write_table(pa.table({"id": ["row-1", "row-3"]}), output / "checkpoint" / "done.parquet")
    before = folder_state(output)
    status, out, err = cluster_says(capsys, "-i", data, "-o", str(output))
    assert (status, out) == (2, "")
    assert err == (
        f"bartscore cluster: error: {output / 'checkpoint'} records 2 rows as written ('row-1', 'row-3') that scores/ "
        f"does not hold; give another output folder, or take checkpoint/ out to score every row again\n"
    )
    assert folder_state(output) == before


def test_a_planted_row_of_another_input_is_named_before_any_scoring(tmp_path, capsys):
    """A file in scores/ holding an id the input lacks: refused before the cluster, naming the id (it was found only
    at the end, as "rows missing ()")."""
    data = write_parquet(tmp_path / "rows.parquet", rows(5))
    output = tmp_path / "out"
    (output / "scores").mkdir(parents=True)
    pq.write_table(pa.table({"id": ["planted"], "a/faithfulness": [-1.0]}), output / "scores" / "x.parquet")
    status, out, err = cluster_says(capsys, "-i", data, "-o", str(output))
    assert (status, out) == (2, "")
    assert err == (
        f"bartscore cluster: error: {output} holds rows of another input: the id 'planted' is not in this one; give "
        f"another output folder, or that run's input\n"
    )


def test_an_output_holding_rows_not_in_the_input_says_so_at_the_end(tmp_path):
    """The final check's words name each kind of wrong row (rows not in the input were "rows missing ()")."""
    from bart_score.errors import ScoringError
    from bart_score.scaling._cluster_output import _OutputFolder

    output = tmp_path / "out"
    (output / "scores").mkdir(parents=True)
    pq.write_table(pa.table({"id": ["row-0", "row-1", "planted"]}), output / "scores" / "x.parquet")
    with pytest.raises(ScoringError, match=r"does not hold each input row once: rows not in the input \('planted'\)$"):
        _OutputFolder(str(output)).finish(["row-0", "row-1"], "id")


def test_a_file_of_scores_a_killed_run_left_under_a_pending_checkpoint_is_left_to_the_recovery(tmp_path):
    """Ray Data writes a batch's pending checkpoint, then its file of scores, then commits: a driver killed in between
    leaves that file, perhaps cut short (not a Parquet file), which the rerun's recovery deletes. The checks before
    the rerun read no such file (CI's killed-driver test met one cut short: "Parquet magic bytes not found"); a file
    cut short that no pending checkpoint names is still refused, naming the output folder."""
    from bart_score.scaling._cluster_output import _OutputFolder

    output = tmp_path / "out"
    (output / "scores").mkdir(parents=True)
    (output / "checkpoint").mkdir()
    pq.write_table(pa.table({"id": ["row-0"]}), output / "checkpoint" / "done_000001.parquet")
    pq.write_table(pa.table({"id": ["row-0"], "a/faithfulness": [-1.0]}), output / "scores" / "done_000001-0.parquet")
    pq.write_table(pa.table({"id": ["row-1"]}), output / "checkpoint" / "cut_000002.pending.parquet")
    (output / "scores" / "cut_000002-0.parquet").write_bytes(b"PAR1" + b"\0" * 100)  # cut short: no footer
    folder = _OutputFolder(str(output))
    assert [os.path.basename(path) for path in folder.score_files()] == ["done_000001-0.parquet"]
    done = folder.committed_ids("id")
    assert done == {"row-0"}
    folder.check_ids(["row-0", "row-1"], done, "id")

    (output / "checkpoint" / "cut_000002.pending.parquet").unlink()
    with pytest.raises(InputError, match="Parquet magic bytes not found"):
        _OutputFolder(str(output)).check_ids(["row-0", "row-1"], done, "id")


# -- the pool's size -------------------------------------------------------------------------------------------------


def test_the_batches_and_the_pool_are_sized_from_the_table():
    """By default BATCHES_PER_ACTOR_TARGET batches per actor (a killed driver loses the batches being scored, a few
    percent), at most MAX_AUTO_BATCH_ROWS rows each; an actor for at most every BATCHES_PER_ACTOR batches, whatever
    was asked for; a given batch size kept."""
    for actors, table_rows in [(1, 6), (40, 6), (1, 300), (2, 300), (4, 100_000), (8, 10_000_000), (1024, 50)]:
        pool, batch = _sized(actors, table_rows, None)
        batches = -(-table_rows // batch)
        assert 1 <= pool <= actors and 1 <= batch <= MAX_AUTO_BATCH_ROWS
        assert pool <= -(-batches // BATCHES_PER_ACTOR)
        if batch < MAX_AUTO_BATCH_ROWS and batch > 1:
            assert batches >= pool * BATCHES_PER_ACTOR_TARGET * 0.9
    assert _sized(40, 6, None) == (2, 1)
    assert _sized(1, 300, None) == (1, 10)
    assert _sized(2, 40, 7) == (2, 7)
    assert _sized(8, 40, 7) == (2, 7)


def test_actors_over_their_bound_are_refused(tmp_path, capsys):
    data = write_parquet(tmp_path / "rows.parquet", rows(3))
    status, out, err = cluster_says(capsys, "-i", data, "-o", str(tmp_path / "out"), "--actors", "1025")
    assert (status, out) == (2, "")
    assert "--actors must be an integer from 1 to 1024" in err and err.count("\n") == 1


# -- in processes of their own ---------------------------------------------------------------------------------------


class Listener:
    """A server on 127.0.0.1 that is not Ray: one that accepts and says nothing, or one that answers HTTP/1.1."""

    def __init__(self, answers):
        self.answers = answers
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.held = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            if self.answers:
                connection.recv(1024)
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                connection.close()
            else:
                self.held.append(connection)

    def close(self):
        self.server.close()
        for connection in self.held:
            connection.close()


@pytest.mark.slow
@pytest.mark.parametrize("answers", [False, True], ids=["silent", "http"])
def test_an_address_where_something_else_listens_is_one_line(tmp_path, answers):
    """A port that accepts connections but is not Ray (it hung past 200 s with 17 lines of Ray's warnings): one line
    within PROBE_SECONDS of the probe (the bound here leaves the command's start a margin on a busy machine), exit 1,
    nothing written."""
    listener = Listener(answers)
    data, output = write_parquet(tmp_path / "rows.parquet", rows(3)), str(tmp_path / "out")
    try:
        for address in (f"127.0.0.1:{listener.port}", f"ray://127.0.0.1:{listener.port}"):
            status, stdout, stderr = run_cli("cluster", "-i", data, "-o", output, "--address", address, timeout=180)
            server = "a Ray Client server" if address.startswith("ray://") else "a Ray cluster's head"
            how = "(unavailable)" if answers else f"within {PROBE_SECONDS} s"
            assert (status, stdout) == (1, "")
            assert stderr == (
                f"bartscore cluster: cannot reach the Ray cluster at {address!r}: what listens there does not answer "
                f"as {server} {how}; start it, or give the address of a running one as --address\n"
            )
            assert not os.path.exists(output)
    finally:
        listener.close()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["jsonl-cell", "parquet-cell", "metadata"])
def test_the_largest_hostile_tables_end_in_one_line_within_their_bounds(tmp_path, kind):
    """Under 3 GB of address space and 60 s, a 100 MB cell (a JSON line over its bound; in Parquet, a text over
    --max-chars) and 50 MB of schema metadata are one line each, before any cluster (measured without the bounds: a
    500 MB cell ended in 22 lines; 50 MB of metadata on 6 rows took 4.56 GB and 97 s)."""
    table_rows = rows(6)
    table_rows[3]["a"] = "x" * 100_000_000
    if kind == "jsonl-cell":
        data = write_jsonl(tmp_path / "rows.jsonl", table_rows)
        expected = f"{data} line 4 holds more than 67,108,864 bytes, the most a row may hold here"
    elif kind == "parquet-cell":
        data = write_parquet(tmp_path / "rows.parquet", table_rows)
        expected = "row 'row-3', column 'a' has 100,000,000 characters, more than --max-chars 1000000"
    else:
        data = write_parquet(tmp_path / "rows.parquet", rows(6), {b"padding": b"x" * 50_000_000})
        expected = "50,000,007 bytes of schema metadata"
    command = [sys.executable, os.path.join(ROOT, "bartscore.py"), "cluster", "-i", data, "-o", str(tmp_path / "out")]
    done = subprocess.run(
        ["prlimit", f"--as={3 << 30}", "--", "timeout", "60", *command],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 2 and done.stdout == "", done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and expected in done.stderr, done.stderr
    assert not os.path.exists(tmp_path / "out")
