"""bart_score.integrations.rewards: a reward in the shape TRL's trainers call (prompts and completions, strings or
conversations, the dataset's other columns as keywords; one float per completion), against plain loops over the tiny
BART; its options (direction, source field, rescaling) and their errors before any model loads; the bad input of a
training step (an empty completion, one over the model's length, a missing column) answered as the metric answers it;
engines shared by rewards and the metric's instances of the same settings; and two steps of TRL's GRPOTrainer on the
CPU."""

from __future__ import annotations

import gc
import json
import warnings
import weakref

import numpy as np
import pytest
from support.reference import reference_directions, reference_score

import bart_score
from bart_score.baselines import files as baseline_files
from bart_score.baselines.build import build_baseline
from bart_score.errors import InputError, InputTypeError, TokenizationWarning
from bart_score.integrations._shared_engines import shared_engine
from bart_score.integrations.rewards import BARTScoreReward

TOLERANCE = 1e-5
DOCUMENTS = [
    "The city council approved a new budget on Tuesday that raises spending on schools by five percent.",
    "Heavy rain flooded the main road near the river, and the police closed it for most of the day.",
    "A local bakery won a national prize for its bread; the owner said the whole team had worked for it.",
]
COMPLETIONS = [
    "The council approved a budget that raises school spending.",
    "Rain flooded a road, which the police closed.",
    "A bakery won a prize for its bread.",
]
REFERENCES = [
    ["The council passed a budget with more money for schools.", "A new budget raises school spending."],
    "The police closed a flooded road.",
    ["A bakery's bread won a national prize."],
]
PROMPTS = [f"Summarize: {document}" for document in DOCUMENTS]


@pytest.fixture(scope="module")
def reward(tiny_checkpoint):
    return BARTScoreReward(tiny_checkpoint, device="cpu")


def faithfulness(reference_model, sources, completions):
    model, tokenizer = reference_model
    return np.array([reference_score(model, tokenizer, s, c) for s, c in zip(sources, completions)])


def trl_keywords(count):
    """What GRPOTrainer passes a reward besides prompts, completions and the dataset's columns."""
    return {
        "completion_ids": [[1, 2, 3]] * count,
        "trainer_state": object(),
        "log_extra": lambda *args: None,
        "log_metric": lambda *args: None,
    }


# ---------------------------------------------------------------------------------------------------------------------
# The reward against plain loops


@pytest.mark.slow
def test_the_reward_is_each_completions_faithfulness_given_its_prompt(reward, reference_model):
    got = reward(prompts=DOCUMENTS, completions=COMPLETIONS, **trl_keywords(3))
    assert isinstance(got, list) and all(type(score) is float for score in got)
    assert np.max(np.abs(np.array(got) - faithfulness(reference_model, DOCUMENTS, COMPLETIONS))) < TOLERANCE
    assert reward.__name__ == "bartscore_faithfulness"


def test_a_dataset_column_can_be_the_source(tiny_checkpoint, reference_model):
    reward = BARTScoreReward(tiny_checkpoint, device="cpu", source_field="document")
    got = reward(prompts=PROMPTS, completions=COMPLETIONS, document=DOCUMENTS, topic=["a", "b", "c"])
    assert np.max(np.abs(np.array(got) - faithfulness(reference_model, DOCUMENTS, COMPLETIONS))) < TOLERANCE


def test_conversations_are_read_as_their_users_and_assistants_text(reward, reference_model):
    prompts = [
        [{"role": "system", "content": "You write summaries."}, {"role": "user", "content": document}]
        for document in DOCUMENTS
    ]
    completions = [[{"role": "assistant", "content": completion}] for completion in COMPLETIONS]
    completions[1] = [{"role": "assistant", "content": [{"type": "text", "text": COMPLETIONS[1]}]}]
    got = reward(prompts=prompts, completions=completions)
    assert np.max(np.abs(np.array(got) - faithfulness(reference_model, DOCUMENTS, COMPLETIONS))) < TOLERANCE


@pytest.mark.parametrize("direction", ["precision", "recall", "f_score"])
def test_the_other_directions_take_their_references_from_a_column(tiny_checkpoint, reference_model, direction):
    reward = BARTScoreReward(tiny_checkpoint, device="cpu", direction=direction, source_field="references")
    got = reward(prompts=PROMPTS, completions=COMPLETIONS, references=REFERENCES)
    expected = reference_directions(*reference_model, COMPLETIONS, references=REFERENCES)[direction]
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE
    assert reward.__name__ == f"bartscore_{direction}"


@pytest.mark.slow
def test_a_rescaled_reward_maps_each_score_with_the_baseline_files_points(copier, copying_checkpoint, tmp_path):
    texts = [*DOCUMENTS, *COMPLETIONS]
    (tmp_path / "texts.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    path = str(tmp_path / "baseline.json")
    baseline_files.write_baseline(
        build_baseline(copier, texts=texts, corpus_file=str(tmp_path / "texts.txt"), pairs=20), path
    )
    points = baseline_files.load_baseline(path).points["faithfulness"]
    raw = BARTScoreReward(copying_checkpoint, device="cpu")(prompts=DOCUMENTS, completions=COMPLETIONS)
    rescaled = BARTScoreReward(copying_checkpoint, device="cpu", rescale="baseline", baseline=path)
    got = rescaled(prompts=DOCUMENTS, completions=COMPLETIONS)
    expected = (np.array(raw) - points.unrelated) / (points.copy - points.unrelated)
    assert got == pytest.approx(expected.tolist(), abs=1e-12)


@pytest.mark.slow
def test_a_pickled_reward_is_made_again_from_its_settings(tiny_checkpoint, reference_model):
    """As TRL's asynchronous rollout worker sends reward functions to a process it spawns."""
    import pickle

    reward = BARTScoreReward(tiny_checkpoint, device="cpu", source_field="document", max_length=64)
    copied = pickle.loads(pickle.dumps(reward))
    assert copied.scorer is reward.scorer  # in this process, the engine of the same settings
    assert (copied.direction, copied.source_field, copied.options) == (reward.direction, "document", reward.options)
    got = copied(prompts=PROMPTS, completions=COMPLETIONS, document=DOCUMENTS)
    assert got == reward(prompts=PROMPTS, completions=COMPLETIONS, document=DOCUMENTS)


# ---------------------------------------------------------------------------------------------------------------------
# The bad input of a training step: the metric's own behaviour, never a crash


@pytest.mark.slow
@pytest.mark.xdist_group("evaluate")  # loads the metric
def test_an_empty_completion_is_scored_as_the_metric_scores_it(reward, reference_model, tiny_checkpoint):
    import evaluate
    from support.metric import MODULE

    completions = ["", COMPLETIONS[1], [{"role": "assistant", "content": ""}]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the metric gives no warning for an empty prediction, nor does the reward
        got = reward(prompts=DOCUMENTS, completions=completions)
    texts = ["", COMPLETIONS[1], ""]
    assert np.max(np.abs(np.array(got) - faithfulness(reference_model, DOCUMENTS, texts))) < TOLERANCE
    metric = evaluate.load(MODULE, tiny_checkpoint, device="cpu")
    assert got == metric.compute(predictions=texts, sources=DOCUMENTS)["faithfulness"]


@pytest.mark.slow
def test_a_completion_over_the_models_length_is_cut_with_the_metrics_warning(tiny_checkpoint, reference_model):
    reward = BARTScoreReward(tiny_checkpoint, device="cpu", max_length=16)
    long = " ".join(COMPLETIONS * 4)
    with pytest.warns(TokenizationWarning, match=r"truncated .* distinct target text\(s\) to max_length=16 tokens"):
        got = reward(prompts=DOCUMENTS[:2], completions=[long, COMPLETIONS[1]])
    model, tokenizer = reference_model
    expected = [
        reference_score(model, tokenizer, d, c, max_length=16) for d, c in zip(DOCUMENTS, [long, COMPLETIONS[1]])
    ]
    assert np.max(np.abs(np.array(got) - expected)) < TOLERANCE


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            dict(completions="A text."),
            InputTypeError,
            "completions must be a list with one entry per completion, got a str",
        ),
        (dict(completions=["A.", None, "C."]), InputTypeError, "completions[1] is None; expected a string"),
        (
            dict(completions=[[{"content": "A."}], "B.", "C."]),
            InputTypeError,
            "completions[0][0] is a dict; a conversation",
        ),
        (
            dict(completions=[[{"role": "assistant", "content": 3}], "B.", "C."]),
            InputTypeError,
            'completions[0][0]["content"] is an int; expected a string or a list of',
        ),
        (
            dict(prompts=None),
            InputTypeError,
            "this reward judges completions against their prompts, and got no prompts; pass them",
        ),
        (dict(prompts=DOCUMENTS[:2]), InputError, "prompts has 2 entries but completions has 3"),
    ],
)
def test_bad_input_to_a_call_is_refused_naming_it(reward, call, error, message):
    arguments = {"prompts": DOCUMENTS, "completions": COMPLETIONS, **call}
    with pytest.raises(error) as raised:
        reward(**arguments)
    assert str(raised.value).startswith(message), str(raised.value)


def test_a_missing_source_column_is_named_with_the_columns_the_call_got(tiny_checkpoint):
    reward = BARTScoreReward(tiny_checkpoint, device="cpu", source_field="document")
    with pytest.raises(InputError) as raised:
        reward(prompts=PROMPTS, completions=COMPLETIONS, article=DOCUMENTS, **trl_keywords(3))
    assert str(raised.value) == (
        "source_field='document' names a column this call did not get; it got ['article', 'completion_ids']"
    )


@pytest.mark.parametrize(
    "options, error, message",
    [
        (dict(direction="faithful"), InputError, "direction must be one of ('faithfulness', 'precision', "),
        (dict(source_field=3), InputTypeError, 'source_field must be "prompt" or the name of a dataset column, got an'),
        (dict(directions=["recall"]), InputError, "directions is not a reward's option: a reward scores one direction"),
        (dict(distributed=True), InputError, "distributed is not a reward's option: a reward scores the completions"),
        (dict(rescale="corpus"), InputError, "rescale='corpus' takes its reference points from each call's own texts"),
        (dict(temperature=1.0), InputTypeError, "BARTScoreReward got unexpected options ['temperature']"),
        (dict(max_length=1), InputError, "max_length must be"),
        (dict(long_source="windows", direction="recall"), InputError, "long_source='windows' changes how the source"),
    ],
)
def test_options_are_checked_before_any_model_loads(tiny_checkpoint, no_model_load, options, error, message):
    with pytest.raises(error) as raised:
        BARTScoreReward(tiny_checkpoint, device="cpu", **options)
    assert str(raised.value).startswith(message), str(raised.value)


def test_a_missing_baseline_is_refused_when_the_reward_is_made(tiny_checkpoint, tmp_path, monkeypatch):
    monkeypatch.setenv(baseline_files.BASELINE_FOLDER_ENV, str(tmp_path / "none"))
    with pytest.raises(bart_score.BaselineNotFoundError, match="no BARTScore baseline for"):
        BARTScoreReward(tiny_checkpoint, device="cpu", rescale="baseline")


# ---------------------------------------------------------------------------------------------------------------------
# One engine for every holder of the same settings


@pytest.mark.slow
def test_rewards_of_the_same_settings_share_one_engine_until_the_last_goes(tiny_checkpoint):
    gc.freeze()  # what the process held before is left out of the collection below (a fifth of a second over it)
    try:
        first = BARTScoreReward(tiny_checkpoint, device="cpu", max_length=64)
        second = BARTScoreReward(tiny_checkpoint, device="cpu", max_length=64, direction="recall", source_field="r")
        other = BARTScoreReward(tiny_checkpoint, device="cpu", max_length=32)
        assert first.scorer is second.scorer and first.scorer is not other.scorer
        engine = weakref.ref(first.scorer)
        del first, second
        gc.collect()
        assert engine() is None
    finally:
        gc.unfreeze()


@pytest.mark.slow
def test_a_folder_saved_again_is_loaded_again(tiny_checkpoint, tmp_path):
    import shutil

    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    options = bart_score.EngineOptions(checkpoint=str(folder), device="cpu")
    held = shared_engine(options)
    assert shared_engine(options) is held
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "dropout": 0.2}))  # saved again, with another config
    assert shared_engine(options) is not held


# ---------------------------------------------------------------------------------------------------------------------
# A training loop: TRL's GRPOTrainer


@pytest.mark.slow
@pytest.mark.xdist_group("evaluate")  # datasets, with TRL
def test_two_steps_of_grpo_train_a_tiny_causal_lm_with_the_reward(tiny_checkpoint, tmp_path_factory, recwarn):
    """A tiny Llama is trained for two steps on the CPU, rewarded by the tiny BART's faithfulness to each prompt's
    document column, at a max_length that cuts texts (the engine's warning, not a failure); every completion gets a
    finite reward, and the policy's weights change."""
    import datasets
    import torch
    import trl
    from support.models import load_tiny, tiny_checkpoint_for

    policy, tokenizer = load_tiny(tiny_checkpoint_for(tmp_path_factory, "llama"))
    before = {name: value.detach().clone() for name, value in policy.named_parameters()}
    reward = BARTScoreReward(tiny_checkpoint, device="cpu", source_field="document", max_length=24)
    seen = []

    def recorded(prompts, completions, **columns):
        rewards = reward(prompts=prompts, completions=completions, **columns)
        seen.append((list(completions), rewards))
        return rewards

    recorded.__name__ = reward.__name__
    dataset = datasets.Dataset.from_dict({"prompt": PROMPTS * 2, "document": DOCUMENTS * 2})
    config = trl.GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("grpo")),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=12,
        learning_rate=1e-2,
        use_cpu=True,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        seed=0,
    )
    trainer = trl.GRPOTrainer(
        model=policy, reward_funcs=recorded, args=config, train_dataset=dataset, processing_class=tokenizer
    )
    trainer.train()
    assert len(seen) == 2 and all(len(rewards) == 4 for _, rewards in seen)
    assert all(np.isfinite(score) for _, rewards in seen for score in rewards)
    assert any(issubclass(w.category, TokenizationWarning) for w in recwarn.list)
    assert any(not torch.equal(before[name], value) for name, value in policy.named_parameters())
