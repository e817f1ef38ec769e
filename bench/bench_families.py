#!/usr/bin/env python
"""The engine on other model families against a naive per-pair baseline, side by side in one run.

For a T5-base-shaped sequence-to-sequence model and a GPT-2-shaped causal LM (random weights, the real checkpoints'
dimensions and output-layer sizes, a tokenizer trained on the spot; built once under --workdir and loaded through
BARTScorer(checkpoint=dir) as users load checkpoints), it scores the cases of workload.py on a SummEval-shaped
workload:

  (a) faithfulness: source -> hypothesis, every pair;
  (b) all four directions with 11 references;
  (c) faithfulness with the 70 decoder-side "summary" prompts, on --prompt-sources sources.

Baselines, each deliberately naive and written from the peers' algorithms: for T5, T5Score's loop (pairs in input
order, batches of 4, `model(..., labels=)`, a log-softmax over the whole vocabulary, NLL ignoring pad, divided by the
target length); for GPT-2, GPTScore's loop (one pair at a time, the whole prefix + target run through the model, a
log-softmax over every position), here under the engine's causal token policy so that the scores compare.

Every timed run is a fresh spawned process: load, warm up on a few pairs, reset the peak-RSS mark, time the call;
with --repeat N the methods alternate N times and the fastest run of each is kept.
It prints seconds, the speed-up, the largest score difference and the peak resident memory of both. Run
`python bench/bench_families.py --help` for the options; README.md beside this file gives the commands.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import _setup  # noqa: F401
import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch
import transformers
import workload

transformers.utils.logging.disable_progress_bar()

# The real checkpoints' dimensions: t5-base (and flan-t5-base's sizes but its untied head), and gpt2 (124M).
SHAPES = {
    "t5": dict(d_model=768, d_ff=3072, num_layers=12, num_decoder_layers=12, num_heads=12, d_kv=64, vocab_size=32128),
    "gpt2": dict(n_embd=768, n_layer=12, n_head=12, n_positions=1024, vocab_size=50257),
}
TINY_SHAPES = {  # for smoke runs of the benchmark itself
    "t5": dict(d_model=64, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4, d_kv=16, vocab_size=32128),
    "gpt2": dict(n_embd=64, n_layer=2, n_head=4, n_positions=1024, vocab_size=50257),
}
NAIVE_BATCH = {"t5": 4, "gpt2": 1}  # T5Score batches 4 pairs; GPTScore scores one pair at a time
TARGET_SPEEDUP_A = 3.0
MAX_DIFF_TARGET = 1e-5


# ---------------------------------------------------------------------------------------------------------------------
# Checkpoints


def build_or_reuse(workdir, family, tiny):
    """A random checkpoint of `family` with real dimensions, saved once under `workdir` and reused."""
    shape = (TINY_SHAPES if tiny else SHAPES)[family]
    directory = os.path.join(workdir, f"random-{family}-{'tiny' if tiny else 'base'}")
    return workload.built_once(
        directory, f"a random {family} checkpoint", lambda staging: _build(staging, family, shape)
    )


def _build(staging, family, shape):
    """The tiny checkpoint's tokenizer under a model of `shape`."""
    from support.models import build_tiny

    build_tiny(family, staging)  # the tokenizer (trained on the spot) and its special-token ids
    tokenizer = transformers.AutoTokenizer.from_pretrained(staging, trust_remote_code=False)
    torch.manual_seed(0)
    if family == "t5":
        config = transformers.T5Config(
            **shape,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
            decoder_start_token_id=tokenizer.pad_token_id,
        )
        model = transformers.T5ForConditionalGeneration(config)
    else:
        config = transformers.GPT2Config(
            **shape, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id
        )
        model = transformers.GPT2LMHeadModel(config)
    for name in os.listdir(staging):  # the tiny model's weights and config go; its tokenizer stays
        if name.startswith(("model", "config", "pytorch_model", "generation_config")):
            os.remove(os.path.join(staging, name))
    model.save_pretrained(staging)


# ---------------------------------------------------------------------------------------------------------------------
# The naive baselines


def naive_t5(model, tokenizer, conditions, targets, device):
    """T5Score's loop: batches of 4 in input order, labels=, a full log-softmax, NLL ignoring pad / target length."""
    return workload.naive_scores(model, tokenizer, conditions, targets, device)


def run_baseline(scorer, case, family_name):
    passes = []
    for p in case.passes:
        if family_name == "t5":
            passes.append(naive_t5(scorer.model, scorer.tokenizer, p.conditions, p.targets, scorer.device))
        else:
            passes.append(  # GPTScore's loop
                workload.naive_causal_scores(
                    scorer.model, scorer.tokenizer, scorer.family.start_ids, p.conditions, p.targets, scorer.device
                )
            )
    return workload.combine_passes(case.passes, passes)


# ---------------------------------------------------------------------------------------------------------------------
# Measuring


@dataclass
class Job:
    family: str
    checkpoint: str
    case: object
    method: str  # "baseline" or "engine"
    device: str
    dtype: str
    threads: int
    max_tokens: int | None


def measure(job):
    from bart_score import BARTScorer

    torch.set_num_threads(job.threads)
    options = {} if job.max_tokens is None else {"max_tokens": job.max_tokens}
    dtype = job.dtype if job.method == "engine" else "float32"
    scorer = BARTScorer(checkpoint=job.checkpoint, device=job.device, dtype=dtype, **options)
    first = job.case.passes[0]
    if job.method == "engine":
        scorer.score(first.conditions[:4], first.targets[:4])
    else:
        run_baseline(
            scorer,
            workload.Case("warm-up", {}, [workload.Pass(first.direction, first.conditions[:4], first.targets[:4])], 4),
            job.family,
        )
    cuda = scorer.device.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(scorer.device)
    resident = workload.status_bytes("VmRSS")
    workload.reset_peak_rss()
    start = time.perf_counter()
    if job.method == "engine":
        scores = workload.run_engine(scorer, job.case)
    else:
        scores = run_baseline(scorer, job.case, job.family)
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated(scorer.device) if cuda else workload.status_bytes("VmHWM")
    return dict(seconds=seconds, scores=scores, peak=peak, resident=resident)


def measure_in_child(job):
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(measure, job).result()


def mib(n):
    return f"{n / 2**20:,.0f} MiB"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", choices=tuple(SHAPES), default=list(SHAPES))
    parser.add_argument("--cases", nargs="+", choices=("a", "b", "c"), default=["a", "b", "c"])
    parser.add_argument("--sources", type=int, default=2, help="source documents (16 hypotheses, 11 references each)")
    parser.add_argument("--hypotheses", type=int, default=16)
    parser.add_argument("--references", type=int, default=11)
    parser.add_argument("--prompt-sources", type=int, default=1, help="sources used by case (c)")
    parser.add_argument("--prompts", type=int, default=70, help="prompts of the summary set used by case (c)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", help="the engine's dtype (the baseline runs in float32)")
    parser.add_argument("--max-tokens", type=int, help="the engine's token budget (default: the engine's)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each method, alternating; best kept")
    parser.add_argument("--tiny", action="store_true", help="tiny models, for smoke runs of this script")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "bartscore-bench"))
    args = parser.parse_args(argv)

    os.makedirs(args.workdir, exist_ok=True)
    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, {args.threads} threads, "
        f"device {args.device}, engine dtype {args.dtype}"
    )
    rows = []
    for family in args.families:
        checkpoint = build_or_reuse(args.workdir, family, args.tiny)
        tokenizer = transformers.AutoTokenizer.from_pretrained(checkpoint, trust_remote_code=False)
        texts = workload.make_workload(tokenizer, args.sources, args.hypotheses, args.references, seed=0)
        for key in args.cases:
            case = workload.build_case(key, texts, args.prompt_sources, args.prompts)
            results = {}
            for _ in range(args.repeat):  # alternating, so that a change in a shared machine's load hits both
                for method in ("baseline", "engine"):
                    job = Job(family, checkpoint, case, method, args.device, args.dtype, args.threads, args.max_tokens)
                    run = measure_in_child(job)
                    if method not in results or run["seconds"] < results[method]["seconds"]:
                        results[method] = run
            base, engine = results["baseline"], results["engine"]
            difference = max(
                float(np.max(np.abs(np.asarray(engine["scores"][d]) - base["scores"][d]))) for d in base["scores"]
            )
            row = dict(
                family=family,
                case=workload.CASE_TITLES[key],
                pairs=len(case.pairs),
                baseline_s=base["seconds"],
                engine_s=engine["seconds"],
                speedup=base["seconds"] / engine["seconds"],
                max_diff=difference,
                baseline_peak=base["peak"],
                engine_peak=engine["peak"],
                resident=engine["resident"],
            )
            rows.append(row)
            print(
                f"{family:5} {row['case']:28} {row['pairs']:6} pairs  baseline {row['baseline_s']:8.2f} s  engine "
                f"{row['engine_s']:8.2f} s  speed-up {row['speedup']:5.2f}x  max |diff| {difference:.1e}  peak "
                f"{mib(row['baseline_peak'])} / {mib(row['engine_peak'])}",
                flush=True,
            )
    print("\n| family | case | pairs | baseline s | engine s | speed-up | max abs diff | peak baseline / engine |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['family']} | {row['case']} | {row['pairs']} | {row['baseline_s']:.2f} | {row['engine_s']:.2f} "
            f"| **{row['speedup']:.2f}x** | {row['max_diff']:.1e} | {mib(row['baseline_peak'])} / "
            f"{mib(row['engine_peak'])} |"
        )
    for row in rows:
        checks = []
        if row["case"].startswith("(a)"):
            checks.append(f"speed-up {'meets' if row['speedup'] >= TARGET_SPEEDUP_A else 'MISSES'} {TARGET_SPEEDUP_A}x")
        if args.dtype == "float32":
            checks.append(
                f"scores {'within' if row['max_diff'] <= MAX_DIFF_TARGET else 'NOT within'} {MAX_DIFF_TARGET:g}"
            )
        checks.append(
            f"peak memory {'not above' if row['engine_peak'] <= row['baseline_peak'] else 'ABOVE'} the baseline's"
        )
        print(f"{row['family']} {row['case']}: " + "; ".join(checks))


if __name__ == "__main__":
    main()
