"""The engine on the real SmolLM2-135M-Instruct (float32 on the CPU), under the plain causal policy and the chat
policy: against a plain loop of full forward passes, one pair at a time, with a float64 log-softmax (every direction,
prompts on either side, batch sizes, token budgets, truncation), and for what a real model must do on the news-like
texts of news_texts.py (a copy above a paraphrase above an unrelated text; a faithful summary above one with an
entity, a number or a negation changed; the least likely token inside the changed span).

The model is loaded once for the plain policy (the session's smollm2_scorer), once more for the chat policy, and
once by transformers alone for the reference; the measured rates are printed (pytest -s shows them)."""

from __future__ import annotations

import statistics
import warnings

import numpy as np
import pytest
import torch
from news_texts import ENTITY, ITEMS, NEGATION, NUMBER, changed_span
from reference import causal_ids
from tiny_chat import chat_reference_ids
from tiny_models import load_tiny

import bart_score
from bart_score.templates import DEFAULT_INSTRUCTIONS

# The engine's difference from the plain loop. Both run the model in float32; the reference takes its log-softmax
# in float64, as torch's float32 log_softmax over SmolLM2's 49,152-token vocabulary is itself off by up to 1.3e-5.
TOLERANCE = 1e-5
CLOSING_TOKEN = "<|im_end|>"  # SmolLM2's ChatML turns end with it
POLICIES = ("plain", "chat")
PROMPTS = ("In short", "To sum up")
SHORT_MAX_LENGTH = 64

# The parity texts: four summaries with one or two references each (the reference count varies by row).
PARITY = ITEMS[:4]
PREDICTIONS = [item.summary for item in PARITY]
SOURCES = [item.source for item in PARITY]
REFERENCES = [
    [PARITY[0].paraphrase],
    [PARITY[1].paraphrase, PARITY[2].summary],
    [PARITY[2].paraphrase],
    [PARITY[3].paraphrase, PARITY[0].summary],
]


@pytest.fixture(scope="module")
def reference_model(smollm2_folder):
    """(model, tokenizer) loaded by transformers alone, independently of the code under test."""
    model, tokenizer = load_tiny(smollm2_folder)
    return model.float(), tokenizer


@pytest.fixture(scope="module")
def scorers(smollm2_folder, smollm2_scorer):
    """policy -> the engine on SmolLM2: the session's plain scorer, and one with chat=True (default system turn)."""
    return {"plain": smollm2_scorer, "chat": bart_score.BARTScorer(checkpoint=smollm2_folder, device="cpu", chat=True)}


# ---------------------------------------------------------------------------------------------------------------------
# The plain loop


def float64_mean_log_prob(model, prefix, scored):
    """One full forward pass over prefix + scored (the last scored token is only predicted, never fed), the
    log-softmax in float64, and the mean log-probability of the scored tokens, each read at the position before it."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prefix + scored[:-1]])).logits[0].double()
    log_probs = torch.log_softmax(logits, dim=-1)
    return statistics.fmean(log_probs[len(prefix) - 1 + i, token].item() for i, token in enumerate(scored))


def reference_pair(reference_model, policy, direction, condition, target, max_length=1024):
    model, tokenizer = reference_model
    if policy == "plain":
        prefix, scored = causal_ids(tokenizer, condition, target, max_length=max_length)
    else:
        instruction = DEFAULT_INSTRUCTIONS[direction]
        prefix, scored = chat_reference_ids(tokenizer, condition, target, instruction, CLOSING_TOKEN, None, max_length)
    return float64_mean_log_prob(model, prefix, scored)


def reference_prompted(reference_model, policy, direction, condition, target, prompts, side):
    """The mean over the prompts of the pair's score: the encoder side appends " <prompt>," to the condition, the
    decoder side puts "<prompt>, " before the target."""
    if not prompts:
        return reference_pair(reference_model, policy, direction, condition, target)
    scores = []
    for phrase in prompts:
        if side == "encoder":
            scores.append(reference_pair(reference_model, policy, direction, f"{condition} {phrase},", target))
        else:
            scores.append(reference_pair(reference_model, policy, direction, condition, f"{phrase}, {target}"))
    return statistics.fmean(scores)


def reference_directions(reference_model, policy, prompts=(), side="encoder"):
    """Per prediction of the parity texts: faithfulness (source -> prediction), precision (reference -> prediction)
    and recall (prediction -> reference), each averaged over the row's references, and f_score = their mean."""

    def score(direction, condition, target):
        return reference_prompted(reference_model, policy, direction, condition, target, prompts, side)

    out = {"faithfulness": [], "precision": [], "recall": [], "f_score": []}
    for source, prediction, refs in zip(SOURCES, PREDICTIONS, REFERENCES):
        out["faithfulness"].append(score("faithfulness", source, prediction))
        precision = statistics.fmean(score("precision", ref, prediction) for ref in refs)
        recall = statistics.fmean(score("recall", prediction, ref) for ref in refs)
        out["precision"].append(precision)
        out["recall"].append(recall)
        out["f_score"].append((precision + recall) / 2)
    return {direction: np.array(scores) for direction, scores in out.items()}


@pytest.fixture(scope="module")
def expected_directions(reference_model):
    """(policy, prompt side or None) -> the plain loop's directions, computed once per module."""
    cache = {}

    def expected(policy, side=None):
        if (policy, side) not in cache:
            prompts = PROMPTS if side else ()
            cache[policy, side] = reference_directions(reference_model, policy, prompts, side or "encoder")
        return cache[policy, side]

    return expected


def largest_difference(result, expected):
    return max(float(np.max(np.abs(np.asarray(result[d], dtype=np.float64) - expected[d]))) for d in expected)


# ---------------------------------------------------------------------------------------------------------------------
# The engine against the plain loop


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("batch_size, max_tokens", [(None, None), (1, 64), (3, 400)])
def test_every_direction_equals_the_plain_loop(scorers, expected_directions, policy, batch_size, max_tokens):
    result = scorers[policy].score_directions(
        PREDICTIONS, references=REFERENCES, sources=SOURCES, batch_size=batch_size, max_tokens=max_tokens
    )
    difference = largest_difference(result, expected_directions(policy))
    print(f"{policy}, batch_size={batch_size}, max_tokens={max_tokens}: max |engine - plain loop| {difference:.2e}")
    assert difference < TOLERANCE


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("side", ["encoder", "decoder"])
def test_prompted_directions_equal_the_plain_loop(scorers, expected_directions, policy, side):
    result = scorers[policy].score_directions(
        PREDICTIONS, references=REFERENCES, sources=SOURCES, prompt=list(PROMPTS), prompt_side=side, max_tokens=512
    )
    difference = largest_difference(result, expected_directions(policy, side))
    print(f"{policy}, prompts on the {side} side: max |engine - plain loop| {difference:.2e}")
    assert difference < TOLERANCE


@pytest.mark.parametrize("policy", POLICIES)
def test_truncation_at_a_short_max_length_equals_the_plain_loop(scorers, reference_model, policy):
    """At max_length=64 a source loses its end (the summary kept whole) and a long target loses its end too."""
    short = scorers[policy].with_max_length(SHORT_MAX_LENGTH)
    conditions = [item.source for item in ITEMS[:3]] + [ITEMS[3].summary, ITEMS[4].source]
    targets = [item.summary for item in ITEMS[:3]] + [ITEMS[3].source, ITEMS[4].source + " " + ITEMS[4].paraphrase]
    with pytest.warns(UserWarning, match="truncated"):
        got = short.score(conditions, targets, 2)
    expected = [
        reference_pair(reference_model, policy, "faithfulness", c, t, SHORT_MAX_LENGTH)
        for c, t in zip(conditions, targets)
    ]
    difference = float(np.max(np.abs(np.asarray(got) - expected)))
    print(f"{policy}, max_length={SHORT_MAX_LENGTH}: max |engine - plain loop| {difference:.2e}")
    assert difference < TOLERANCE
    tokenized = short._plan(conditions, targets).tokenized
    assert tokenized.truncated_conditions >= 3 and tokenized.truncated_targets >= 1


# ---------------------------------------------------------------------------------------------------------------------
# What a real model must do


def quiet_score(scorer, conditions, targets):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of these texts is long enough to be truncated
        return np.array(scorer.score(conditions, targets))


@pytest.mark.parametrize("policy", POLICIES)
def test_a_copy_scores_above_a_paraphrase_above_an_unrelated_text(scorers, policy):
    sources = [item.source for item in ITEMS]
    unrelated = [ITEMS[(i + len(ITEMS) // 2) % len(ITEMS)].paraphrase for i in range(len(ITEMS))]
    copy = quiet_score(scorers[policy], sources, sources)
    paraphrase = quiet_score(scorers[policy], sources, [item.paraphrase for item in ITEMS])
    other = quiet_score(scorers[policy], sources, unrelated)
    rate = float(np.mean((copy > paraphrase) & (paraphrase > other)))
    print(
        f"{policy}: copy > paraphrase > unrelated in {rate:.0%} of {len(ITEMS)} sources (copy > paraphrase "
        f"{np.mean(copy > paraphrase):.0%}, paraphrase > unrelated {np.mean(paraphrase > other):.0%})"
    )
    assert rate >= 0.9


@pytest.mark.parametrize("policy", POLICIES)
def test_a_faithful_summary_scores_above_one_with_an_entity_a_number_or_a_negation_changed(scorers, policy):
    assert {item.kind for item in ITEMS} == {ENTITY, NUMBER, NEGATION} and len(ITEMS) >= 30
    sources = [item.source for item in ITEMS]
    faithful = quiet_score(scorers[policy], sources, [item.summary for item in ITEMS])
    changed = quiet_score(scorers[policy], sources, [item.changed for item in ITEMS])
    above = faithful > changed
    by_kind = {
        kind: float(np.mean([a for a, item in zip(above, ITEMS) if item.kind == kind]))
        for kind in (ENTITY, NUMBER, NEGATION)
    }
    rate = float(np.mean(above))
    print(
        f"{policy}: faithful > changed in {rate:.0%} of {len(ITEMS)} pairs ("
        + ", ".join(f"{kind} {value:.0%}" for kind, value in by_kind.items())
        + ")"
    )
    assert rate >= 0.9, [item.changed for a, item in zip(above, ITEMS) if not a]


def least_likely_token_in_changed_span(tokens, item):
    """Whether the least likely of the summary's own tokens (the closing token left out) overlaps the changed span.
    The token texts joined are the scored text, so that their lengths give each token's characters."""
    start, stop = changed_span(item)
    spans, position = [], 0
    for text, log_prob in tokens[:-1]:
        spans.append((position, position + len(text), log_prob))
        position += len(text)
    assert "".join(text for text, _ in tokens[:-1]) == item.changed
    first, last, _ = min(spans, key=lambda span: span[2])
    return first < stop and last > start


@pytest.mark.parametrize("policy, threshold", [("plain", 0.6), ("chat", 0.6)])
def test_the_least_likely_token_of_an_unfaithful_summary_is_in_its_changed_span(scorers, policy, threshold):
    tokens = scorers[policy].score_tokens([item.source for item in ITEMS], [item.changed for item in ITEMS])
    hits = [least_likely_token_in_changed_span(scored, item) for scored, item in zip(tokens, ITEMS)]
    rate = float(np.mean(hits))
    print(f"{policy}: the least likely token is in the changed span in {rate:.0%} of {len(ITEMS)} unfaithful pairs")
    assert rate >= threshold
