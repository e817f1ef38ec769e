"""Data-parallel scoring benchmark (issue 6): the same workload scored by 1 process and by N processes joined in a
torch.distributed (gloo) group on CPU, reporting throughput, the speed-up over one process, how evenly the planned
work was split across ranks, and the largest score difference to the single-process run.

    python bench/bench_distributed.py                      # bart-base dimensions, 2 sources, 1 and 2 processes
    python bench/bench_distributed.py --dims tiny --sources 1   # smoke run

The machine's cores are divided between the processes (2 cores: 1 process x 2 threads, then 2 processes x 1 thread),
so on a small CPU this measures the cost of splitting and gathering rather than new hardware; on GPUs each rank has
its own device (docs/scaling.md: torchrun / accelerate launch)."""

import argparse
import json
import os
import sys
import tempfile
import time

import _setup  # noqa: F401
import numpy as np
import torch
import torch.multiprocessing
from bench_engine import build_or_reuse_checkpoint
from workload import make_workload


def rank_main(rank, world, init_file, checkpoint, threads, request, out_dir):
    """One rank: joins the group (if any), warms up, then times one planned call of every direction."""
    torch.set_num_threads(threads)
    if world > 1:
        torch.distributed.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    import bart_score

    scorer = bart_score.BARTScorer(checkpoint=checkpoint, device="cpu")
    scorer.score(request["sources"][:2], request["predictions"][:2])  # warm-up, the same on every rank
    if world > 1:
        torch.distributed.barrier()
    start = time.perf_counter()
    result = scorer.score_directions(
        request["predictions"], references=request["references"], sources=request["sources"]
    )
    seconds = time.perf_counter() - start
    if rank == 0:
        plan = scorer._plan(*request_pairs(request))
        shares = [
            bart_score.scaling._distributed.ProcessGroup(world, r).share(plan) if world > 1 else plan.pairs_by_condition
            for r in range(world)
        ]
        loads = [
            sum(map(plan.condition_length, share))
            + sum(plan.target_length(plan.pairs[p][1]) for ps in share.values() for p in ps)
            for share in shares
        ]
        with open(os.path.join(out_dir, f"world{world}.json"), "w", encoding="utf-8") as handle:
            json.dump({"seconds": seconds, "result": result, "tokens_per_rank": loads}, handle)
    if world > 1:
        torch.distributed.barrier()  # no rank tears gloo down while another is still talking to it
        torch.distributed.destroy_process_group()


def request_pairs(request):
    """The (condition, target) pairs score_directions makes of the request: faithfulness, precision, recall."""
    conditions, targets = [], []
    for source, prediction, references in zip(request["sources"], request["predictions"], request["references"]):
        conditions.append(source)
        targets.append(prediction)
        for reference in references:
            conditions += [reference, prediction]
            targets += [prediction, reference]
    return conditions, targets


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=2, help="source documents (16 hypotheses, 11 references each)")
    parser.add_argument("--hypotheses", type=int, default=16)
    parser.add_argument("--references", type=int, default=11)
    parser.add_argument("--dims", choices=("tiny", "base", "large"), default="base")
    parser.add_argument("--worlds", default="1,2", help="comma-separated process counts (default 1,2)")
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="CPU cores divided between the processes")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "bartscore-bench"))
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    checkpoint = build_or_reuse_checkpoint(args.workdir, args.dims)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(checkpoint, trust_remote_code=False)
    workload = make_workload(tokenizer, args.sources, args.hypotheses, args.references, seed=0)
    request = {
        "sources": [s for s, hyps in zip(workload.sources, workload.hypotheses) for _ in hyps],
        "predictions": [h for hyps in workload.hypotheses for h in hyps],
        "references": [refs for refs, hyps in zip(workload.references, workload.hypotheses) for _ in hyps],
    }
    conditions, targets = request_pairs(request)
    target_tokens = sum(len(ids) for ids in tokenizer(targets, max_length=1024, truncation=True)["input_ids"])

    rows = []
    with tempfile.TemporaryDirectory() as out_dir:
        for world in map(int, args.worlds.split(",")):
            threads = max(1, args.cores // world)
            print(f"{world} process(es) x {threads} thread(s) ...", flush=True)
            init_file = os.path.join(out_dir, f"init{world}")
            torch.multiprocessing.spawn(
                rank_main, nprocs=world, join=True, args=(world, init_file, checkpoint, threads, request, out_dir)
            )
            with open(os.path.join(out_dir, f"world{world}.json"), encoding="utf-8") as handle:
                rows.append({"world": world, "threads": threads, **json.load(handle)})

    single = rows[0]
    print(
        f"\nworkload: {args.sources} sources x {args.hypotheses} hypotheses x {args.references} references, all four "
        f"directions: {len(conditions):,} pairs, {target_tokens:,} target tokens; model: {args.dims} dimensions; "
        f"torch {torch.__version__}, {args.cores} cores\n"
    )
    print(
        "| processes | threads each | seconds | pairs/s | target tok/s | speed-up vs 1 | planned tokens per rank "
        "(max/min) | max abs diff vs 1 process |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        diff = max(
            float(np.max(np.abs(np.array(row["result"][d]) - single["result"][d])))
            for d in ("faithfulness", "precision", "recall", "f_score")
        )
        loads = row["tokens_per_rank"]
        print(
            f"| {row['world']} | {row['threads']} | {row['seconds']:.2f} | {len(conditions) / row['seconds']:.1f} | "
            f"{target_tokens / row['seconds']:.0f} | {single['seconds'] / row['seconds']:.2f}x | "
            f"{', '.join(f'{x:,}' for x in loads)} ({max(loads) / min(loads):.3f}) | {diff:.1e} |"
        )
        row["max_abs_diff"] = diff
    print(f"\ncommand: python {' '.join(sys.argv)}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([{k: v for k, v in row.items() if k != "result"} for row in rows], handle, indent=2)


if __name__ == "__main__":
    main()
