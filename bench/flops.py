"""Where a run's FLOPs go: the FLOP model (multiply-accumulates of a BART's matmuls, for the baseline's padded batches
and for the minimal computation) and the stage breakdown (forward hooks and engine methods timed exclusively, with
the MACs each stage executed at the shapes it ran). Used by bench_engine.py."""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from workload import CASE_TITLES, ORIGINAL_BATCH_SIZE

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
