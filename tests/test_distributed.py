"""Data-parallel scoring on torch.distributed: 2 and 3 CPU processes with gloo, compared with one process."""

import json
import random

import numpy as np
import pytest
import torch.multiprocessing
from support import distributed_worker
from support.text import english_like_text

TOLERANCE = 1e-5


def engine_inputs():
    rng = random.Random(11)
    sources = [english_like_text(rng, rng.randint(5, 60)) for _ in range(5)]
    # several targets per source, repeated pairs, and one source far longer than the rest (split across ranks)
    pairs = [(sources[i % 5], english_like_text(rng, rng.randint(2, 20))) for i in range(17)]
    pairs += [pairs[0], pairs[3]] + [(sources[0] * 3, english_like_text(rng, 12)) for _ in range(6)]
    return [s for s, _ in pairs], [t for _, t in pairs]


def launch(world, tmp_path, checkpoint, sources, targets):
    torch.multiprocessing.spawn(
        distributed_worker.run,
        nprocs=world,
        join=True,
        args=(world, str(tmp_path / "init"), checkpoint, str(tmp_path), sources, targets),
    )
    return [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(world)]


@pytest.mark.slow
@pytest.mark.parametrize("world", [2, 3])
def test_distributed_scores_equal_single_process_scores_in_input_order(world, tmp_path, scorer, tiny_checkpoint):
    sources, targets = engine_inputs()
    if world == 3:  # a world larger than the work: two pairs for three ranks
        sources, targets = sources[:2], targets[:2]
    ranks = launch(world, tmp_path, tiny_checkpoint, sources, targets)
    expected = scorer.score(sources, targets)
    expected_tokens = scorer.score_tokens(sources[:2], targets[:2])
    for rank, got in enumerate(ranks):
        assert np.max(np.abs(np.array(got["engine"]) - expected)) < TOLERANCE
        for got_pieces, expected_pieces in zip(got["engine_tokens"], expected_tokens):
            assert [t for t, _ in got_pieces] == [t for t, _ in expected_pieces]
            assert np.allclose([lp for _, lp in got_pieces], [lp for _, lp in expected_pieces], atol=TOLERANCE)
        if rank == 0:
            assert np.max(np.abs(np.array(got["engine_rank0"]) - expected)) < TOLERANCE
        else:
            assert got["engine_rank0"] is None
        assert "srcs and tgts differ between ranks ([" in got["mismatch_error"]
        if rank == 0:
            assert got["failure_error"] == "simulated failure on rank 0"
        else:
            assert got["failure_error"] == (
                "rank 0 failed, so this call has no results: RuntimeError: simulated failure on rank 0"
            )

    # The metric: each rank computed on its own (uneven, possibly empty) shard; all get every rank's results.
    everything = distributed_worker
    expected_metric = scorer.score_directions(
        everything.PREDICTIONS, references=everything.REFERENCES, sources=everything.SOURCES
    )
    for got in ranks:
        for direction in ("faithfulness", "precision", "recall", "f_score"):
            assert np.max(np.abs(np.array(got["metric"][direction]) - expected_metric[direction])) < TOLERANCE
            assert got["metric"][f"{direction}_mean"] == pytest.approx(
                expected_metric[f"{direction}_mean"], abs=TOLERANCE
            )


@pytest.mark.parametrize("world", [2, 3, 5])
def test_work_is_balanced_by_tokens_not_examples(tiny_checkpoint, scorer, world):
    import bart_score

    sources, targets = engine_inputs()
    plan = scorer._plan(sources, targets)
    shares = [bart_score.scaling._distributed.ProcessGroup(world, rank).share(plan) for rank in range(world)]
    assigned = sorted(p for share in shares for pairs in share.values() for p in pairs)
    assert assigned == list(range(len(plan.pairs)))  # every distinct pair exactly once
    assert all(plan.pairs[p][0] == condition for share in shares for condition, ps in share.items() for p in ps)
    encodings = sum(len(share) for share in shares)
    assert encodings <= len(plan.pairs_by_condition) + world - 1

    def tokens(share):
        return sum(plan.condition_length(c) for c in share) + sum(
            plan.target_length(plan.pairs[p][1]) for ps in share.values() for p in ps
        )

    loads = [tokens(share) for share in shares]
    largest_item = max(plan.condition_length(c) + plan.target_length(t) for c, t in plan.pairs)
    assert max(loads) <= sum(loads) / world + largest_item, loads


@pytest.mark.slow
def test_command_line_under_torchrun_writes_the_single_process_results_once(tmp_path, scorer, tiny_checkpoint):
    import os
    import subprocess
    import sys

    sources, targets = engine_inputs()
    (tmp_path / "src.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (tmp_path / "hyp.txt").write_text("\n".join(targets) + "\n", encoding="utf-8")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node",
            "2",
            os.path.join(root, "bartscore.py"),
            "score",
            "-m",
            tiny_checkpoint,
            "-s",
            str(tmp_path / "src.txt"),
            "-t",
            str(tmp_path / "hyp.txt"),
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"},
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.strip().split("\n")
    assert lines[0] == "system\tsegment\tfaithfulness" and len(lines) == 1 + len(sources)
    got = [float(line.split("\t")[2]) for line in lines[1:]]
    assert np.max(np.abs(np.array(got) - scorer.score(sources, targets))) < TOLERANCE
