"""bart_score.integrations._shared_engines: the one engine of a checkpoint and settings in a process, held by any number
of the metric's instances and rewards. A served model (the tests' own inference server, support/inference_server.py) is
shared by every holder, each scoring as a plain loop over the server's model does, and a holder that comes once the
server reports other weights gets an engine of those; a local checkpoint rewritten in place with its size and
modification time set back is loaded again, under another identity."""

import os
import shutil

import numpy as np
import pytest
import safetensors.torch
from support.inference_server import InferenceServer
from support.lazy import LazyModule
from support.metric import MODULE
from support.reference import causal_score

import bart_score
from bart_score.integrations._shared_engines import shared_engine
from bart_score.integrations.rewards import BARTScoreReward
from bart_score.models.served import _transport as servers

evaluate = LazyModule("evaluate")

TOLERANCE = 1e-5
SOURCES = [
    "The city council approved a new budget on Tuesday that raises spending on schools by five percent.",
    "Heavy rain flooded the main road near the river, and the police closed it for most of the day.",
]
PREDICTIONS = ["The council approved a budget that raises school spending.", "Rain flooded a road."]


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    monkeypatch.setattr(servers, "RETRY_DELAY", 0.01)
    monkeypatch.delenv(servers.API_KEY_ENV, raising=False)
    monkeypatch.delenv(servers.API_KEY_FILE_ENV, raising=False)


def plain_loop(tiny_opt, sources=SOURCES, predictions=PREDICTIONS):
    model, tokenizer = tiny_opt[1].model, tiny_opt[1].tokenizer
    return np.array([causal_score(model, tokenizer, s, p) for s, p in zip(sources, predictions)])


@pytest.mark.slow
@pytest.mark.xdist_group("evaluate")
def test_a_served_model_is_held_by_many_metric_instances_and_rewards_at_once(tiny_opt):
    with InferenceServer("vllm", tiny_opt[0], model=tiny_opt[1]) as server:
        served = {"device": "cpu", "served_tokenizer": tiny_opt[0]}
        instances = [evaluate.load(MODULE, server.checkpoint, **served) for _ in range(3)]
        rewards = [BARTScoreReward(server.checkpoint, **served) for _ in range(3)]
        assert all(instance.scorer is instances[0].scorer for instance in instances)
        assert all(reward.scorer is rewards[0].scorer for reward in rewards)
        expected = plain_loop(tiny_opt)
        for instance in instances:
            result = instance.compute(predictions=PREDICTIONS, sources=SOURCES)
            np.testing.assert_allclose(result["faithfulness"], expected, atol=TOLERANCE)
        for reward in rewards:
            np.testing.assert_allclose(reward(prompts=SOURCES, completions=PREDICTIONS), expected, atol=TOLERANCE)
        held = instances[0].scorer.model_identity
        assert held.startswith("served:vllm:tiny#") and rewards[0].scorer.model_identity == held


@pytest.mark.slow
def test_a_holder_that_comes_once_the_server_reports_other_weights_gets_their_engine(tiny_opt):
    """The server keeps its model's name but says its weights are others (its root): the engine held is not that
    model's, so a new holder is given a new engine, which later holders share."""
    with InferenceServer("vllm", tiny_opt[0], model=tiny_opt[1]) as server:
        options = bart_score.EngineOptions(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        first = shared_engine(options)
        assert shared_engine(options) is first and shared_engine(options) is first
        server.root = "someone/tiny-retrained"
        swapped = shared_engine(options)
        assert swapped is not first and swapped.scorer.model_identity != first.scorer.model_identity
        assert shared_engine(options) is swapped
        np.testing.assert_allclose(swapped.scorer.score(SOURCES, PREDICTIONS), plain_loop(tiny_opt), atol=TOLERANCE)


@pytest.mark.slow
def test_a_checkpoint_rewritten_in_place_with_its_size_and_mtime_set_back_is_loaded_again(tiny_checkpoint, tmp_path):
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    weights = folder / "model.safetensors"
    options = bart_score.EngineOptions(checkpoint=str(folder), device="cpu")
    held = shared_engine(options)
    assert shared_engine(options) is held
    before = os.stat(weights)
    tensors = safetensors.torch.load_file(str(weights))
    name = max(tensors, key=lambda key: tensors[key].numel())
    tensors[name] = tensors[name] * 2  # retrained: other values, the same shapes
    metadata = safetensors.safe_open(str(weights), "pt").metadata()
    safetensors.torch.save_file(tensors, str(weights), metadata=metadata)
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(weights)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    reloaded = shared_engine(options)
    assert reloaded is not held and reloaded.scorer.model_identity != held.scorer.model_identity
    assert reloaded.scorer.score(SOURCES, PREDICTIONS) != held.scorer.score(SOURCES, PREDICTIONS)
    assert shared_engine(options) is reloaded
