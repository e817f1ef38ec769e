"""Published BARTScore values with the real checkpoints. They need the real weights (in the Hugging Face cache, or
the paraphrase weights through $BARTSCORE_PARA_WEIGHTS), so each test skips, saying why, where those are absent."""

import os

import numpy as np
import pytest
from support.lazy import LazyModule

import bart_score

bartscore = LazyModule("bartscore")  # imports evaluate; imported by the first test that uses it (support/lazy.py)

TOLERANCE = 1e-4  # published on other hardware; float32 CPU results agree to about 1e-6


def engine_or_skip(checkpoint):
    try:
        return bart_score.BARTScorer(checkpoint=checkpoint, device="cpu")
    except bart_score.CheckpointNotFoundError as error:
        pytest.skip(reason=f"real weights absent for {checkpoint!r} ({str(error)[:160]}...)")


@pytest.fixture(scope="module")
def cnn():
    return engine_or_skip("cnn")


def test_cnn_source_to_target(cnn):
    assert cnn.score(["This is interesting."], ["This is fun."])[0] == pytest.approx(-2.510652780532837, abs=TOLERANCE)


def test_cnn_multi_reference_max(cnn):
    got = cnn.multi_ref_score(
        ["I'm super happy today.", "This is a good idea."],
        [["I feel good today.", "I feel sad today."], ["Not bad.", "Sounds like a good idea."]],
        agg="max",
        batch_size=4,
    )
    assert np.allclose(got, [-2.5008113384246826, -1.626236081123352], atol=TOLERANCE)


def test_cnn_recall_direction(cnn):
    got = cnn.score(
        ["There is a cat on the mat.", "Look! a wonderful day."],
        ["The cat is playing on the mat.", "Today is a wonderful day"],
        batch_size=4,
    )
    assert np.allclose(got, [-1.740734338760376, -3.0517942905426025], atol=TOLERANCE)


def test_cnn_text_against_itself(cnn):
    texts = ["This is a very good meal.", "This is a good meal ."]
    assert np.allclose(cnn.score(texts, texts), [-0.40471726655960083, -0.4944288432598114], atol=TOLERANCE)


def test_cnn_through_the_metric(cnn, monkeypatch):
    metric = bartscore.BARTScore("cnn")
    metric._scorer = cnn  # the same weights, without loading them twice
    result = metric.compute(predictions=["This is fun."], sources=["This is interesting."])
    assert result["faithfulness"][0] == pytest.approx(-2.510652780532837, abs=TOLERANCE)
    assert result["signature"].startswith("ckpt:facebook/bart-large-cnn|dirs:faithfulness|")


def test_cnn_para(monkeypatch):
    if not os.environ.get(bart_score.PARA_WEIGHTS_ENV):
        pytest.skip(reason=f"the paraphrase weights are absent (set {bart_score.PARA_WEIGHTS_ENV} to bart.pth)")
    para = engine_or_skip("cnn-para")
    assert para.score(["This is interesting."], ["This is fun."])[0] == pytest.approx(-2.336203098297119, abs=TOLERANCE)
