#!/usr/bin/env python
"""The engine against the machine (issue 45): per model family and mode, the useful FLOPs, the engine's wall time,
the matmul peak measured in the same run and the fraction of it reached; then where the time goes.

Families: BART at bart-base's dimensions (bart-large's on CUDA) and T5 at t5-small's (random weights, real output
layers, built once under --workdir), and the real SmolLM2-135M-Instruct (else a random Llama of its dimensions).
Modes, on workload.py's SummEval-shaped texts: faithfulness; directions (all four, 11 references); prompts
(decoder-side); windows (long_source="windows", BM25); one-per-condition (nothing shared).

Useful FLOPs: FlopCounterMode over an independent reference that runs the model one text at a time without padding,
each distinct condition once, each distinct pair's target once; its scores are compared with the engine's ("ref
diff"). The engine's own count (padding included) comes from its first call, which is also the warm-up; its time is
the best of --repeat calls; the peak is torch.mm on square matrices, same process and threads, just before. The stage
table comes from one more call under torch.profiler, with ranges opened from outside the engine (the plan, the
family's passes, hooks on the encoder and decoder); see bench/README.md. --dtype also runs the engine in a 16-bit
dtype (speed, drift, that dtype's peak); --baseline (the default on CUDA) times workload.py's naive loops; --before
DIR times another checkout's engine (an older commit's worktree) beside this one's, each in a fresh process;
bench/gpu.sh runs the GPU version.
"""

from __future__ import annotations

import argparse
import copy
import functools
import os
import tempfile
import time
from dataclasses import dataclass, field

import _setup
import numpy as np
import scipy.stats

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch
import transformers
import workload
from engine_of_checkout import time_engine_of
from matmul_rates import PEAK_SIZE, CallProducts, matmul_peak, timed
from torch.utils.flop_counter import FlopCounterMode, sdpa_flop_count

transformers.utils.logging.disable_progress_bar()

FAMILIES = ("bart", "t5", "causal")
MODES = ("faithfulness", "directions", "prompts", "windows", "one-per-condition")
DIRECTIONS = ("faithfulness", "precision", "recall", "f_score")
# The workload of each mode: texts in a full run, a --quick one and a run on CUDA (more, to fill the device).
SIZES = {
    "full": dict(sources=1, hypotheses=16, direction_hypotheses=3, references=11, prompt_hypotheses=4, prompts=10,
                 documents=1, systems=4, source_tokens=2000, summary_sentences=4, lone_sources=8),
    "quick": dict(sources=1, hypotheses=6, direction_hypotheses=1, references=11, prompt_hypotheses=2, prompts=4,
                  documents=1, systems=2, source_tokens=1000, summary_sentences=3, lone_sources=3),
    "cuda": dict(sources=4, hypotheses=16, direction_hypotheses=4, references=11, prompt_hypotheses=8, prompts=10,
                 documents=2, systems=8, source_tokens=2000, summary_sentences=4, lone_sources=64),
}  # fmt: skip
T5_SMALL = dict(d_model=512, d_ff=2048, num_layers=6, num_decoder_layers=6, num_heads=8, d_kv=64, vocab_size=32128)
SMOLLM2 = dict(  # HuggingFaceTB/SmolLM2-135M-Instruct's config, for a random stand-in where the real one is missing
    hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
    vocab_size=49152, max_position_embeddings=8192, rope_theta=100000.0, tie_word_embeddings=True,
)  # fmt: skip
STAGES = ("tokenization and planning", "conditions (encoder, prefix)", "targets (decoder)", "output layer",
          "log-softmax, gather, readout", "other torch ops in the passes", "rest (Python, profiler)")  # fmt: skip


def _sdpa_flops(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs):
    return sdpa_flop_count(query_shape, key_shape, value_shape)


# torch's FLOP counter knows the CUDA attention kernels but not the CPU one that sdpa dispatches to.
ATTENTION = {torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _sdpa_flops}


def flop_counter():
    return FlopCounterMode(display=False, custom_mapping=ATTENTION)


# ---------------------------------------------------------------------------------------------------------------------
# Checkpoints


def checkpoint_of(family, args):
    """The family's checkpoint folder, and what it is in words."""
    if family == "bart":
        from bench_engine import build_or_reuse_checkpoint

        dims = "large" if args.device == "cuda" else "base"
        return build_or_reuse_checkpoint(args.workdir, dims), f"BART, random, bart-{dims} dimensions"
    if family == "t5":
        from bench_families import _build

        folder = os.path.join(args.workdir, "random-t5-small")
        workload.built_once(folder, "a random t5-small-shaped checkpoint", lambda s: _build(s, "t5", T5_SMALL))
        return folder, "T5, random, t5-small dimensions"
    from support import real_model

    try:
        return real_model.smollm2_folder(), "SmolLM2-135M-Instruct, real weights"
    except real_model.ModelUnavailable:
        folder = os.path.join(args.workdir, "random-smollm2-135m")
        workload.built_once(folder, "a random SmolLM2-135M-shaped Llama", _build_random_smollm2)
        return folder, "Llama, random, SmolLM2-135M dimensions (the real file is not on this machine)"


def _build_random_smollm2(staging):
    from support.models import build_tiny

    build_tiny("llama", staging)  # its tokenizer stays, its model is replaced
    tokenizer = transformers.AutoTokenizer.from_pretrained(staging, trust_remote_code=False)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(**SMOLLM2, bos_token_id=tokenizer.bos_token_id, eos_token_id=2)
    transformers.LlamaForCausalLM(config).save_pretrained(staging)


# ---------------------------------------------------------------------------------------------------------------------
# The modes: what the engine is asked, and the passes of (condition, target) pairs that give the same scores


@dataclass
class Task:
    mode: str
    call: dict  # score_directions' arguments
    passes: list  # workload.Pass: each direction, reference index or prompt as the original code loops over them
    combine: object  # per-pass score arrays -> {direction: scores}, as score_directions returns them

    @property
    def distinct_pairs(self):
        return list(dict.fromkeys(pair for p in self.passes for pair in zip(p.conditions, p.targets)))


def make_task(mode, tokenizer, size, seed):
    if mode == "windows":
        return _windows_task(tokenizer, size, seed)
    key, hypotheses, sources = {
        "faithfulness": ("a", size["hypotheses"], size["sources"]),
        "directions": ("b", size["direction_hypotheses"], size["sources"]),
        "prompts": ("c", size["prompt_hypotheses"], size["sources"]),
        "one-per-condition": ("a", 1, size["lone_sources"]),
    }[mode]
    texts = workload.make_workload(tokenizer, sources, hypotheses, size["references"], seed)
    case = workload.build_case(key, texts, prompt_sources=sources, prompts=size["prompts"])
    return Task(mode, case.engine_kwargs, case.passes, functools.partial(workload.combine_passes, case.passes))


def _windows_task(tokenizer, size, seed):
    from bench_long_documents import make_workload

    from bart_score.long_documents.windows import plan_windows
    from bart_score.options import WindowSettings

    documents, systems = size["documents"], size["systems"]
    sources, summaries = make_workload(
        tokenizer, documents, systems, size["source_tokens"], size["summary_sentences"], 0.5, seed
    )
    settings = WindowSettings(retriever="bm25")
    plan = plan_windows(summaries, sources, settings)
    # LongDocFACTScore's loop: every sentence of every summary scored against each of its windows.
    order = [plan.pairs[i] for sentences in plan.sentence_pairs for windows in sentences for i in windows]
    passes = [workload.Pass("faithfulness", [w for w, _ in order], [s for _, s in order])]

    def combine(pass_scores):
        scores = iter(pass_scores[0])
        means = [np.mean([max(next(scores) for _ in windows) for windows in s]) for s in plan.sentence_pairs]
        return {"faithfulness": np.asarray(means)}

    call = dict(predictions=summaries, sources=sources, directions="faithfulness", long_source="windows")
    return Task("windows", dict(call, retriever="bm25", windows_k=settings.k), passes, combine)


def scores_of_passes(task, score_of):
    return task.combine([np.array([score_of[pair] for pair in zip(p.conditions, p.targets)]) for p in task.passes])


# ---------------------------------------------------------------------------------------------------------------------
# The reference: one text at a time, no padding, each distinct condition once


class CrossProjections:
    """Counts the FLOPs of the decoder's linear layers applied to the encoder's states (cross-attention keys and
    values), which a plain decoder call projects again for every target: the reference counts them once per
    condition."""

    def __init__(self, decoder):
        self.states, self.flops = None, 0
        self.handles = [
            module.register_forward_hook(self._seen)
            for module in decoder.modules()
            if isinstance(module, torch.nn.Linear)
        ]

    def _seen(self, module, inputs, output):
        if self.states is not None and inputs[0] is self.states:
            self.flops += 2 * inputs[0].numel() * module.out_features

    def remove(self):
        for handle in self.handles:
            handle.remove()


def reference_run(model, tokenizer, task, start_ids, max_length):
    """(useful FLOPs, {pair: mean target log-probability}) for the task's distinct pairs."""
    by_condition = {}
    for condition, target in task.distinct_pairs:
        by_condition.setdefault(condition, []).append(target)
    device = model.device
    scores, repeated = {}, 0
    seq2seq = model.config.is_encoder_decoder
    cross = CrossProjections(model.get_decoder()) if seq2seq else None
    tensor = functools.partial(torch.tensor, device=device)

    def mean_log_prob(logits, labels):
        return float(torch.log_softmax(logits.float(), -1).gather(1, tensor(labels)[:, None]).mean())

    with torch.inference_mode(), flop_counter() as counter:
        for condition, targets in by_condition.items():
            if seq2seq:
                ids = tokenizer(condition, truncation=True, max_length=max_length)["input_ids"]
                encoded = model.get_encoder()(input_ids=tensor([ids]))
                cross.states = encoded.last_hidden_state
                for index, target in enumerate(targets):
                    labels = tokenizer(target, truncation=True, max_length=max_length)["input_ids"]
                    inputs = [model.config.decoder_start_token_id, *labels[:-1]]
                    cross.flops = 0
                    logits = model(encoder_outputs=encoded, decoder_input_ids=tensor([inputs])).logits[0]
                    repeated += cross.flops if index else 0
                    scores[condition, target] = mean_log_prob(logits, labels)
            else:
                prefix = start_ids + tokenizer(condition + "\n", add_special_tokens=False)["input_ids"]
                run = model(input_ids=tensor([prefix]), use_cache=True, logits_to_keep=1)
                for target in targets:
                    scored = [*tokenizer(target, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]
                    logits = run.logits[0]
                    if len(scored) > 1:
                        cache = copy.deepcopy(run.cache)
                        steps = model(input_ids=tensor([scored[:-1]]), cache=cache, use_cache=True)
                        logits = torch.cat([logits, steps.logits[0]])
                    scores[condition, target] = mean_log_prob(logits, scored)
    if cross:
        cross.remove()
    return counter.get_total_flops() - repeated, scores


def load_reference(checkpoint, device):
    kind = transformers.AutoConfig.from_pretrained(checkpoint, trust_remote_code=False)
    auto = transformers.AutoModelForSeq2SeqLM if kind.is_encoder_decoder else transformers.AutoModelForCausalLM
    model = auto.from_pretrained(checkpoint, dtype=torch.float32, trust_remote_code=False)
    return model.to(device).eval()


# ---------------------------------------------------------------------------------------------------------------------
# Measuring the engine


def engine_scores(scorer, task):
    result = scorer.score_directions(**task.call)
    return {d: np.asarray(result[d], dtype=np.float64) for d in DIRECTIONS if d in result}


def counted_call(scorer, task):
    """The engine's FLOPs on the task (padding included) and its scores: the rows' warm-up."""
    with flop_counter() as counter:
        scores = engine_scores(scorer, task)
    return counter.get_total_flops(), scores


def largest_difference(a, b):
    return max(float(np.max(np.abs(a[d] - b[d]))) for d in a)


def kendall_tau(a, b):
    flat = [np.concatenate([np.asarray(x[d]) for d in sorted(a)]) for x in (a, b)]
    return float(scipy.stats.kendalltau(*flat).statistic)


def naive_run(scorer, task):
    """workload.py's naive loops: the original BARTScorer.score for sequence-to-sequence models, GPTScore's loop for
    causal LMs; float32, pass by pass."""
    if scorer.model.config.is_encoder_decoder:
        return workload.run_baseline(scorer, task)
    start_ids = scorer.family.start_ids
    loop = functools.partial(workload.naive_causal_scores, scorer.model, scorer.tokenizer, start_ids)
    return task.combine([loop(p.conditions, p.targets, scorer.device) for p in task.passes])


# ---------------------------------------------------------------------------------------------------------------------
# Where the time goes: torch.profiler, with ranges opened from outside the engine

RANGE = "bench_machine:"


class Ranges:
    """Profiler ranges around the engine's plan, the family's condition and target passes and the model's encoder,
    decoder and output modules; shadowed methods and hooks, all removed by close()."""

    def __init__(self, scorer):
        from bart_score.scoring import _directions

        self.undo = []
        self._around(scorer, "_plan", "plan")
        self._around(scorer, "_target_log_probs", "readout")  # the output layer's blocks and their log-sum-exp
        self._around(_directions, "plan_windows", "plan")
        self._around(scorer.family, "encode", "condition pass")
        self._around(scorer.family, "decode", "target pass")
        model = scorer.model
        modules = {"decoder": model.get_decoder(), "output": model.get_output_embeddings()}
        if model.config.is_encoder_decoder:
            modules["encoder"] = model.get_encoder()
        for label, module in modules.items():
            opened = []

            def enter(*_, label=label, opened=opened):
                opened.append(torch.profiler.record_function(RANGE + label).__enter__())

            def leave(*_, opened=opened):
                opened.pop().__exit__(None, None, None)

            for handle in (module.register_forward_pre_hook(enter), module.register_forward_hook(leave)):
                self.undo.append(handle.remove)

    def _around(self, owner, name, label):
        method = getattr(owner, name, None)
        if method is None:  # the engine changed: that stage falls into the others
            return

        @functools.wraps(method)
        def ranged(*args, **kwargs):
            with torch.profiler.record_function(RANGE + label):
                return method(*args, **kwargs)

        shadowed = name in vars(owner)
        setattr(owner, name, ranged)
        self.undo.append(lambda: setattr(owner, name, method) if shadowed else delattr(owner, name))

    def close(self):
        for undo in reversed(self.undo):
            undo()


MATMULS = {"aten::mm", "aten::addmm", "aten::matmul", "aten::linear", "aten::bmm"}


def stage_of(op, ranges, vocabulary):
    logits = "readout" in ranges or any(vocabulary in shape for shape in op.input_shapes)  # the engine's blocks
    if "output" in ranges or (op.name in MATMULS and logits):
        return "output layer"
    if "encoder" in ranges or ("decoder" in ranges and "condition pass" in ranges):
        return "conditions (encoder, prefix)"
    if "decoder" in ranges:
        return "targets (decoder)"
    if "condition pass" in ranges or "target pass" in ranges:
        return "other torch ops in the passes"
    return "log-softmax, gather, readout"


def profiled_stages(scorer, task):
    """{stage: (seconds, matmul FLOPs, FLOP/s of its matmuls run alone)} of one profiled call, and its wall seconds."""
    vocabulary = scorer.model.get_output_embeddings().weight.shape[0]
    ranges = Ranges(scorer)
    try:
        with torch.profiler.profile(record_shapes=True, with_flops=True) as profile:
            start = time.perf_counter()
            engine_scores(scorer, task)
            wall = time.perf_counter() - start
    finally:
        ranges.close()
    seconds = dict.fromkeys(STAGES, 0.0)
    flops = dict.fromkeys(STAGES, 0)
    products = CallProducts()
    for event in profile.events():
        chain, parent, top = [], event.cpu_parent, event
        while parent is not None:
            if parent.name.startswith(RANGE):
                chain.append(parent.name[len(RANGE) :])
            else:
                top = parent
            parent = parent.cpu_parent
        if event.name.startswith(RANGE):
            if event.name == RANGE + "plan" and "plan" not in chain:
                seconds["tokenization and planning"] += event.time_range.elapsed_us() / 1e6
            continue
        if "plan" in chain:
            continue
        stage = stage_of(top, chain, vocabulary)
        flops[stage] += event.flops or 0
        products.add(stage, event)
        if top is event:
            seconds[stage] += event.time_range.elapsed_us() / 1e6
    seconds["rest (Python, profiler)"] = wall - sum(seconds.values())
    alone = products.rates_alone(torch.float32, scorer.device)
    return {stage: (seconds[stage], flops[stage], alone.get(stage)) for stage in STAGES}, wall


# ---------------------------------------------------------------------------------------------------------------------
# One family


@dataclass
class Row:
    family: str
    mode: str
    pairs: int
    useful: float
    executed: float
    seconds: float
    peak: float
    reference_difference: float
    cores: float  # the engine's process CPU time over its wall time
    peak_cores: float  # the same for the peak's matmul
    stages: dict = field(default_factory=dict)
    profiled_seconds: float = 0.0
    reduced: dict = field(default_factory=dict)  # the engine in --dtype: seconds, peak, drift
    naive: dict = field(default_factory=dict)  # the naive loop: seconds, difference
    before: dict = field(default_factory=dict)  # --before's engine: seconds, difference


def measure_family(family, args, size):
    from bart_score import BARTScorer

    checkpoint, title = checkpoint_of(family, args)
    options = {} if args.max_tokens is None else {"max_tokens": args.max_tokens}
    scorers = [BARTScorer(checkpoint=checkpoint, device=args.device, dtype="float32", **options)]
    if args.dtype != "float32":
        scorers.append(BARTScorer(checkpoint=checkpoint, device=args.device, dtype=args.dtype, **options))
    reference = load_reference(checkpoint, scorers[0].device)
    print(f"\n{family}: {title} ({checkpoint})", flush=True)
    rows = []
    for mode in args.modes:
        task = make_task(mode, scorers[0].tokenizer, size, args.seed)
        rows.append(measure_row(family, task, scorers, reference, args, (checkpoint, options)))
        print(one_line(rows[-1]), flush=True)
        if rows[-1].stages:
            print("    stages: " + stage_shares(rows[-1], ", "), flush=True)
    return rows, title


def measure_row(family, task, scorers, reference, args, loaded):
    """One row: the reference's count, the engine's count (its warm-up), the peak, the engine's best time, the
    profiled call; the engine in --dtype and the naive loop where asked."""
    scorer, device = scorers[0], scorers[0].device
    start_ids = [] if reference.config.is_encoder_decoder else scorer.family.start_ids
    useful, score_of = reference_run(reference, scorer.tokenizer, task, start_ids, scorer.max_length)
    executed, scores = counted_call(scorer, task)
    peak, peak_cores = matmul_peak(torch.float32, device)
    seconds, cpu, _ = timed(lambda: engine_scores(scorer, task), device, args.repeat)
    difference = largest_difference(scores, scores_of_passes(task, score_of))
    pairs = len(task.distinct_pairs)
    row = Row(family, task.mode, pairs, useful, executed, seconds, peak, difference, cpu / seconds, peak_cores)
    if device.type == "cpu" and not args.no_stages:
        row.stages, row.profiled_seconds = profiled_stages(scorer, task)
    if len(scorers) > 1:
        reduced = scorers[1]
        engine_scores(reduced, task)  # its warm-up
        reduced_peak, _ = matmul_peak(getattr(torch, args.dtype), device)
        reduced_seconds, _, reduced_scores = timed(lambda: engine_scores(reduced, task), device, args.repeat)
        drift = dict(difference=largest_difference(reduced_scores, scores), tau=kendall_tau(reduced_scores, scores))
        row.reduced = dict(seconds=reduced_seconds, peak=reduced_peak, **drift)
    if args.before:
        # Both engines timed the same way, each in a fresh process: this one's too, not the main process's figure.
        (before, before_scores), (now, _) = (
            time_engine_of(root, *loaded, task.call, args.repeat, args.threads) for root in (args.before, _setup.REPO)
        )
        row.before = dict(seconds=before, now=now, difference=largest_difference(before_scores, scores))
    if args.baseline:
        naive_seconds, _, naive_scores = timed(lambda: naive_run(scorer, task), device, 1)
        row.naive = dict(seconds=naive_seconds, difference=largest_difference(naive_scores, scores))
    return row


# ---------------------------------------------------------------------------------------------------------------------
# Report


def one_line(row):
    return (
        f"  {row.mode:18} {row.pairs:4} pairs  useful {row.useful / 1e9:8.1f} GFLOP  engine {row.seconds:7.2f} s  "
        f"{row.useful / row.seconds / 1e9:6.1f} GFLOP/s  peak {row.peak / 1e9:6.1f}  "
        f"{row.useful / row.seconds / row.peak:5.1%}  ref diff {row.reference_difference:.1e}"
    )


def stage_shares(row, separator, named=True):
    return separator.join(
        (f"{stage} " if named else "") + f"{row.stages[stage][0] / row.profiled_seconds:.0%}" for stage in STAGES
    )


def print_report(rows, titles, args):
    print(f"\n## The engine against the machine ({args.device}, {torch.get_num_threads()} threads)\n")
    for family, title in titles.items():
        print(f"- {family}: {title}")
    print(f"- engine wall time: best of {args.repeat} after a warm-up; peak: torch.mm {PEAK_SIZE[args.device]}^2\n")
    print("| family | mode | pairs | useful GFLOP | executed GFLOP | padding | engine s | useful GFLOP/s "
          "| peak GFLOP/s | fraction of peak | cores engine / peak | ref diff |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rate = r.useful / r.seconds
        print(
            f"| {r.family} | {r.mode} | {r.pairs} | {r.useful / 1e9:,.1f} | {r.executed / 1e9:,.1f} | "
            f"{1 - r.useful / r.executed:.0%} | {r.seconds:.2f} | {rate / 1e9:,.1f} | {r.peak / 1e9:,.1f} | "
            f"**{rate / r.peak:.0%}** | {r.cores:.2f} / {r.peak_cores:.2f} | {r.reference_difference:.1e} |"
        )
    if any(r.stages for r in rows):
        print("\n### Where the time goes (shares of a profiled call's wall time; padding: share of executed FLOPs)\n")
        print("| family | mode | " + " | ".join(STAGES) + " | padding | profiled s |")
        print("|---|---|" + "---|" * (len(STAGES) + 2))
        for r in rows:
            shares = stage_shares(r, " | ", named=False)
            print(f"| {r.family} | {r.mode} | {shares} | {1 - r.useful / r.executed:.0%} | {r.profiled_seconds:.2f} |")
        print("\nMatmul rate per stage, GFLOP/s (mm, addmm, bmm), in the call / its products alone:\n")
        rated = STAGES[1:4]
        print("| family | mode | " + " | ".join(rated) + " | peak |\n|---|---|" + "---|" * (len(rated) + 1))
        for r in rows:
            cells = [f"{f / s / 1e9:,.0f} / {a / 1e9:,.0f}" if f else "" for s, f, a in map(r.stages.get, rated)]
            print(f"| {r.family} | {r.mode} | " + " | ".join(cells) + f" | {r.peak / 1e9:,.0f} |")
    if any(r.reduced for r in rows):
        print(f"\n### {args.dtype} against float32\n")
        print(f"| family | mode | float32 s | {args.dtype} s | speed | max abs diff | Kendall tau | useful GFLOP/s | "
              f"{args.dtype} peak GFLOP/s | fraction of peak |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            d, rate = r.reduced, r.useful / r.reduced["seconds"]
            print(f"| {r.family} | {r.mode} | {r.seconds:.2f} | {d['seconds']:.2f} | {r.seconds / d['seconds']:.2f}x | "
                  f"{d['difference']:.1e} | {d['tau']:.4f} | {rate / 1e9:,.1f} | {d['peak'] / 1e9:,.1f} | "
                  f"{rate / d['peak']:.0%} |")  # fmt: skip
    if any(r.before for r in rows):
        peak = max(r.peak for r in rows)  # a row's own probe can catch the machine busy: the run's best is the peak
        print(f"\n### The engine of {args.before} against this one (float32; fractions of {peak / 1e9:,.0f} GFLOP/s)\n")
        print("| family | mode | before s | now s | before | now | max abs diff |\n" + "|---" * 7 + "|")
        for r in rows:
            b, rate = r.before, r.useful / peak
            print(f"| {r.family} | {r.mode} | {b['seconds']:.2f} | {b['now']:.2f} | {rate / b['seconds']:.0%} | "
                  f"**{rate / b['now']:.0%}** | {b['difference']:.1e} |")  # fmt: skip
    if any(r.naive for r in rows):
        fastest = f"engine {args.dtype}" if args.dtype != "float32" else "engine"
        print(f"\n### The naive loop (float32) against the {fastest}\n")
        print(f"| family | mode | naive s | {fastest} s | speed-up | engine float32 vs naive: max abs diff |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            engine, n = r.reduced.get("seconds", r.seconds), r.naive
            print(f"| {r.family} | {r.mode} | {n['seconds']:.2f} | {engine:.2f} | **{n['seconds'] / engine:.1f}x** | "
                  f"{n['difference']:.1e} |")  # fmt: skip


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", choices=FAMILIES, help="default: all (bart and causal on cuda)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--quick", action="store_true", help="smaller workloads, one timed call: 4 minutes")
    parser.add_argument("--repeat", type=int, help="timed engine calls per row, best kept (default 3; --quick 1)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), help="also run the engine in this "
                        "dtype against float32 (default: float32 on cpu, bfloat16 on cuda)")  # fmt: skip
    parser.add_argument("--baseline", action=argparse.BooleanOptionalAction, help="also time workload.py's naive "
                        "loops (default: on cuda only)")  # fmt: skip
    parser.add_argument("--before", metavar="DIR", help="also time the engine of this checkout (CPU, float32)")
    parser.add_argument("--no-stages", action="store_true", help="skip the profiled call and the stage table")
    parser.add_argument("--max-tokens", type=int, help="the engine's token budget (default: the engine's)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "bartscore-bench"))
    args = parser.parse_args(argv)
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        parser.error("--device cuda, but torch sees no CUDA device")
    args.families = args.families or (["bart", "causal"] if cuda else list(FAMILIES))
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.dtype = args.dtype or ("bfloat16" if cuda else "float32")
    args.baseline = cuda if args.baseline is None else args.baseline
    return args


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    os.makedirs(args.workdir, exist_ok=True)
    size = SIZES["quick" if args.quick else "cuda" if args.device == "cuda" else "full"]
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {args.threads} threads, {args.device}")
    measured = {family: measure_family(family, args, size) for family in args.families}
    rows = [row for family_rows, _ in measured.values() for row in family_rows]
    print_report(rows, {family: title for family, (_, title) in measured.items()}, args)


if __name__ == "__main__":
    main()
