"""The benchmarks' shared workload: SummEval-shaped texts, the cases (a), (b), (c) as the engine is asked them and as
the passes a naive baseline makes for the same numbers, the naive baselines themselves (the original
BARTScorer.score's algorithm, from the tests' support package; GPTScore's per-pair loop for causal LMs), and the
process's peak-memory mark. Used by bench_engine.py, bench_families.py and bench_real_model.py."""

from __future__ import annotations

import os
import random
import shutil
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import torch
from support.reference import padded_batch_scores
from support.text import english_like_text

# SummEval's shape, in tokens (with <s> and </s>): mean length of each kind of text, each drawn within +-20%.
SOURCE_TOKENS, HYPOTHESIS_TOKENS, REFERENCE_TOKENS = 450, 85, 60
LENGTH_SPREAD = 0.2
ORIGINAL_BATCH_SIZE = 4  # the original BARTScorer.score's default batch size
MAX_LENGTH = 1024
PROMPT_SET = "summary"  # 70 prompts

CASE_TITLES = {
    "a": "(a) faithfulness",
    "b": "(b) 4 directions x refs",
    "c": "(c) faithfulness x prompts",
}


# ---------------------------------------------------------------------------------------------------------------------
# The workload


@dataclass
class Workload:
    sources: list  # one text per source document
    hypotheses: list  # per source, its system outputs
    references: list  # per source, its references


def tokens_per_word(tokenizer, seed):
    """How many tokens the tokenizer makes of one generated word, measured on a sample of generated text."""

    rng = random.Random(seed)
    words = 300
    sample = [english_like_text(rng, words) for _ in range(20)]
    lengths = [len(ids) - 2 for ids in tokenizer(sample)["input_ids"]]  # without <s> and </s>
    return sum(lengths) / (words * len(sample))


def make_workload(tokenizer, sources, hypotheses_per_source, references_per_source, seed):
    """Seeded English-like texts whose token lengths have SummEval's shape: each text's length is drawn uniformly
    within +-20% of its kind's mean, and converted to words with the measured tokens-per-word ratio."""

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
    """The original algorithm, deliberately unoptimised (the tests' support.reference.padded_batch_scores), in the
    original's default batches of 4."""
    batches = (ORIGINAL_BATCH_SIZE, MAX_LENGTH, device, stage)
    return np.asarray(padded_batch_scores(model, tokenizer, conditions, targets, *batches))


def naive_causal_scores(model, tokenizer, start_ids, conditions, targets, device):
    """GPTScore's loop for a decoder-only model, one pair at a time: the whole prefix + target through the model, a
    log-softmax over every position, the target's tokens read off. Here under the engine's causal policy (start_ids,
    then the condition and "\\n"; the target and its EOS scored), so that the scores compare."""
    scores = []
    with torch.inference_mode():
        for condition, target in zip(conditions, targets):
            prefix = start_ids + tokenizer(condition + "\n", add_special_tokens=False)["input_ids"]
            scored = [*tokenizer(target, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]
            room = MAX_LENGTH - len(scored[: MAX_LENGTH - 1])
            prefix, scored = prefix[:room], scored[: MAX_LENGTH - 1]
            ids = torch.tensor([prefix + scored], device=device)
            log_probs = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
            positions = torch.arange(len(prefix) - 1, len(prefix) + len(scored) - 1, device=device)
            scores.append(log_probs[positions, torch.tensor(scored, device=device)].mean().item())
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
# Checkpoints


def built_once(directory, what, build):
    """`directory`, made by `build(staging)` in a staging folder that is renamed into place once complete (a COMPLETE
    marker file), and reused as it is by later runs. `what` names it in the line printed while it is built."""
    if os.path.isfile(os.path.join(directory, "COMPLETE")):
        return directory
    print(f"building {what} in {directory} ...", flush=True)
    staging = directory + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    build(staging)
    open(os.path.join(staging, "COMPLETE"), "w").close()
    shutil.rmtree(directory, ignore_errors=True)
    os.rename(staging, directory)
    return directory


# ---------------------------------------------------------------------------------------------------------------------
# Peak memory


def reset_peak_rss():
    """Resets the kernel's peak-RSS mark of this process (Linux >= 4.0: writing 5 to clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def status_bytes(field_name):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) * 1024
    return 0
