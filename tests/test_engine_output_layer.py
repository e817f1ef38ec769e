"""The engine's output layer: log-probabilities read from the logits a block of the vocabulary and a slice of positions
at a time (bart_score.scoring.engine), against the whole vocabulary's log-softmax."""

import numpy as np
import pytest
import torch
from support.reference import reference_token_log_probs

from bart_score.scoring import engine

TOLERANCE = 1e-5
SOURCES = ["The cat sat on the mat.", "", "Café déjà vu — naïve 😀.", "A long source about the weather today."]
TARGETS = ["A cat sat.", "Nothing to see.", "", "Rain, then sun, then rain again."]


@pytest.mark.parametrize("block_logits,positions", [(1, 512), (37, 3), (1000, 1)])
def test_token_log_probs_do_not_depend_on_the_blocks(scorer, reference_model, monkeypatch, block_logits, positions):
    """Blocks of one vocabulary row, of a few rows across slices of 3 positions, and one position at a time."""
    monkeypatch.setitem(engine._BLOCK_LOGITS, "cpu", block_logits)
    monkeypatch.setattr(engine, "_LOGIT_POSITIONS", positions)
    for source, target, pieces in zip(SOURCES, TARGETS, scorer.score_tokens(SOURCES, TARGETS)):
        expected = reference_token_log_probs(*reference_model, source, target)
        assert np.allclose([log_prob for _, log_prob in pieces], expected, atol=TOLERANCE)


def test_a_block_whose_logits_are_all_minus_infinity_adds_nothing(scorer, monkeypatch):
    """Tokens a bias forbids (-inf) fill whole blocks: the other tokens' log-probabilities stay finite and exact."""
    weight, _, _ = scorer.family.output_layer()
    vocabulary, width = weight.shape
    bias = torch.zeros(vocabulary)
    bias[: vocabulary // 2] = -torch.inf
    monkeypatch.setattr(scorer.family, "output_layer", lambda: (weight, bias, 1.0))
    monkeypatch.setitem(engine._BLOCK_LOGITS, "cpu", 5 * 8)  # 8 positions: blocks of 5 tokens
    states = torch.randn(8, width, generator=torch.Generator().manual_seed(0))
    labels = torch.arange(vocabulary - 8, vocabulary)
    with torch.inference_mode():
        got = scorer._target_log_probs(states, labels)
        expected = torch.log_softmax(states @ weight.t() + bias, dim=-1)[torch.arange(8), labels]
    assert torch.isfinite(got).all()
    assert torch.allclose(got, expected, atol=TOLERANCE)
