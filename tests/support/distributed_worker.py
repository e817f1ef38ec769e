"""One rank of the multi-process tests: joins a gloo process group and runs the scenarios, writing what it got to
<out>/rank<k>.json. It lives in its own module so that torch.multiprocessing can spawn it."""

import json
import os

import torch

# Per-rank inputs of the metric scenario: uneven shards, and a rank with nothing when the world is larger.
SOURCES = [f"Source number {i}: the cat sat on the mat near the river." for i in range(7)]
PREDICTIONS = [f"Prediction {i} says the cat sat." for i in range(7)]
REFERENCES = [[f"Reference {i}.", f"Another reference {i}."][: 1 + i % 2] for i in range(7)]


def metric_shard(rank):
    """Rank k gets a contiguous slice: 3 examples, then 4, then none (a rank beyond the data)."""
    bounds = [0, 3, 7, 7]
    return slice(bounds[rank], bounds[rank + 1])


def run(rank, world, init_file, checkpoint, out_dir, engine_sources, engine_targets):
    torch.set_num_threads(1)
    torch.distributed.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    import bart_score
    import bartscore
    from bart_score.integrations._shared_engines import SharedEngine

    got = {}
    scorer = bart_score.BARTScorer(checkpoint=checkpoint, device="cpu")
    got["engine"] = scorer.score(engine_sources, engine_targets)
    got["engine_tokens"] = scorer.score_tokens(engine_sources[:2], engine_targets[:2])

    rank0 = bart_score.BARTScorer(checkpoint=checkpoint, device="cpu", results_on="rank0")
    got["engine_rank0"] = rank0.score(engine_sources, engine_targets)

    try:
        scorer.score([f"rank {rank} only"], ["differs"])
        got["mismatch_error"] = None
    except ValueError as error:
        got["mismatch_error"] = str(error)

    # Rank 0 (which always has work) fails mid-call: every rank must raise instead of waiting for its results.
    failing = bart_score.BARTScorer(checkpoint=checkpoint, device="cpu")
    if rank == 0:

        def broken_decode(*args):
            raise RuntimeError("simulated failure on rank 0")

        failing._decode = broken_decode
    try:
        failing.score(engine_sources, engine_targets)
        got["failure_error"] = None
    except RuntimeError as error:
        got["failure_error"] = str(error)

    metric = bartscore.BARTScore(checkpoint)
    metric._engine = SharedEngine(scorer)
    shard = metric_shard(rank)
    result = metric.compute(predictions=PREDICTIONS[shard], references=REFERENCES[shard], sources=SOURCES[shard])
    got["metric"] = {k: v for k, v in result.items() if k != "signature"}

    with open(os.path.join(out_dir, f"rank{rank}.json"), "w", encoding="utf-8") as handle:
        json.dump(got, handle)
    torch.distributed.barrier()  # no rank tears gloo down while another is still talking to it
    torch.distributed.destroy_process_group()
    # The results are on disk; skipping interpreter finalisation keeps gloo's lingering worker threads from
    # occasionally aborting a rank that has already finished (a torch teardown race, not a scoring failure).
    os._exit(0)
