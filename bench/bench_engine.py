#!/usr/bin/env python
"""Engine benchmark for bartscore (issue 3): the planned engine against a naive copy of the original algorithm.

It builds (once, cached) a randomly initialised BART checkpoint with the dimensions of facebook/bart-base (or
bart-large) and a 50,265-token output layer, generates a SummEval-shaped workload (sources of ~450 tokens, 16
hypotheses of ~85 tokens and 11 references of ~60 tokens per source), and scores three cases:

  (a) faithfulness: source -> hypothesis, every pair;
  (b) all four directions with 11 references: faithfulness, precision (ref -> hyp), recall (hyp -> ref), f_score;
  (c) faithfulness with the 70 decoder-side "summary" prompts, on a small subset of sources.

For each case it times the naive baseline and the engine, each in a fresh child process on the same weights, and
prints seconds, pairs/s, target tokens/s, the speed-up, the speed-up the FLOP count allows, the achieved GFLOP/s, the
largest score difference and the peak memory. Run `python bench/bench_engine.py --help` for the options; README.md
beside this file gives the commands.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [REPO, os.path.join(REPO, "tests")]
# The benchmark never needs the network: the checkpoint is built here (or given as a local directory).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch  # noqa: E402
import transformers  # noqa: E402

transformers.utils.logging.disable_progress_bar()  # no loading bars between the figures (children import this too)

VOCAB_SIZE = 50265  # facebook/bart-*'s output layer: the part of the model a random checkpoint must get right
MODEL_DIMS = {
    "tiny": dict(d_model=64, layers=2, heads=4, ffn=256),  # for smoke runs of the benchmark itself
    "base": dict(d_model=768, layers=6, heads=12, ffn=3072),  # facebook/bart-base
    "large": dict(d_model=1024, layers=12, heads=16, ffn=4096),  # facebook/bart-large(-cnn)
}
# SummEval's shape, in tokens (with <s> and </s>): mean length of each kind of text, each drawn within +-20%.
SOURCE_TOKENS, HYPOTHESIS_TOKENS, REFERENCE_TOKENS = 450, 85, 60
LENGTH_SPREAD = 0.2
ORIGINAL_BATCH_SIZE = 4  # the original BARTScorer.score's default batch size
MAX_LENGTH = 1024
PROMPT_SET = "summary"  # 70 prompts
# Dense bf16 tensor-core peak of an H200 (SXM), the same as an H100 SXM: 989.4 TFLOP/s without sparsity.
H200_BF16_PEAK_TFLOPS = 989.0
# The targets: minimum speed-up per case, and the largest score difference allowed in float32.
CPU_TARGETS = {"a": 3.0, "b": 1.5, "c": 3.0}
GPU_TARGETS = {"b": 20.0}
MAX_DIFF_TARGET = 1e-5
CONDITION_PASS = "condition pass (outside its encoder and decoder step)"
STAGE_ORDER = (
    "tokenization",
    CONDITION_PASS,
    "encoder",
    "cross K/V projection, once per condition",
    "cross K/V projection, in decoder",
    "decoder (excl. cross K/V)",
    "LM head matmul",
    "log-softmax / log-prob readout",
    "LM head matmul + log-prob readout, fused",
    "other (planning, padding, Python, copies)",
)
CASE_TITLES = {
    "a": "(a) faithfulness",
    "b": "(b) 4 directions x refs",
    "c": "(c) faithfulness x prompts",
}


# ---------------------------------------------------------------------------------------------------------------------
# The model checkpoint


def build_or_reuse_checkpoint(workdir, dims, seed=0):
    """A random BART checkpoint with `dims` and a 50,265-token vocabulary, saved with save_pretrained under
    `workdir`; built once and reused by later runs (a marker file says the save finished)."""
    from tiny_bart import build_tiny_bart

    directory = os.path.join(workdir, f"random-bart-{dims}-vocab{VOCAB_SIZE}-seed{seed}")
    if os.path.isfile(os.path.join(directory, "COMPLETE")):
        return directory
    print(f"building a random BART checkpoint ({dims} dimensions) in {directory} ...", flush=True)
    staging = directory + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    # init_std 0.02 is BART's own initialisation (the test helper's 0.2 is meant for its 32-wide toy models).
    build_tiny_bart(
        staging, seed=seed, vocab_size=VOCAB_SIZE, max_positions=MAX_LENGTH, init_std=0.02, **MODEL_DIMS[dims]
    )
    open(os.path.join(staging, "COMPLETE"), "w").close()
    shutil.rmtree(directory, ignore_errors=True)
    os.rename(staging, directory)
    return directory


# ---------------------------------------------------------------------------------------------------------------------
# The workload


@dataclass
class Workload:
    sources: list  # one text per source document
    hypotheses: list  # per source, its system outputs
    references: list  # per source, its references


def tokens_per_word(tokenizer, seed):
    """How many tokens the tokenizer makes of one generated word, measured on a sample of generated text."""
    from tiny_bart import english_like_text

    rng = random.Random(seed)
    words = 300
    sample = [english_like_text(rng, words) for _ in range(20)]
    lengths = [len(ids) - 2 for ids in tokenizer(sample)["input_ids"]]  # without <s> and </s>
    return sum(lengths) / (words * len(sample))


def make_workload(tokenizer, sources, hypotheses_per_source, references_per_source, seed):
    """Seeded English-like texts whose token lengths have SummEval's shape: each text's length is drawn uniformly
    within +-20% of its kind's mean, and converted to words with the measured tokens-per-word ratio."""
    from tiny_bart import english_like_text

    ratio = tokens_per_word(tokenizer, seed + 1)
    rng = random.Random(seed)

    def text(mean_tokens):
        tokens = rng.uniform(1 - LENGTH_SPREAD, 1 + LENGTH_SPREAD) * mean_tokens
        return english_like_text(rng, max(1, round((tokens - 2) / ratio)))

    return Workload(
        sources=[text(SOURCE_TOKENS) for _ in range(sources)],
        hypotheses=[[text(HYPOTHESIS_TOKENS) for _ in range(hypotheses_per_source)] for _ in range(sources)],
        references=[[text(REFERENCE_TOKENS) for _ in range(references_per_source)] for _ in range(sources)],
    )


def length_summary(lengths):
    lengths = np.asarray(lengths)
    return f"mean {lengths.mean():.1f}, min {lengths.min()}, max {lengths.max()} tokens"


# ---------------------------------------------------------------------------------------------------------------------
# The cases: what the engine is asked, and the passes the naive baseline makes for the same numbers


@dataclass
class Pass:
    """One loop of the original code over (condition, target) pairs: one direction, one reference index or prompt."""

    direction: str
    conditions: list
    targets: list


@dataclass
class Case:
    key: str
    engine_kwargs: dict  # the score_directions call, as a user of the metric makes it
    passes: list  # the baseline's passes, in its order
    hypotheses: int

    @property
    def pairs(self):
        return [pair for p in self.passes for pair in zip(p.conditions, p.targets)]


def build_case(key, workload, prompt_sources, prompts):
    predictions = [h for hyps in workload.hypotheses for h in hyps]
    sources = [s for s, hyps in zip(workload.sources, workload.hypotheses) for _ in hyps]
    if key == "a":
        return Case(
            key,
            dict(predictions=predictions, sources=sources, directions="faithfulness"),
            [Pass("faithfulness", sources, predictions)],
            len(predictions),
        )
    if key == "b":
        references = [refs for refs, hyps in zip(workload.references, workload.hypotheses) for _ in hyps]
        passes = [Pass("faithfulness", sources, predictions)]
        for k in range(len(workload.references[0])):  # the original scores each reference index as its own pass
            kth = [refs[k] for refs in references]
            passes.append(Pass("precision", kth, predictions))
            passes.append(Pass("recall", predictions, kth))
        return Case(
            key, dict(predictions=predictions, references=references, sources=sources), passes, len(predictions)
        )
    if key == "c":
        from bart_score import PROMPT_SETS

        subset = workload.hypotheses[:prompt_sources]
        predictions = [h for hyps in subset for h in hyps]
        sources = [s for s, hyps in zip(workload.sources, subset) for _ in hyps]
        phrases = PROMPT_SETS[PROMPT_SET][:prompts]
        # The engine gets the set by name, as users call it; a shortened set (smoke runs) as the list of phrases.
        prompt = PROMPT_SET if len(phrases) == len(PROMPT_SETS[PROMPT_SET]) else list(phrases)
        # Decoder side, as the original's prefix prompt: "<prompt>, <hypothesis>" is the scored text.
        passes = [Pass("faithfulness", sources, [f"{phrase}, {h}" for h in predictions]) for phrase in phrases]
        return Case(
            key,
            dict(
                predictions=predictions,
                sources=sources,
                directions="faithfulness",
                prompt=prompt,
                prompt_side="decoder",
            ),
            passes,
            len(predictions),
        )
    raise ValueError(f"unknown case {key!r}")


def combine_passes(passes, pass_scores):
    """Per direction, the mean over its passes (references or prompts); f_score = (precision + recall) / 2 after the
    mean over references, as the paper's scripts."""
    by_direction = defaultdict(list)
    for p, scores in zip(passes, pass_scores):
        by_direction[p.direction].append(scores)
    combined = {d: np.mean(np.stack(lists), axis=0) for d, lists in by_direction.items()}
    if "precision" in combined and "recall" in combined:
        combined["f_score"] = (combined["precision"] + combined["recall"]) / 2
    return combined


# ---------------------------------------------------------------------------------------------------------------------
# The naive baseline: the original BARTScorer.score, one pass at a time


def naive_scores(model, tokenizer, conditions, targets, device, stage=None):
    """The original algorithm, deliberately unoptimised: pairs in input order, fixed batches of 4, every pair's
    condition encoded on its own, the model called with labels= (so it also computes its own loss), a log-softmax
    over the whole vocabulary for the whole batch, then NLL (pad ignored) summed and divided by the target length."""
    stage = stage or (lambda name: nullcontext())
    nll = torch.nn.NLLLoss(reduction="none", ignore_index=model.config.pad_token_id)
    scores = []
    with torch.inference_mode():
        for start in range(0, len(conditions), ORIGINAL_BATCH_SIZE):
            with stage("tokenization"):
                src = tokenizer(
                    conditions[start : start + ORIGINAL_BATCH_SIZE],
                    max_length=MAX_LENGTH,
                    truncation=True,
                    padding=True,
                    return_tensors="pt",
                )
                tgt = tokenizer(
                    targets[start : start + ORIGINAL_BATCH_SIZE],
                    max_length=MAX_LENGTH,
                    truncation=True,
                    padding=True,
                    return_tensors="pt",
                )
            tgt_ids = tgt["input_ids"].to(device)
            tgt_lengths = tgt["attention_mask"].sum(dim=1).to(device)
            logits = model(
                input_ids=src["input_ids"].to(device), attention_mask=src["attention_mask"].to(device), labels=tgt_ids
            ).logits
            with stage("log-softmax / log-prob readout"):
                log_probs = torch.log_softmax(logits.view(-1, logits.shape[-1]), dim=-1)
                loss = nll(log_probs, tgt_ids.view(-1)).view(tgt_ids.shape[0], -1).sum(dim=1) / tgt_lengths
                scores.extend((-loss).tolist())
    return np.asarray(scores)


def run_baseline(scorer, case, stage=None):
    pass_scores = [
        naive_scores(scorer.model, scorer.tokenizer, p.conditions, p.targets, scorer.device, stage) for p in case.passes
    ]
    return combine_passes(case.passes, pass_scores)


def run_engine(scorer, case, stage=None):
    result = scorer.score_directions(**case.engine_kwargs)
    return {d: np.asarray(result[d]) for d in ("faithfulness", "precision", "recall", "f_score") if d in result}


# ---------------------------------------------------------------------------------------------------------------------
# The FLOP model: multiply-accumulates (MACs) of the matmuls. Layer norms, softmaxes, embeddings, the GELU and the
# log-softmax are element-wise work, left out (they are a few percent of the matmuls here, and memory-bound).


@dataclass(frozen=True)
class ModelShape:
    d_model: int
    encoder_layers: int
    decoder_layers: int
    encoder_ffn: int
    decoder_ffn: int
    vocab: int

    @classmethod
    def of(cls, config):
        return cls(
            config.d_model,
            config.encoder_layers,
            config.decoder_layers,
            config.encoder_ffn_dim,
            config.decoder_ffn_dim,
            config.vocab_size,
        )


def encoder_macs(m, rows, width):
    """The encoder over `rows` texts padded to `width` tokens (padding costs as much as real tokens)."""
    tokens = rows * width
    per_layer = (
        tokens * 4 * m.d_model**2  # self-attention Q, K, V and output projections
        + rows * 2 * width * width * m.d_model  # attention scores Q.K^T and the weighted sum of V
        + tokens * 2 * m.d_model * m.encoder_ffn
    )  # feed-forward: two matmuls
    return m.encoder_layers * per_layer


def cross_kv_macs(m, rows, width):
    """Each decoder layer's cross-attention keys and values from the encoder states of `rows` x `width` tokens."""
    return m.decoder_layers * rows * width * 2 * m.d_model**2


def decoder_macs(m, rows, target_width, source_width):
    """The decoder over `rows` targets padded to `target_width`, attending to sources of `source_width` tokens whose
    cross-attention keys and values are already projected (counted by cross_kv_macs)."""
    tokens = rows * target_width
    per_layer = (
        tokens * 4 * m.d_model**2  # self-attention Q, K, V and output projections
        # self-attention scores and weighted sum over the full square, as both implementations compute it
        # (the causal mask discards half, but neither skips it)
        + rows * 2 * target_width * target_width * m.d_model
        + tokens * 2 * m.d_model**2  # cross-attention Q and output projections
        + rows * 2 * target_width * source_width * m.d_model  # cross-attention scores and weighted sum
        + tokens * 2 * m.d_model * m.decoder_ffn
    )  # feed-forward: two matmuls
    return m.decoder_layers * per_layer


def lm_head_macs(m, positions):
    """Logits over the whole vocabulary at `positions` decoder positions (needed in full for the log-softmax)."""
    return positions * m.d_model * m.vocab


def baseline_macs(m, case, length_of):
    """What the naive baseline computes: per batch of 4 in input order, everything at the padded batch shape, and the
    cross-attention K/V of each pair's condition projected again in every decoder layer."""
    total = 0
    for p in case.passes:
        for start in range(0, len(p.conditions), ORIGINAL_BATCH_SIZE):
            rows = len(p.conditions[start : start + ORIGINAL_BATCH_SIZE])
            source = max(length_of[c] for c in p.conditions[start : start + ORIGINAL_BATCH_SIZE])
            target = max(length_of[t] for t in p.targets[start : start + ORIGINAL_BATCH_SIZE])
            total += (
                encoder_macs(m, rows, source)
                + cross_kv_macs(m, rows, source)
                + decoder_macs(m, rows, target, source)
                + lm_head_macs(m, rows * target)
            )
    return total


def minimal_macs(m, case, length_of):
    """The least the math needs: the encoder and the cross-attention K/V once per distinct condition on its real
    tokens, the decoder and the LM head once per distinct (condition, target) pair on its real tokens."""
    pairs = set(case.pairs)
    conditions = {c for c, _ in pairs}
    encoding = sum(encoder_macs(m, 1, length_of[c]) + cross_kv_macs(m, 1, length_of[c]) for c in conditions)
    decoding = sum(decoder_macs(m, 1, length_of[t], length_of[c]) + lm_head_macs(m, length_of[t]) for c, t in pairs)
    return encoding + decoding


# ---------------------------------------------------------------------------------------------------------------------
# Measurement, each in a fresh child process


@dataclass
class Job:
    method: str  # "baseline" or "engine"
    case: Case
    checkpoint: str
    device: str
    dtype: str
    max_tokens: int | None
    threads: int
    breakdown: bool


class StageClock:
    """Exclusive wall-clock seconds per stage (a stage's time excludes the stages nested in it), and the MACs each
    stage actually executed, read from the shapes the modules receive (so the engine's own padding is counted).
    Fed by forward hooks on the model's modules and by explicit `stage(name)` blocks; synchronises CUDA at each
    edge, so it slows the run and is used only for the breakdown, never for the headline timings."""

    def __init__(self, device, shape):
        self.cuda = device.type == "cuda"
        self.shape = shape
        self.seconds = defaultdict(float)
        self.macs = defaultdict(int)
        self.stack = []  # [name, start, seconds of nested stages]
        self.handles = []

    def _now(self):
        if self.cuda:
            torch.cuda.synchronize()
        return time.perf_counter()

    def enter(self, name, macs=0):
        self.macs[name] += macs
        self.stack.append([name, self._now(), 0.0])

    def exit(self):
        name, start, nested = self.stack.pop()
        elapsed = self._now() - start
        self.seconds[name] += elapsed - nested
        if self.stack:
            self.stack[-1][2] += elapsed

    @contextmanager
    def stage(self, name):
        self.enter(name)
        try:
            yield
        finally:
            self.exit()

    def watch_module(self, module, label, macs_of_call):
        def before(module, args, kwargs):
            self.enter(label() if callable(label) else label, macs_of_call(module, args, kwargs))

        self.handles.append(module.register_forward_pre_hook(before, with_kwargs=True))
        self.handles.append(module.register_forward_hook(lambda *_: self.exit()))

    def watch_model(self, model):
        m = self.shape

        def tokens_shape(args, kwargs):  # (rows, width) of the ids or embeddings a stack is called with
            ids = kwargs.get("input_ids", args[0] if args else None)
            return tuple((ids if ids is not None else kwargs["inputs_embeds"]).shape[:2])

        def encoder_call(module, args, kwargs):
            return encoder_macs(m, *tokens_shape(args, kwargs))

        def decoder_call(module, args, kwargs):
            source = kwargs.get("encoder_hidden_states")
            if source is None:
                source = kwargs.get("encoder_attention_mask")
            return decoder_macs(m, *tokens_shape(args, kwargs), source.shape[1] if source is not None else 0)

        def linear_call(module, args, kwargs):
            out_features, in_features = module.weight.shape
            return args[0].numel() // in_features * in_features * out_features

        def cross_kv_label():
            # The engine projects each condition's cross K/V in one decoder step of its condition pass.
            per_target = any(e[0].startswith("decoder") for e in self.stack) and not any(
                e[0] == CONDITION_PASS for e in self.stack
            )
            return "cross K/V projection, in decoder" if per_target else "cross K/V projection, once per condition"

        self.watch_module(model.get_encoder(), "encoder", encoder_call)
        self.watch_module(model.get_decoder(), "decoder (excl. cross K/V)", decoder_call)
        self.watch_module(model.get_output_embeddings(), "LM head matmul", linear_call)
        for layer in model.get_decoder().layers:
            self.watch_module(layer.encoder_attn.k_proj, cross_kv_label, linear_call)
            self.watch_module(layer.encoder_attn.v_proj, cross_kv_label, linear_call)

    def remove(self):
        for handle in self.handles:
            handle.remove()


def _wrap_method(obj, name, clock, stage_name, macs_of_call=lambda *args: 0):
    """Times a method of the engine by shadowing it on the instance (diagnostic only; skipped if it does not exist)."""
    method = getattr(obj, name, None)
    if method is None:
        return

    def timed(*args, **kwargs):
        clock.enter(stage_name, macs_of_call(*args))
        try:
            return method(*args, **kwargs)
        finally:
            clock.exit()

    setattr(obj, name, timed)


def breakdown_run(scorer, job, run):
    clock = StageClock(scorer.device, ModelShape.of(scorer.model.config))
    clock.watch_model(scorer.model)
    if job.method == "engine":
        _wrap_method(scorer, "_plan", clock, "tokenization")
        _wrap_method(scorer, "_encode", clock, CONDITION_PASS)
        # The engine multiplies by the output embedding itself inside _target_log_probs (one reused logits buffer).
        _wrap_method(
            scorer,
            "_target_log_probs",
            clock,
            "LM head matmul + log-prob readout, fused",
            lambda states, labels: lm_head_macs(clock.shape, states.shape[0]),
        )
    with clock.stage("other (planning, padding, Python, copies)"):
        run(scorer, job.case, clock.stage)
    clock.remove()
    for name in ("_plan", "_encode", "_target_log_probs"):
        scorer.__dict__.pop(name, None)
    return {name: dict(seconds=seconds, macs=clock.macs[name]) for name, seconds in clock.seconds.items()}


def _cpu_peak_reset():
    """Resets the kernel's peak-RSS mark of this process (Linux >= 4.0: writing 5 to clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _proc_status_bytes(field_name):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) * 1024
    return 0


def measure(job):
    """Loads the checkpoint, warms up, then times one run of one method on one case; returns its scores, seconds and
    peak memory (process RSS on CPU, allocated memory on CUDA), and the stage breakdown if asked."""
    import resource

    from bart_score import BARTScorer

    torch.set_num_threads(job.threads)
    kwargs = {} if job.max_tokens is None else {"max_tokens": job.max_tokens}
    scorer = BARTScorer(checkpoint=job.checkpoint, device=job.device, dtype=job.dtype, **kwargs)
    device = scorer.device
    run = run_engine if job.method == "engine" else run_baseline

    def synchronize():
        if device.type == "cuda":
            torch.cuda.synchronize()

    # Warm-up on a few pairs of the case, so that one-time kernel and allocator set-up is not timed.
    first = job.case.passes[0]
    if job.method == "engine":
        scorer.score(first.conditions[:8], first.targets[:8])
    else:
        naive_scores(scorer.model, scorer.tokenizer, first.conditions[:8], first.targets[:8], device)
    synchronize()

    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        resident_before = torch.cuda.memory_allocated(device)
        memory_method = "torch.cuda.max_memory_allocated"
    else:
        resident_before = _proc_status_bytes("VmRSS")
        memory_method = (
            "process peak RSS (VmHWM, reset before the run)"
            if _cpu_peak_reset()
            else "process peak RSS (ru_maxrss since start: includes model loading)"
        )
    synchronize()
    usage_before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    scores = run(scorer, job.case)
    synchronize()
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    # Kernel time and minor page faults show memory churn: large tensors freshly mapped (and zeroed) on every use.
    cpu = dict(
        user_s=usage.ru_utime - usage_before.ru_utime,
        system_s=usage.ru_stime - usage_before.ru_stime,
        minor_page_faults=usage.ru_minflt - usage_before.ru_minflt,
    )
    if device.type == "cuda":
        peak = torch.cuda.max_memory_allocated(device)
    elif "VmHWM" in memory_method:
        peak = _proc_status_bytes("VmHWM")
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    stages = breakdown_run(scorer, job, run) if job.breakdown else None
    return dict(
        seconds=seconds,
        scores=scores,
        peak_bytes=peak,
        resident_before_bytes=resident_before,
        memory_method=memory_method,
        stages=stages,
        cpu=cpu,
    )


def measure_in_child(job):
    """A fresh spawned process per measurement: no allocator state, cache or peak memory carried over."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(measure, job).result()


def matmul_probe_gflops(device):
    """A float32 matmul of encoder-like shape, timed for about a second: only for the rough duration estimate."""
    a = torch.randn(2048, 768, device=device)
    b = torch.randn(768, 3072, device=device)
    runs, start = 0, time.perf_counter()
    while time.perf_counter() - start < 1.0:
        a @ b
        if device.type == "cuda":
            torch.cuda.synchronize()
        runs += 1
    return 2 * runs * 2048 * 768 * 3072 / (time.perf_counter() - start) / 1e9


# ---------------------------------------------------------------------------------------------------------------------
# Statistics


def kendall_tau_b(x, y):
    """Kendall's tau-b (ties corrected) in O(n^2) with numpy, row blocks at a time to bound memory."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(x)
    if n < 2:
        return float("nan")
    concordance = tied_x = tied_y = 0  # concordant minus discordant pairs; pairs tied in x; pairs tied in y
    block = max(1, (1 << 22) // n)
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        later = np.arange(n)[None, :] > rows[:, None]  # each unordered pair once
        sign_x = np.sign(x[rows, None] - x[None, :])
        sign_y = np.sign(y[rows, None] - y[None, :])
        concordance += int((sign_x * sign_y)[later].sum())
        tied_x += int(((sign_x == 0) & later).sum())
        tied_y += int(((sign_y == 0) & later).sum())
    pairs = n * (n - 1) // 2
    denominator = math.sqrt((pairs - tied_x) * (pairs - tied_y))
    return concordance / denominator if denominator else float("nan")


def max_abs_difference(a, b):
    """Largest |a - b| over every direction both results have (per pair for (a), per hypothesis otherwise)."""
    return max(float(np.max(np.abs(a[d] - b[d]))) for d in a if d in b)


# ---------------------------------------------------------------------------------------------------------------------
# Report


def environment(args, device):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        commit = (
            subprocess.run(
                ["git", "-C", REPO, "describe", "--always", "--dirty"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
            or "unknown"
        )
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    info = {
        "command": shlex.join([os.path.basename(sys.executable), os.path.relpath(sys.argv[0], REPO), *sys.argv[1:]]),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "numpy": np.__version__,
        "repo commit": commit,
        "cpu": f"{cpu} ({os.cpu_count()} logical cores)",
        "torch threads": args.threads,
    }
    if device == "cuda":
        info["gpu"] = torch.cuda.get_device_name(0)
        info["cuda"] = torch.version.cuda
    return info


def format_bytes(n):
    return f"{n / 2**20:,.0f} MiB"


def format_rate(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}" if x >= 1 else f"{x:.3f}"


def report_case(case_row):
    """Adds the derived figures of one case's measurements to its row."""
    base = case_row["runs"]["baseline"]
    for name, run in case_row["runs"].items():
        run["pairs_per_s"] = case_row["pairs"] / run["seconds"]
        run["target_tokens_per_s"] = case_row["target_tokens"] / run["seconds"]
        macs = case_row["baseline_macs"] if name == "baseline" else case_row["minimal_macs"]
        run["gflops"] = 2 * macs / run["seconds"] / 1e9
        if name != "baseline":
            run["speedup"] = base["seconds"] / run["seconds"]
            run["speedup_over_bound"] = run["speedup"] / case_row["flop_bound"]


def print_report(rows, args, env, workload_info):
    print("\n## Engine benchmark\n")
    for key, value in env.items():
        print(f"- {key}: `{value}`" if key == "command" else f"- {key}: {value}")
    for line in workload_info:
        print(f"- {line}")
    repeat = f"best of {args.repeat} runs, the methods alternating" if args.repeat > 1 else "one run"
    memory_method = next(iter(rows[0]["runs"].values()))["memory_method"] if rows else ""
    print(
        f"- timing: wall clock of the whole call ({repeat}), each run in a fresh spawned process after a "
        f"warm-up on 8 pairs; peak memory: {memory_method}"
    )
    print(
        "- FLOP bound: baseline MACs / minimal MACs (matmuls only, so not a strict ceiling: the baseline's padding "
        "and full log-softmax are left out); GFLOP/s counts the baseline's own MACs for the baseline and the "
        "minimal MACs for the engine\n"
    )

    header = [
        "case",
        "run",
        "pairs",
        "seconds",
        "pairs/s",
        "target tok/s",
        "speed-up",
        "FLOP bound",
        "speed-up/bound",
        "GFLOP/s",
        "max abs diff",
        "peak mem",
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    warnings_ = []
    for row in rows:
        for name, run in row["runs"].items():
            is_baseline = name == "baseline"
            cells = [
                CASE_TITLES[row["case"]],
                name,
                f"{row['pairs']:,}",
                f"{run['seconds']:.2f}",
                format_rate(run["pairs_per_s"]),
                format_rate(run["target_tokens_per_s"]),
                "1.00x" if is_baseline else f"{run['speedup']:.2f}x",
                "" if is_baseline else f"{row['flop_bound']:.2f}x",
                "" if is_baseline else f"{run['speedup_over_bound']:.2f}",
                f"{run['gflops']:,.1f}",
                "" if is_baseline else f"{run['max_abs_diff']:.2e}",
                format_bytes(run["peak_bytes"]),
            ]
            print("| " + " | ".join(cells) + " |")
            if not is_baseline and run["speedup_over_bound"] < 0.8 and run["dtype"] == "float32":
                warnings_.append(
                    f"WARNING {CASE_TITLES[row['case']]} {name}: measured speed-up {run['speedup']:.2f}x is "
                    f"{run['speedup_over_bound']:.0%} of the FLOP bound {row['flop_bound']:.2f}x (< 80%): the gap "
                    f"needs explaining (compare the GFLOP/s columns and the breakdown)"
                )
    print()
    for row in rows:
        print(
            f"- {CASE_TITLES[row['case']]}: {row['pairs']:,} pairs ({row['distinct_pairs']:,} distinct), "
            f"{row['distinct_conditions']:,} distinct conditions, {row['target_tokens']:,} target tokens, "
            f"{row['hypotheses']:,} hypotheses; baseline {row['baseline_macs'] / 1e9:,.0f} GMAC, "
            f"minimal {row['minimal_macs'] / 1e9:,.0f} GMAC"
        )
        for name, run in row["runs"].items():
            cpu = run["cpu"]
            print(
                f"  - {name}: CPU time user {cpu['user_s']:.1f} s, system {cpu['system_s']:.1f} s, "
                f"{cpu['minor_page_faults']:,} minor page faults (first run); memory before the call "
                f"{format_bytes(run['resident_before_bytes'])}"
            )
            if "kendall_tau_vs_float32" in run:
                taus = ", ".join(f"{d} {t:.4f}" for d, t in run["kendall_tau_vs_float32"].items())
                print(
                    f"  - {name} vs engine float32: max abs diff {run['max_abs_diff_vs_float32']:.2e}, "
                    f"Kendall tau-b {taus}"
                )
            if "peak_fraction" in run:
                print(
                    f"  - {name}: {run['gflops'] / 1e3:.1f} TFLOP/s on the minimal FLOPs = "
                    f"{run['peak_fraction']:.1%} of the {args.peak_tflops:.0f} TFLOP/s bf16 dense peak"
                )
    print()
    print_targets(rows, args)
    for line in warnings_:
        print(line)
    if any(row["runs"]["baseline"].get("stages") for row in rows):
        print_breakdown(rows)


def print_targets(rows, args):
    """The issue's targets, checked where this run's settings are the ones they are stated for."""
    checks = []
    for row in rows:
        for name, run in row["runs"].items():
            if name == "baseline":
                continue
            if args.device == "cpu" and run["dtype"] == "float32" and row["case"] in CPU_TARGETS:
                goal = CPU_TARGETS[row["case"]]
                ok = run["speedup"] >= goal and run["max_abs_diff"] <= MAX_DIFF_TARGET
                checks.append(
                    f"{'PASS' if ok else 'MISS'} {CASE_TITLES[row['case']]} cpu float32: speed-up "
                    f"{run['speedup']:.2f}x (target >= {goal}x), max abs diff {run['max_abs_diff']:.1e} "
                    f"(target <= {MAX_DIFF_TARGET:g})"
                )
            if args.device == "cuda" and run["dtype"] == "bfloat16" and row["case"] in GPU_TARGETS:
                goal = GPU_TARGETS[row["case"]]
                checks.append(
                    f"{'PASS' if run['speedup'] >= goal else 'MISS'} {CASE_TITLES[row['case']]} cuda bf16: "
                    f"{run['speedup']:.1f}x the float32 baseline's throughput (target >= {goal}x)"
                )
    if checks:
        print("Targets (issue 3; stated for the full 100-source workload, bart-base dims on CPU / bart-large on GPU):")
        for line in checks:
            print(f"- {line}")
        print()


def print_breakdown(rows):
    print(
        "### Where the time goes (a separate instrumented run: exclusive seconds per stage, the MACs each stage "
        "executed at the shapes it ran, and its GFLOP/s)\n"
    )
    for row in rows:
        names = [n for n, r in row["runs"].items() if r.get("stages")]
        seen = {stage for n in names for stage in row["runs"][n]["stages"]}
        stages = [stage for stage in STAGE_ORDER if stage in seen] + sorted(seen - set(STAGE_ORDER))
        print(f"{CASE_TITLES[row['case']]}\n")
        print("| stage | " + " | ".join(f"{n} s | % | GMAC | GFLOP/s" for n in names) + " |")
        print("|---|" + "---|---|---|---|" * len(names))
        totals = {
            n: (
                sum(v["seconds"] for v in row["runs"][n]["stages"].values()),
                sum(v["macs"] for v in row["runs"][n]["stages"].values()),
            )
            for n in names
        }
        for stage in [*stages, "total"]:
            cells = []
            for n in names:
                figures = row["runs"][n]["stages"].get(stage, dict(seconds=0.0, macs=0))
                seconds, macs = totals[n] if stage == "total" else (figures["seconds"], figures["macs"])
                rate = f"{2 * macs / seconds / 1e9:,.1f}" if macs and seconds else ""
                cells += [f"{seconds:.3f}", f"{seconds / totals[n][0]:.0%}", f"{macs / 1e9:,.1f}" if macs else "", rate]
            print(f"| {stage} | " + " | ".join(cells) + " |")
        for n in names:
            executed = totals[n][1]
            reference = row["baseline_macs"] if n == "baseline" else row["minimal_macs"]
            kind = "the FLOP model's baseline count" if n == "baseline" else "the minimal count"
            print(f"\n- {n}: executed {executed / 1e9:,.1f} GMAC = {executed / reference:.3f} x {kind}")
        print()


# ---------------------------------------------------------------------------------------------------------------------
# Main


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--cases", default="a,b,c", help="comma-separated subset of a,b,c")
    parser.add_argument("--sources", type=int, default=100, help="source documents (the subset flag)")
    parser.add_argument("--hypotheses", type=int, default=16, help="hypotheses per source")
    parser.add_argument("--references", type=int, default=11, help="references per source")
    parser.add_argument("--prompt-sources", type=int, default=2, help="sources used by case (c)")
    parser.add_argument(
        "--prompts",
        type=int,
        default=70,
        help="prompts of the 70-prompt 'summary' set used by case (c); fewer only for smoke runs",
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16", "float16"],
        help="the engine's dtype; the baseline always runs in float32, and a non-float32 engine is "
        "also run in float32 for the score drift",
    )
    parser.add_argument(
        "--dims",
        choices=list(MODEL_DIMS),
        default=None,
        help="random model dimensions (default: base on cpu, large on cuda)",
    )
    parser.add_argument(
        "--checkpoint",
        default=None,
        help="use this BART checkpoint directory instead of a random one (workload lengths are "
        "calibrated to its tokenizer)",
    )
    parser.add_argument("--max-tokens", type=int, default=None, help="engine token budget (default: the engine's)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="timed runs of each method, alternating; the best is reported"
    )
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch intra-op threads")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also time each stage (encoder, cross K/V, decoder, LM head, ...) in an extra run",
    )
    parser.add_argument(
        "--peak-tflops",
        type=float,
        default=H200_BF16_PEAK_TFLOPS,
        help="the GPU's dense bf16 matmul peak, for the achieved fraction (default: H200 SXM)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--workdir",
        default=os.path.join(tempfile.gettempdir(), "bartscore-bench"),
        help="where the random checkpoint is cached",
    )
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    args.cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    if not args.cases or any(c not in CASE_TITLES for c in args.cases):
        parser.error("--cases takes a comma-separated subset of a,b,c")
    if args.dims is None:
        args.dims = "large" if args.device.startswith("cuda") else "base"
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda, but torch sees no CUDA device")
    if min(args.sources, args.hypotheses, args.references, args.prompt_sources, args.prompts, args.repeat) < 1:
        parser.error("--sources, --hypotheses, --references, --prompt-sources, --prompts and --repeat must be >= 1")
    args.prompt_sources = min(args.prompt_sources, args.sources)
    return args


def main(argv=None):
    args = parse_args(argv)
    device_type = "cuda" if args.device.startswith("cuda") else "cpu"
    os.makedirs(args.workdir, exist_ok=True)
    checkpoint = args.checkpoint or build_or_reuse_checkpoint(args.workdir, args.dims, args.seed)
    tokenizer = transformers.AutoTokenizer.from_pretrained(checkpoint)
    shape = ModelShape.of(transformers.AutoConfig.from_pretrained(checkpoint))

    workload = make_workload(tokenizer, args.sources, args.hypotheses, args.references, args.seed)
    cases = [build_case(key, workload, args.prompt_sources, args.prompts) for key in args.cases]
    texts = {text for case in cases for pair in case.pairs for text in pair}
    texts |= (
        set(workload.sources)
        | {t for h in workload.hypotheses for t in h}
        | {t for r in workload.references for t in r}
    )
    texts = sorted(texts)
    length_of = dict(zip(texts, map(len, tokenizer(texts, max_length=MAX_LENGTH, truncation=True)["input_ids"])))
    workload_info = [
        f"model: {checkpoint} (d_model {shape.d_model}, {shape.encoder_layers}+{shape.decoder_layers} layers, "
        f"ffn {shape.encoder_ffn}, vocab {shape.vocab:,}), engine dtype {args.dtype} on {args.device}",
        f"workload: {args.sources} sources x {args.hypotheses} hypotheses x {args.references} references "
        f"(case (c): {args.prompt_sources} sources x {min(args.prompts, 70)} prompts), seed {args.seed}",
        "token lengths: sources "
        + length_summary([length_of[t] for t in workload.sources])
        + "; hypotheses "
        + length_summary([length_of[t] for h in workload.hypotheses for t in h])
        + "; references "
        + length_summary([length_of[t] for r in workload.references for t in r]),
    ]
    for line in workload_info:
        print(line, flush=True)

    engine_dtypes = [args.dtype] + (["float32"] if args.dtype != "float32" else [])
    probe = matmul_probe_gflops(torch.device(args.device))
    for case in cases:
        macs = baseline_macs(shape, case, length_of) + minimal_macs(shape, case, length_of) * len(engine_dtypes)
        print(
            f"{CASE_TITLES[case.key]}: {len(case.pairs):,} pairs; a float32 matmul runs at {probe:,.0f} GFLOP/s "
            f"here, so expect at least {2 * macs * (args.repeat + args.breakdown) / (probe * 1e9) / 60:,.1f} min",
            flush=True,
        )
    rows = []
    for case in cases:
        row = dict(
            case=case.key,
            pairs=len(case.pairs),
            distinct_pairs=len(set(case.pairs)),
            distinct_conditions=len({c for c, _ in case.pairs}),
            hypotheses=case.hypotheses,
            target_tokens=sum(length_of[t] for _, t in case.pairs),
            baseline_macs=baseline_macs(shape, case, length_of),
            minimal_macs=minimal_macs(shape, case, length_of),
            runs={},
        )
        row["flop_bound"] = row["baseline_macs"] / row["minimal_macs"]
        methods = [("baseline", "baseline", "float32")] + [(f"engine {d}", "engine", d) for d in engine_dtypes]
        measured = {}
        # Repeats alternate the methods (baseline, engine, baseline, engine, ...), so that a change in the machine's
        # load during the run hits both sides; the best time of each is kept.
        for repeat in range(args.repeat):
            for name, method, dtype in methods:
                print(
                    f"{CASE_TITLES[case.key]}: {name} on {row['pairs']:,} pairs (run {repeat + 1} of {args.repeat}) "
                    f"...",
                    flush=True,
                )
                job = Job(
                    method,
                    case,
                    checkpoint,
                    args.device,
                    dtype,
                    args.max_tokens,
                    args.threads,
                    args.breakdown and repeat == 0,
                )
                result = measure_in_child(job)
                print(f"  {result['seconds']:.2f} s", flush=True)
                if repeat == 0:
                    measured[name] = result["scores"]
                    row["runs"][name] = dict(
                        dtype=dtype,
                        all_seconds=[],
                        peak_bytes=0,
                        stages=result["stages"],
                        resident_before_bytes=result["resident_before_bytes"],
                        memory_method=result["memory_method"],
                        cpu=result["cpu"],
                    )
                run = row["runs"][name]
                run["all_seconds"].append(result["seconds"])
                run["seconds"] = min(run["all_seconds"])
                run["peak_bytes"] = max(run["peak_bytes"], result["peak_bytes"])
        for name, run in row["runs"].items():
            if name != "baseline":
                run["max_abs_diff"] = max_abs_difference(measured[name], measured["baseline"])
        if args.dtype != "float32":
            reduced, full = measured[f"engine {args.dtype}"], measured["engine float32"]
            run = row["runs"][f"engine {args.dtype}"]
            run["max_abs_diff_vs_float32"] = max_abs_difference(reduced, full)
            run["kendall_tau_vs_float32"] = {d: kendall_tau_b(reduced[d], full[d]) for d in reduced}
        report_case(row)
        if device_type == "cuda":
            for name, run in row["runs"].items():
                if name != "baseline" and run["dtype"] in ("bfloat16", "float16"):
                    run["peak_fraction"] = run["gflops"] / 1e3 / args.peak_tflops
        rows.append(row)

    env = environment(args, device_type)
    print_report(rows, args, env, workload_info)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                dict(environment=env, workload=workload_info, args=vars(args), cases=rows), f, indent=2, default=float
            )
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    main()
