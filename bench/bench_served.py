#!/usr/bin/env python
"""Scoring through a real inference server: llama.cpp's llama-server (the binary .ci/llama-server builds into the
tests' model cache) on the real SmolLM2-135M-Instruct GGUF file (tests/support/real_model.py), bound to 127.0.0.1 with
--offline, against the engine on the same file.

For each concurrency asked for, a fresh server (--parallel slots as many as the concurrency) scores the same
SummEval-shaped pairs (workload.py's texts: sources of about 450 tokens, summaries of about 85, three per source,
faithfulness) with BARTScorer(checkpoint="llama.cpp+<url>", served_tokenizer=<the file>, concurrency=N) --runs times in
turn, the first run on the fresh server; the concurrencies are taken in turn, round after round, so that a shared
machine's load falls on each alike. With --prompt-cache on off, each concurrency is also run with the requests allowed
to start from the server's cached state of an earlier prompt (cache_prompt, which bartscore sends false), to measure
what that saves and how it moves the scores. Each run prints its seconds and pairs/s (which the load stretches), the
server's CPU seconds a pair (which it stretches far less), and its scores' largest difference from the server's first
run and from the first run of its concurrency; then each setting's median and best, the engine's, and the served scores
beside the engine's: mean and largest absolute difference, and Spearman's correlation. llama.cpp computes on the
quantized weights, the engine on them dequantized to float32.

    python bench/bench_served.py [--pairs 30] [--concurrency 1 2 4] [--threads 1] [--rounds 3] [--runs 2]
                                 [--prompt-cache off]

Measured on two shared cores (bench/README.md, "Served models").
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


def largest_difference(scores: list[float], others: list[float]) -> float:
    return max(abs(a - b) for a, b in zip(scores, others))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=30, help="pairs scored (default 30)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4], help="(default 1 2 4)")
    parser.add_argument("--threads", type=int, default=1, help="llama-server's threads (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the settings, interleaved (default 3)")
    parser.add_argument("--runs", type=int, default=2, help="runs on each fresh server, in turn (default 2)")
    parser.add_argument(
        "--prompt-cache",
        choices=["off", "on"],
        nargs="+",
        default=["off"],
        help="off: bartscore's requests (cache_prompt false); on: the server's prompt cache allowed (default off)",
    )
    args = parser.parse_args()

    from support import real_model
    from support.llama_server import HOW_TO_BUILD, LlamaServer, llama_server_binary

    import bart_score
    from bart_score.models.served import kinds as server_kinds

    if llama_server_binary() is None:
        raise SystemExit(f"bench_served: {HOW_TO_BUILD}")
    try:
        gguf = real_model.smollm2_gguf()
    except real_model.ModelUnavailable as error:
        raise SystemExit(f"bench_served: {error}") from None
    conditions, targets = pairs_of(gguf, args.pairs)
    print(f"{len(conditions)} pairs, {len(set(conditions))} sources; llama-server threads {args.threads}", flush=True)

    settings = [(cache, concurrency) for cache in args.prompt_cache for concurrency in args.concurrency]
    first_runs: dict[tuple[str, int], list[float]] = {}
    rates: dict[tuple[str, int], list[float]] = {setting: [] for setting in settings}
    cpu_per_pair: dict[tuple[str, int], list[float]] = {setting: [] for setting in settings}
    drift: dict[tuple[str, int], float] = dict.fromkeys(settings, 0.0)
    with tempfile.TemporaryDirectory() as logs:
        for round_number in range(1, args.rounds + 1):
            for cache, concurrency in settings:
                server_kinds.LLAMA_CPP_PROMPT_CACHE = cache == "on"
                log = os.path.join(logs, f"llama-server-{round_number}-{cache}-{concurrency}.log")
                with LlamaServer(gguf, log, slots=concurrency, threads=args.threads) as server:
                    server_first: list[float] = []
                    for run in range(1, args.runs + 1):
                        scorer = bart_score.BARTScorer(
                            checkpoint=f"llama.cpp+{server.url}",
                            device="cpu",
                            served_tokenizer=gguf,
                            concurrency=concurrency,
                        )
                        cpu_before, started = server.cpu_seconds(), time.perf_counter()
                        scores = scorer.score(conditions, targets)
                        seconds, cpu = time.perf_counter() - started, server.cpu_seconds() - cpu_before
                        server_first = server_first or scores
                        setting_first = first_runs.setdefault((cache, concurrency), scores)
                        moved = largest_difference(scores, server_first)
                        drift[cache, concurrency] = max(drift[cache, concurrency], moved)
                        rates[cache, concurrency].append(len(conditions) / seconds)
                        cpu_per_pair[cache, concurrency].append(cpu / len(conditions))
                        print(
                            f"round {round_number}, prompt cache {cache}, concurrency {concurrency}, run {run} on this "
                            f"server: {seconds:.1f} s, {len(conditions) / seconds:.3f} pairs/s, server CPU "
                            f"{cpu / len(conditions):.2f} s a pair (load average {os.getloadavg()[0]:.1f}); scores at "
                            f"most {moved:.2g} from this server's first run's, "
                            f"{largest_difference(scores, setting_first):.2g} from the setting's first run's",
                            flush=True,
                        )
    reference = first_runs[settings[0]]
    for cache, concurrency in settings:
        measured = rates[cache, concurrency]
        print(
            f"llama-server, prompt cache {cache}, concurrency {concurrency}: median {statistics.median(measured):.3f} "
            f"pairs/s, best {max(measured):.3f} ({len(measured)} runs); server CPU a pair, median "
            f"{statistics.median(cpu_per_pair[cache, concurrency]):.2f} s; a server's later runs at most "
            f"{drift[cache, concurrency]:.2g} from its first; the first run at most "
            f"{largest_difference(first_runs[cache, concurrency], reference):.2g} from prompt cache {settings[0][0]}, "
            f"concurrency {settings[0][1]}'s"
        )

    engine = bart_score.BARTScorer(checkpoint=gguf, device="cpu")
    started = time.perf_counter()
    local = engine.score(conditions, targets)
    seconds = time.perf_counter() - started
    print(f"engine (float32, CPU): {seconds:.1f} s, {len(conditions) / seconds:.3f} pairs/s")
    differences = [abs(a - b) for a, b in zip(reference, local)]
    print(
        f"served (prompt cache {settings[0][0]}, concurrency {settings[0][1]}) vs engine: mean |difference| "
        f"{statistics.fmean(differences):.4f}, largest {max(differences):.4f}, Spearman "
        f"{scipy.stats.spearmanr(reference, local).statistic:.4f}; the engine's scores from {min(local):.3f} to "
        f"{max(local):.3f}, standard deviation {statistics.stdev(local):.3f}"
    )


if __name__ == "__main__":
    main()
