#!/usr/bin/env python
"""Scoring through a real inference server: llama.cpp's llama-server (the binary .ci/llama-server builds into the
tests' model cache) on the real SmolLM2-135M-Instruct GGUF file (tests/support/real_model.py), bound to 127.0.0.1 with
--offline, against the engine on the same file.

For each concurrency asked for, a fresh server (its prompt cache empty, --parallel slots as many as the concurrency)
scores the same SummEval-shaped pairs (workload.py's texts: sources of about 450 tokens, summaries of about 85, three
per source, faithfulness) with BARTScorer(checkpoint="llama.cpp+<url>", concurrency=N), the concurrencies taken in
turn, round after round, so that a shared machine's load falls on each alike; it prints the seconds and pairs/s of
each scoring (the load apart) and each concurrency's median and best, then the engine's, and the served scores beside
the engine's: mean and largest absolute difference, and Spearman's correlation. Each run's scores are compared with
the first run's: llama.cpp rounds a batch of slots' tokens otherwise than one slot's. llama.cpp computes on the
quantized weights, the engine on them dequantized to float32.

    python bench/bench_served.py [--pairs 30] [--concurrency 1 2 4] [--threads 1] [--rounds 3]

Measured on two shared cores (bench/README.md, "Served models"): 0.30, 0.18 and 0.18 pairs/s at concurrency 1, 2 and
4 (medians of 2 rounds), the engine 1.55 pairs/s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import _setup  # noqa: F401
import scipy.stats


def pairs_of(gguf: str, count: int) -> tuple[list[str], list[str]]:
    """`count` (source, summary) pairs of SummEval's shape, three summaries a source."""
    from transformers import AutoTokenizer
    from workload import make_workload

    folder, name = os.path.split(gguf)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name, trust_remote_code=False)
    workload = make_workload(
        tokenizer, sources=-(-count // 3), hypotheses_per_source=3, references_per_source=0, seed=0
    )
    pairs = [
        (source, summary) for source, summaries in zip(workload.sources, workload.hypotheses) for summary in summaries
    ]
    return [source for source, _ in pairs[:count]], [summary for _, summary in pairs[:count]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=30, help="pairs scored (default 30)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4], help="(default 1 2 4)")
    parser.add_argument("--threads", type=int, default=1, help="llama-server's threads (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the concurrencies, interleaved (default 3)")
    args = parser.parse_args()

    from support import real_model
    from support.llama_server import HOW_TO_BUILD, LlamaServer, llama_server_binary

    import bart_score

    if llama_server_binary() is None:
        raise SystemExit(f"bench_served: {HOW_TO_BUILD}")
    try:
        gguf = real_model.smollm2_gguf()
    except real_model.ModelUnavailable as error:
        raise SystemExit(f"bench_served: {error}") from None
    conditions, targets = pairs_of(gguf, args.pairs)
    print(f"{len(conditions)} pairs, {len(set(conditions))} sources; llama-server threads {args.threads}", flush=True)

    served: list[float] = []
    rates: dict[int, list[float]] = {concurrency: [] for concurrency in args.concurrency}
    with tempfile.TemporaryDirectory() as logs:
        for round_number in range(1, args.rounds + 1):
            for concurrency in args.concurrency:
                log = os.path.join(logs, f"llama-server-{round_number}-{concurrency}.log")
                with LlamaServer(gguf, log, slots=concurrency, threads=args.threads) as server:
                    scorer = bart_score.BARTScorer(
                        checkpoint=f"llama.cpp+{server.url}", device="cpu", concurrency=concurrency
                    )
                    started = time.perf_counter()
                    scores = scorer.score(conditions, targets)
                    seconds = time.perf_counter() - started
                served = served or scores
                rates[concurrency].append(len(conditions) / seconds)
                print(
                    f"round {round_number}, llama-server, concurrency {concurrency}: {seconds:.1f} s, "
                    f"{len(conditions) / seconds:.3f} pairs/s, scores at most "
                    f"{max(abs(a - b) for a, b in zip(scores, served)):.2g} from the first run's",
                    flush=True,
                )
    for concurrency, measured in rates.items():
        print(
            f"llama-server, concurrency {concurrency}: median {statistics.median(measured):.3f} pairs/s, best "
            f"{max(measured):.3f} ({args.rounds} rounds)"
        )

    engine = bart_score.BARTScorer(checkpoint=gguf, device="cpu")
    started = time.perf_counter()
    local = engine.score(conditions, targets)
    seconds = time.perf_counter() - started
    print(f"engine (float32, CPU): {seconds:.1f} s, {len(conditions) / seconds:.3f} pairs/s")
    differences = [abs(a - b) for a, b in zip(served, local)]
    print(
        f"served vs engine: mean |difference| {statistics.fmean(differences):.4f}, largest {max(differences):.4f}, "
        f"Spearman {scipy.stats.spearmanr(served, local).statistic:.4f}; the engine's scores from {min(local):.3f} to "
        f"{max(local):.3f}, standard deviation {statistics.stdev(local):.3f}"
    )


if __name__ == "__main__":
    main()
