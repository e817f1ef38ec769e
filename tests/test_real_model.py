"""The engine on the real SmolLM2-135M-Instruct (float32 on the CPU), under the plain causal policy and the chat
policy: against a plain loop of full forward passes, one pair at a time, with a float64 log-softmax (every direction,
prompts on either side, batch sizes, token budgets, truncation), and for what a real model must do on the news-like
texts of support/news_texts.py (a copy above a paraphrase above an unrelated text; a faithful summary above one with an
entity, a number or a negation changed; the least likely token inside the changed span).

The model is loaded once for the plain policy (the session's smollm2_scorer), once more for the chat policy, and
once by transformers alone for the reference; the measured rates are printed (pytest -s shows them)."""

from __future__ import annotations

import statistics
import warnings

import numpy as np
import pytest
import torch
from support.models import load_tiny
from support.news_texts import ENTITY, ITEMS, NEGATION, NUMBER, changed_span
from support.reference import causal_ids, chat_reference_ids

import bart_score
from bart_score.options import DEFAULT_INSTRUCTIONS

# The engine's difference from the plain loop. Both run the model in float32; the reference takes its log-softmax
# in float64, as torch's float32 log_softmax over SmolLM2's 49,152-token vocabulary is itself off by up to 1.3e-5.
TOLERANCE = 1e-5
CLOSING_TOKEN = "<|im_end|>"  # SmolLM2's ChatML turns end with it
POLICIES = ("plain", "chat")
PROMPTS = ("In short", "To sum up")
# A max_length at which the sources lose their end under either policy (the chat prompt takes about 35 tokens).
SHORT_MAX_LENGTH = {"plain": 40, "chat": 64}

# The parity texts: three summaries with one or two references each (the count varies by row), short texts so that
# the plain loop stays quick.
PARITY = ITEMS[:3]
PREDICTIONS = [item.summary for item in PARITY]
SOURCES = [item.source for item in PARITY]
REFERENCES = [[PARITY[0].changed], [PARITY[1].changed, PARITY[2].summary], [PARITY[0].summary]]
PROMPTED_ROWS = 2  # the prompted tests score the first two rows under each prompt


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


def reference_directions(reference_model, policy, prompts=(), side="encoder", rows=None):
    """Per prediction of the parity texts (the first `rows`, or all): faithfulness (source -> prediction), precision
    (reference -> prediction) and recall (prediction -> reference), each averaged over the row's references, and
    f_score = their mean."""

    def score(direction, condition, target):
        return reference_prompted(reference_model, policy, direction, condition, target, prompts, side)

    out = {"faithfulness": [], "precision": [], "recall": [], "f_score": []}
    rows = slice(rows)  # every row when rows is None
    for source, prediction, refs in zip(SOURCES[rows], PREDICTIONS[rows], REFERENCES[rows]):
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
            if side is None:
                cache[policy, side] = reference_directions(reference_model, policy)
            else:
                cache[policy, side] = reference_directions(reference_model, policy, PROMPTS, side, PROMPTED_ROWS)
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
    rows = slice(PROMPTED_ROWS)
    result = scorers[policy].score_directions(
        PREDICTIONS[rows],
        references=REFERENCES[rows],
        sources=SOURCES[rows],
        prompt=list(PROMPTS),
        prompt_side=side,
        max_tokens=512,
    )
    difference = largest_difference(result, expected_directions(policy, side))
    print(f"{policy}, prompts on the {side} side: max |engine - plain loop| {difference:.2e}")
    assert difference < TOLERANCE


@pytest.mark.parametrize("policy", POLICIES)
def test_truncation_at_a_short_max_length_equals_the_plain_loop(scorers, reference_model, policy):
    """At a short max_length the sources lose their end (the summaries kept whole), and a long target its own end."""
    max_length = SHORT_MAX_LENGTH[policy]
    short = scorers[policy].with_max_length(max_length)
    conditions = [item.source for item in ITEMS[:3]] + [ITEMS[3].summary]
    targets = [item.summary for item in ITEMS[:3]] + [ITEMS[3].source + " " + ITEMS[3].paraphrase]
    with pytest.warns(UserWarning, match="truncated"):
        got = short.score(conditions, targets, 2)
    expected = [
        reference_pair(reference_model, policy, "faithfulness", c, t, max_length) for c, t in zip(conditions, targets)
    ]
    difference = float(np.max(np.abs(np.asarray(got) - expected)))
    print(f"{policy}, max_length={max_length}: max |engine - plain loop| {difference:.2e}")
    assert difference < TOLERANCE

    _, tokenizer = reference_model
    cut_conditions = cut_targets = 0
    for condition, target in zip(conditions, targets):
        if policy == "plain":
            whole, kept = (
                causal_ids(tokenizer, condition, target),
                causal_ids(tokenizer, condition, target, max_length=max_length),
            )
        else:
            instruction = DEFAULT_INSTRUCTIONS["faithfulness"]
            whole = chat_reference_ids(tokenizer, condition, target, instruction, CLOSING_TOKEN)
            kept = chat_reference_ids(tokenizer, condition, target, instruction, CLOSING_TOKEN, None, max_length)
        assert len(kept[0]) + len(kept[1]) <= max_length
        cut_conditions += len(kept[0]) < len(whole[0])
        cut_targets += len(kept[1]) < len(whole[1])
    tokenized = short._plan(conditions, targets).tokenized
    assert (tokenized.truncated_conditions, tokenized.truncated_targets) == (cut_conditions, cut_targets)
    assert cut_conditions >= 3 and cut_targets == 1


# ---------------------------------------------------------------------------------------------------------------------
# What a real model must do


SUMMARY_KINDS = ("summary", "changed")
TARGET_KINDS = ("copy", "paraphrase", "unrelated", *SUMMARY_KINDS)


def targets_of(kind):
    """Per item, its target of one kind: the source itself, its paraphrase, the paraphrase of another item (half the
    list away, so that it tells of something else), the faithful summary, or the changed one."""
    if kind == "copy":
        return [item.source for item in ITEMS]
    if kind == "unrelated":
        return [ITEMS[(i + len(ITEMS) // 2) % len(ITEMS)].paraphrase for i in range(len(ITEMS))]
    return [getattr(item, kind) for item in ITEMS]


@pytest.fixture(scope="module")
def scored_tokens(scorers):
    """policy -> target kind -> per item, the scored tokens of its target given its source: one engine call per
    policy, so that each source is run once for its five targets."""
    out = {}
    for policy, scorer in scorers.items():
        # The long targets (copy, paraphrase, unrelated) under the plain policy only, to keep the run short.
        kinds = TARGET_KINDS if policy == "plain" else SUMMARY_KINDS
        targets = [t for kind in kinds for t in targets_of(kind)]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # none of these texts is long enough to be truncated
            tokens = scorer.score_tokens([item.source for item in ITEMS] * len(kinds), targets)
        out[policy] = {kind: tokens[k * len(ITEMS) : (k + 1) * len(ITEMS)] for k, kind in enumerate(kinds)}
    return out


def mean_scores(tokens):
    return np.array([statistics.fmean(log_prob for _, log_prob in scored) for scored in tokens])


def test_the_token_scores_average_to_the_score(scorers, scored_tokens):
    for policy, scorer in scorers.items():
        got = scorer.score([item.source for item in ITEMS[:4]], targets_of("changed")[:4])
        assert np.max(np.abs(mean_scores(scored_tokens[policy]["changed"][:4]) - got)) < TOLERANCE


def test_a_copy_scores_above_a_paraphrase_above_an_unrelated_text(scored_tokens):
    policy = "plain"
    copy, paraphrase, other = (mean_scores(scored_tokens[policy][kind]) for kind in ("copy", "paraphrase", "unrelated"))
    rate = float(np.mean((copy > paraphrase) & (paraphrase > other)))
    print(
        f"{policy}: copy > paraphrase > unrelated in {rate:.0%} of {len(ITEMS)} sources (copy > paraphrase "
        f"{np.mean(copy > paraphrase):.0%}, paraphrase > unrelated {np.mean(paraphrase > other):.0%})"
    )
    assert rate >= 0.9


@pytest.mark.parametrize("policy", POLICIES)
def test_a_faithful_summary_scores_above_one_with_an_entity_a_number_or_a_negation_changed(scored_tokens, policy):
    assert {item.kind for item in ITEMS} == {ENTITY, NUMBER, NEGATION} and len(ITEMS) >= 30
    faithful, changed = (mean_scores(scored_tokens[policy][kind]) for kind in ("summary", "changed"))
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


def least_likely_token_in_changed_span(tokens, item, skip_first):
    """Whether the least likely of the summary's own tokens (the closing token left out, and the first one too where
    skip_first) overlaps the changed span. The token texts joined are the scored text, so that their lengths give
    each token's characters."""
    start, stop = changed_span(item)
    spans, position = [], 0
    for text, log_prob in tokens[:-1]:
        spans.append((position, position + len(text), log_prob))
        position += len(text)
    assert "".join(text for text, _ in tokens[:-1]) == item.changed
    first, last, _ = min(spans[1:] if skip_first else spans, key=lambda span: span[2])
    return first < stop and last > start


# Measured (float32, CPU): chat 75% of the 32 pairs with every token, plain 34%. Under the plain policy the summary's
# first token follows the source and a bare newline, with nothing saying that a summary begins, and it is the least
# likely token in 8 of the 21 misses; without it the plain rate is 53% here (56% with the changed summaries scored on
# their own: the other texts of the call change the batches' float32 rounding, which moves one pair). So the plain
# policy shows this only barely: its threshold is one pair below the measured rate; chat's sits a little below 75%.
@pytest.mark.parametrize("policy, skip_first, threshold", [("plain", True, 0.5), ("chat", False, 0.7)])
def test_the_least_likely_token_of_an_unfaithful_summary_is_in_its_changed_span(
    scored_tokens, policy, skip_first, threshold
):
    tokens = scored_tokens[policy]["changed"]
    rates = {
        skip: float(np.mean([least_likely_token_in_changed_span(t, item, skip) for t, item in zip(tokens, ITEMS)]))
        for skip in (False, True)
    }
    print(
        f"{policy}: the least likely token is in the changed span in {rates[False]:.0%} of {len(ITEMS)} unfaithful "
        f"pairs ({rates[True]:.0%} with the summary's first token left out)"
    )
    assert rates[skip_first] >= threshold
