#!/usr/bin/env python
"""Does a compiler lift the engine toward the matmul peak on this machine? The engine as it is (eager PyTorch)
beside the same engine with its model's encoder and decoder run through torch.compile (inductor, dynamic shapes),
which fuses the layer norms, activations, masks and softmaxes that run between the matrix products in eager mode:
bench_machine.py's stage table puts most of the gap to the peak there.

Per family and mode (bench_machine.py's checkpoints and workloads), it prints the first compiled call (the
compilation), the best of --repeat calls of each engine, the fraction of the float32 matmul peak each reaches
(bench_machine.py's useful FLOPs over the time), the speed-up and the largest score difference. The compiled engine
is measured, not offered: the first call costs up to minutes on a CPU, and its scores differ in the last bits. The
graphs and graph breaks that torch.compile made are printed with each row: a break (the engine's cache rows, the
masks' data-dependent checks) runs the code between two graphs in eager mode."""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time

import _setup  # noqa: F401

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch
import transformers
from bench_machine import (
    MODES,
    SIZES,
    checkpoint_of,
    engine_scores,
    largest_difference,
    load_reference,
    make_task,
    reference_run,
)
from matmul_rates import matmul_peak, timed
from torch._dynamo.utils import counters

transformers.utils.logging.disable_progress_bar()
torch._logging.set_logs(dynamo=logging.ERROR)  # the graph breaks at the engine's cache are expected


def compile_model(model):
    """The model's encoder (where it has one) and decoder, each run through torch.compile from now on."""
    parts = [model.get_decoder()] + ([model.get_encoder()] if model.config.is_encoder_decoder else [])
    for part in parts:
        part.forward = torch.compile(part.forward, dynamic=True)


def measure(family, mode, args, size):
    from bart_score import BARTScorer

    checkpoint, title = checkpoint_of(family, args)
    eager, compiled = (BARTScorer(checkpoint=checkpoint, device="cpu", dtype="float32") for _ in range(2))
    compile_model(compiled.family.model)
    # Each row compiles afresh: transformers' forward wrappers are one function for every model, so a row would
    # otherwise inherit the earlier rows' compilations and their recompile limit, and quietly run eagerly.
    torch._dynamo.reset()
    counters.clear()
    task = make_task(mode, eager.tokenizer, size, args.seed)
    reference = load_reference(checkpoint, eager.device)
    start_ids = [] if reference.config.is_encoder_decoder else eager.family.start_ids
    useful, _ = reference_run(reference, eager.tokenizer, task, start_ids, eager.max_length)
    eager_scores = engine_scores(eager, task)
    start = time.perf_counter()
    compiled_scores = engine_scores(compiled, task)
    first = time.perf_counter() - start
    peak, _ = matmul_peak(torch.float32, eager.device)
    # Alternated, so that a change of load touches both alike.
    seconds = {"eager": float("inf"), "compiled": float("inf")}
    for _ in range(args.repeat):
        for name, scorer in (("eager", eager), ("compiled", compiled)):
            wall, _, _ = timed(lambda scorer=scorer: engine_scores(scorer, task), eager.device, 1)
            seconds[name] = min(seconds[name], wall)
    print(
        f"{title:<45} {mode:<18} first compiled call {first:6.1f} s | eager {seconds['eager']:6.2f} s "
        f"{useful / seconds['eager'] / peak:4.0%} | compiled {seconds['compiled']:6.2f} s "
        f"{useful / seconds['compiled'] / peak:4.0%} | speed {seconds['eager'] / seconds['compiled']:.2f}x | "
        f"largest difference {largest_difference(eager_scores, compiled_scores):.1e} | peak {peak / 1e9:.0f} GFLOP/s | "
        f"{counters['stats']['unique_graphs']} graphs, {sum(counters['graph_break'].values())} graph breaks",
        flush=True,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", choices=("bart", "t5", "causal"), default=["bart", "causal"])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=["faithfulness", "one-per-condition"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "bartscore-bench"))
    args = parser.parse_args(argv)
    args.device = "cpu"
    torch.set_num_threads(args.threads)
    # A fresh compile cache, so that the first compiled call shows what compiling costs, not an earlier run's cache.
    compile_cache = tempfile.TemporaryDirectory(prefix="bartscore-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = compile_cache.name
    os.makedirs(args.workdir, exist_ok=True)
    print(f"torch {torch.__version__}, {args.threads} threads, cpu, load average {os.getloadavg()[0]:.1f}")
    for family in args.families:
        for mode in args.modes:
            measure(family, mode, args, SIZES["quick"])
    print(f"load average after the run: {os.getloadavg()[0]:.1f}")
    compile_cache.cleanup()


if __name__ == "__main__":
    main()
