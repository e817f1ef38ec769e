"""The `evaluate` metric: loading, every direction, references, prompts, accumulation and errors."""

import hashlib
import os
import random
import re

import numpy as np
import pytest
from support.fast_subset import fast_cases
from support.lazy import LazyModule
from support.metric import MODULE
from support.reference import reference_directions
from support.text import english_like_text

import bart_score
from bart_score.options import ENGINE_OPTION_NAMES, OPTION_NAMES

TOLERANCE = 1e-5
evaluate = LazyModule("evaluate")  # imported by the first test that uses it (support/lazy.py)


@pytest.fixture(scope="module")
def metric(tiny_checkpoint):
    return evaluate.load(MODULE, tiny_checkpoint, device="cpu")


def examples(seed=0, n=6):
    rng = random.Random(seed)
    sources = [english_like_text(rng, rng.randint(10, 50)) for _ in range(n)]
    predictions = [english_like_text(rng, rng.randint(3, 20)) for _ in range(n)]
    references = [[english_like_text(rng, rng.randint(3, 20)) for _ in range(rng.randint(1, 3))] for _ in range(n)]
    predictions[-1] = ""  # an empty output scores without crashing
    return sources, predictions, references


def assert_matches(result, expected, directions):
    for direction in directions:
        assert np.max(np.abs(np.array(result[direction]) - expected[direction])) < TOLERANCE, direction
        assert result[f"{direction}_mean"] == pytest.approx(np.mean(expected[direction]), abs=TOLERANCE)


@pytest.mark.slow
def test_every_direction_with_sources_and_multiple_references(metric, reference_model):
    sources, predictions, references = examples()
    result = metric.compute(predictions=predictions, references=references, sources=sources)
    expected = reference_directions(*reference_model, predictions, references, sources)
    assert_matches(result, expected, bart_score.DIRECTIONS)
    assert set(result) == {*bart_score.DIRECTIONS, *(f"{d}_mean" for d in bart_score.DIRECTIONS), "signature"}


@pytest.mark.slow
def test_max_aggregation(metric, reference_model):
    _sources, predictions, references = examples(seed=1)
    result = metric.compute(predictions=predictions, references=references, aggregation="max")
    expected = reference_directions(*reference_model, predictions, references, aggregation="max")
    assert_matches(result, expected, ("precision", "recall", "f_score"))
    assert "faithfulness" not in result


def test_sources_alone(metric, reference_model):
    sources, predictions, _ = examples(seed=2)
    result = metric.compute(predictions=predictions, sources=sources)
    assert_matches(result, reference_directions(*reference_model, predictions, sources=sources), ("faithfulness",))
    assert set(result) == {"faithfulness", "faithfulness_mean", "signature"}


@pytest.mark.slow
def test_single_string_references(metric, reference_model):
    _, predictions, references = examples(seed=3)
    single = [refs[0] for refs in references]
    result = metric.compute(predictions=predictions, references=single)
    assert_matches(result, reference_directions(*reference_model, predictions, single), ("precision", "recall"))
    assert "|nrefs:1|" in result["signature"]


@pytest.mark.parametrize("side", fast_cases(["encoder", "decoder"], ["encoder"]))
@pytest.mark.parametrize(
    "prompt,phrases",
    [
        pytest.param("Such as", ["Such as"], marks=pytest.mark.slow),
        pytest.param(["In summary", "To conclude"], ["In summary", "To conclude"], marks=pytest.mark.slow),
        ("mt", ["Such as"]),  # the fast subset's: a prompt set's name, read as its phrases
    ],
)
def test_prompts(metric, reference_model, side, prompt, phrases):
    sources, predictions, references = examples(seed=4, n=3)
    result = metric.compute(
        predictions=predictions, references=references, sources=sources, prompt=prompt, prompt_side=side
    )
    expected = reference_directions(*reference_model, predictions, references, sources, prompts=phrases, side=side)
    assert_matches(result, expected, bart_score.DIRECTIONS)


@pytest.mark.slow
def test_a_named_prompt_set_averages_all_its_prompts(metric, reference_model):
    sources, predictions, _ = examples(seed=5, n=2)
    result = metric.compute(predictions=predictions, sources=sources, prompt="paraphrase", prompt_side="decoder")
    expected = reference_directions(
        *reference_model, predictions, sources=sources, prompts=bart_score.PROMPT_SETS["paraphrase"], side="decoder"
    )
    assert_matches(result, expected, ("faithfulness",))
    assert "|prompt:paraphrase(34)@decoder|" in result["signature"]


def test_prompt_sets_are_the_papers():
    assert [len(bart_score.PROMPT_SETS[name]) for name in ("summary", "paraphrase", "mt")] == [70, 34, 1]
    assert bart_score.PROMPT_SETS["mt"] == ("Such as",)
    assert bart_score.PROMPT_SETS["summary"][0] == "In a nutshell"
    assert "To put it another way" in bart_score.PROMPT_SETS["paraphrase"]
    shared = os.path.join(os.path.dirname(bart_score.__file__), "..", "..", "shared", "data", "prompts")
    if not os.path.isdir(shared):
        pytest.skip(reason="the paper's prompt files (../shared/data/prompts) are not beside this checkout")
    for name in bart_score.PROMPT_SETS:
        with open(os.path.join(shared, f"{name}.txt"), encoding="utf-8") as handle:
            assert tuple(handle.read().splitlines()) == bart_score.PROMPT_SETS[name]


@pytest.mark.slow
def test_only_requested_directions_are_computed(metric, reference_model, monkeypatch):
    sources, predictions, references = examples(seed=6, n=3)
    scored = []
    score = metric.scorer.score

    def counting(conditions, targets, *args, **kwargs):
        scored.extend(zip(conditions, targets))
        return score(conditions, targets, *args, **kwargs)

    monkeypatch.setattr(metric.scorer, "score", counting)
    result = metric.compute(
        predictions=predictions, references=references, sources=sources, directions=["faithfulness"]
    )
    assert set(result) == {"faithfulness", "faithfulness_mean", "signature"}
    assert scored == list(zip(sources, predictions))
    scored.clear()
    result = metric.compute(predictions=predictions, references=references, sources=sources, directions="f_score")
    assert set(result) == {"f_score", "f_score_mean", "signature"}
    expected = reference_directions(*reference_model, predictions, references)
    assert_matches(result, expected, ("f_score",))
    assert len(scored) == 2 * sum(map(len, references))


@pytest.mark.slow
def test_results_follow_input_order(metric):
    sources, predictions, references = examples(seed=7, n=8)
    straight = metric.compute(predictions=predictions, references=references, sources=sources)
    order = list(range(len(predictions)))
    random.Random(1).shuffle(order)
    shuffled = metric.compute(
        predictions=[predictions[i] for i in order],
        references=[references[i] for i in order],
        sources=[sources[i] for i in order],
        batch_size=2,
    )
    for direction in bart_score.DIRECTIONS:
        assert np.max(np.abs(np.array(shuffled[direction]) - np.array(straight[direction])[order])) < TOLERANCE


def test_add_batch_and_add_accumulate_all_columns(metric):
    sources, predictions, references = examples(seed=8, n=5)
    whole = metric.compute(predictions=predictions, references=references, sources=sources)
    metric.add_batch(predictions=predictions[:2], references=references[:2], sources=sources[:2])
    metric.add(prediction=predictions[2], reference=references[2], source=sources[2])
    metric.add_batch(predictions=predictions[3:], references=references[3:], sources=sources[3:])
    accumulated = metric.compute()
    for direction in bart_score.DIRECTIONS:
        assert np.allclose(accumulated[direction], whole[direction], atol=TOLERANCE)


def test_mixing_inputs_across_batches_is_refused_and_does_not_poison_the_metric(metric):
    metric.add_batch(predictions=["a"], sources=["b"])
    with pytest.raises(ValueError, match=r"this batch gives references= but earlier batches gave sources="):
        metric.add_batch(predictions=["a"], references=["b"])
    result = metric.compute()
    assert len(result["faithfulness"]) == 1
    assert len(metric.compute(predictions=["x"], references=["y"])["precision"]) == 1


def test_signature_names_every_setting(metric, tiny_checkpoint):
    _, predictions, references = examples(seed=9, n=2)
    signature = metric.compute(
        predictions=predictions, references=references, aggregation="max", prompt=["Such as"], prompt_side="decoder"
    )["signature"]
    fields = dict(part.split(":", 1) for part in signature.split("|"))
    assert fields["ckpt"] == tiny_checkpoint
    assert fields["dirs"] == "precision+recall+f_score"
    assert fields["agg"] == "max"
    assert fields["prompt"].startswith("custom-") and fields["prompt"].endswith("(1)@decoder")
    assert fields["maxlen"] == "1024" and fields["dtype"] == "float32"
    assert fields["version"] == bart_score.__version__


def test_model_is_loaded_once(metric, monkeypatch):
    assert metric.scorer is not None  # already loaded by evaluate.load
    monkeypatch.setattr(bart_score.scoring.engine, "load_family", lambda *a: pytest.fail("the model was loaded again"))
    metric.compute(predictions=["a"], sources=["b"])
    metric.compute(predictions=["c"], sources=["d"])


def test_config_name_that_is_a_path_stays_out_of_evaluates_cache_path(metric, tiny_checkpoint):
    assert metric.model_name == tiny_checkpoint
    assert not os.path.isabs(metric.config_name) and "/" not in metric.config_name
    assert not metric.data_dir.startswith(str(tiny_checkpoint))


@pytest.mark.parametrize(
    "name, error, message",
    [
        ("a" * 5000, "InputError", r"a name of 5000 characters \('a{20}'\.\.\.\), longer than"),
        ("/tmp/" + "b" * 256 + "/model", "InputError", r"a name of 256 characters \('b{20}'\.\.\.\), longer than"),
        ("org/" + "é" * 128, "InputError", r"a name of 128 characters .* can be \(255 bytes\)"),
        (5, "InputTypeError", r"must be a string naming the checkpoint, got an int"),
    ],
    ids=["5000", "folder-name-256", "utf8-256-bytes", "int"],
)
def test_a_configuration_name_that_cannot_name_a_checkpoint_is_refused_as_such(name, error, message):
    with pytest.raises(ValueError, match=r"the configuration name \(evaluate.load's second argument\)") as raised:
        evaluate.load(MODULE, name)
    assert type(raised.value).__name__ == error
    assert re.search(message, str(raised.value)) and "metrics" not in str(raised.value)


@pytest.mark.slow
def test_a_long_checkpoint_path_of_ordinary_folder_names_loads_under_a_short_cache_name(tiny_checkpoint, tmp_path):
    deep = tmp_path.joinpath(*["folder-of-forty-characters-each-" + str(i).zfill(8) for i in range(8)])
    deep.mkdir(parents=True)
    (deep / "model").symlink_to(tiny_checkpoint, target_is_directory=True)
    metric = evaluate.load(MODULE, str(deep / "model"), device="cpu")
    assert len(str(deep / "model")) > 330 and len(metric.config_name) <= 64
    assert metric.config_name.endswith("_model-" + hashlib.sha1(str(deep / "model").encode()).hexdigest()[:12])
    assert len(metric.compute(predictions=["A cat."], sources=["A cat sat."])["faithfulness"]) == 1


def test_loading_a_missing_variant_offline_is_one_clear_error(empty_hf_cache):
    # evaluate imports its own copy of the module, so the error is matched by its base class, OSError.
    with pytest.raises(OSError, match=r"Cannot load the checkpoint 'facebook/bart-large'") as raised:
        evaluate.load(MODULE, "vanilla")
    assert type(raised.value).__name__ == "CheckpointNotFoundError"


@pytest.mark.parametrize(
    "kwargs,error,message",
    [
        (dict(predictions=["a", "b"], references=["c"]), ValueError, r"references has 1 entries but predictions has 2"),
        (dict(predictions=["a", "b"], sources=["c"]), ValueError, r"sources has 1 entries but predictions has 2"),
        (dict(predictions=["a", None], sources=["c", "d"]), TypeError, r"predictions\[1\] is None"),
        (dict(predictions=["a"], sources=[7]), TypeError, r"sources\[0\] is an int"),
        (dict(predictions=["a", "b"], references=[["c"], []]), ValueError, r"references\[1\] is an empty list"),
        (dict(predictions=["a"], references=[["c", None]]), TypeError, r"references\[0\]\[1\] is None"),
        (dict(predictions=["a"]), ValueError, r"sources, references or both must be given with predictions"),
        (
            dict(predictions=["a"], references=["b"], directions=["faithfulness"]),
            ValueError,
            r"'faithfulness' .* needs sources, which",
        ),
        (dict(predictions=["a"], sources=["b"], directions="recall"), ValueError, r"'recall' needs references, which"),
        (
            dict(predictions=["a"], sources=["b"], directions=["precison"]),
            ValueError,
            r"directions\[0\] is 'precison'; choose from",
        ),
        (dict(predictions=["a"], sources=["b"], prompt="sumary"), ValueError, r"prompt='sumary' is not a prompt set"),
        (dict(predictions=["a"], sources=["b"], prompt=["ok", 3]), TypeError, r"prompt\[1\] is an int"),
        (dict(predictions=["a"], sources=["b"], prompt=[]), ValueError, r"prompt is an empty list"),
        (dict(predictions=["a"], sources=["b"], prompt="mt", prompt_side="middle"), ValueError, r"prompt_side must be"),
        (dict(predictions=["a"], references=["b"], aggregation="median"), ValueError, r"aggregation must be one of"),
        (dict(predictions="a", sources="b"), TypeError, r"predictions must be a list of strings, got a str"),
    ],
)
def test_bad_input_is_named(metric, kwargs, error, message):
    with pytest.raises(error, match=message):
        metric.compute(**kwargs)
    assert len(metric.compute(predictions=["ok"], sources=["fine"])["faithfulness"]) == 1


# What a metric caller passes, by the keywords it passes it with: the library's words (KEYWORDS) are the metric's.
METRIC_KEYWORDS = {
    *OPTION_NAMES,
    *ENGINE_OPTION_NAMES - {"checkpoint"},  # the configuration name gives the checkpoint
    *("rescale_with_baseline", "baseline_path", "inputs", "options"),
    *("predictions", "references", "sources", "prediction", "reference", "source"),
}


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(predictions=["a", "b"], references=["c"]),
        dict(predictions=["a"], references=["b"], directions=["faithfulness"]),
        dict(predictions=["a"], sources=["b"], directions=["precison"]),
        dict(predictions=["a"], sources=["b"], prompt="sumary"),
        dict(predictions=["a"], sources=["b"], prompt=[]),
        dict(predictions=["a"], sources=["b"], rescale="corpus", long_source="windows"),
        dict(predictions=["a"], sources=["b"], rescale_with_baseline=True, rescale="corpus"),
    ],
)
def test_the_metric_says_what_it_names_by_the_keywords_its_caller_passes(metric, kwargs):
    with pytest.raises(ValueError) as raised:
        metric.compute(**kwargs)
    error = raised.value
    named = {part.option for part in (*error.parts, *error.remedy) if type(part).__name__ == "Mention"}
    assert error.option in METRIC_KEYWORDS and named <= METRIC_KEYWORDS, (error.option, named)
    assert str(error) == error.said()  # raised as it is, in the library's words


def test_no_input_at_all(metric):
    with pytest.raises(ValueError, match=r"nothing to score"):
        metric.compute()


def test_empty_predictions(metric):
    result = metric.compute(predictions=[], sources=[])
    assert result["faithfulness"] == [] and np.isnan(result["faithfulness_mean"])


# ---------------------------------------------------------------------------------------------------------------------
# The pending-batch rule: a failed compute leaves the pending batches as they were


def fail_while_scoring(error):
    def score(*args, **kwargs):
        raise error

    return score


FAILED_COMPUTES = {
    "unknown direction": (dict(directions="bogus"), ValueError, r"directions\[0\] is 'bogus'"),
    "direction without its input": (dict(directions=["recall"]), ValueError, r"'recall' needs references, which"),
    "unknown aggregation": (dict(aggregation="median"), ValueError, r"aggregation must be one of"),
    "unknown prompt set": (dict(prompt="sumary"), ValueError, r"prompt='sumary' is not a prompt set"),
    "unknown prompt side": (dict(prompt_side="middle"), ValueError, r"prompt_side must be"),
    "zero batch size": (dict(batch_size=0), ValueError, r"batch_size must be a positive integer"),
    "negative token budget": (dict(max_tokens=-1), ValueError, r"max_tokens must be a positive integer"),
    "progress not a bool": (dict(show_progress="yes"), TypeError, r"show_progress must be True or False"),
    "unknown option": (dict(beam=4), TypeError, r"compute got unexpected options \['beam'\]"),
    "bad new predictions": (dict(predictions=["x", None], sources=["a", "b"]), TypeError, r"predictions\[1\] is None"),
    "new inputs of another kind": (dict(predictions=["x"], references=["r"]), ValueError, r"this batch gives"),
    "new predictions as a set": (dict(predictions={"x"}, sources=["a"]), TypeError, r"got a set"),
    "lone surrogate in new inputs": (dict(predictions=["x"], sources=["\ud800"]), ValueError, r"sources\[0\] holds"),
    "engine error": (dict(), RuntimeError, r"out of memory", RuntimeError("out of memory")),
    "engine error with new predictions": (
        dict(predictions=["new"], sources=["new source"]),
        RuntimeError,
        r"out of memory",
        RuntimeError("out of memory"),
    ),
    "memory error": (dict(), MemoryError, None, MemoryError()),
    "interrupt": (dict(), KeyboardInterrupt, None, KeyboardInterrupt()),
}


@pytest.mark.parametrize("kind", list(FAILED_COMPUTES))
def test_a_failed_compute_leaves_pending_batches_as_they_were(metric, reference_model, monkeypatch, kind):
    arguments, error, message, *raised_while_scoring = FAILED_COMPUTES[kind]
    sources, predictions, _ = examples(seed=10, n=5)
    metric.add_batch(predictions=predictions[:3], sources=sources[:3])
    metric.add(prediction=predictions[3], source=sources[3])
    metric.add_batch(predictions=predictions[4:], sources=sources[4:])
    with monkeypatch.context() as patch:
        if raised_while_scoring:
            patch.setattr(metric.scorer, "score", fail_while_scoring(raised_while_scoring[0]))
        with pytest.raises(error, match=message):
            metric.compute(**arguments)
    # The same five examples are pending, nothing more (inputs passed to the failed call are not kept).
    result = metric.compute()
    expected = reference_directions(*reference_model, predictions, sources=sources)
    assert_matches(result, expected, ("faithfulness",))
    with pytest.raises(ValueError, match="nothing to score"):  # a successful compute clears them
        metric.compute()


def test_pending_batches_kept_in_memory_survive_a_failed_compute_too(tiny_checkpoint, reference_model, monkeypatch):
    in_memory = evaluate.load(MODULE, tiny_checkpoint, device="cpu", keep_in_memory=True)
    sources, predictions, _ = examples(seed=12, n=3)
    in_memory.add_batch(predictions=predictions, sources=sources)
    with monkeypatch.context() as patch:
        patch.setattr(in_memory.scorer, "score", fail_while_scoring(RuntimeError("out of memory")))
        with pytest.raises(RuntimeError):
            in_memory.compute()
    assert_matches(
        in_memory.compute(), reference_directions(*reference_model, predictions, sources=sources), ("faithfulness",)
    )


def test_a_failed_compute_with_nothing_pending_leaves_nothing_pending(metric, monkeypatch):
    monkeypatch.setattr(metric.scorer, "score", fail_while_scoring(RuntimeError("out of memory")))
    with pytest.raises(RuntimeError):
        metric.compute(predictions=["a"], sources=["b"])
    monkeypatch.undo()
    with pytest.raises(ValueError, match="nothing to score"):
        metric.compute()


# ---------------------------------------------------------------------------------------------------------------------
# Ordered inputs only, and text that can be encoded


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(predictions={"a", "b"}, sources=["c", "d"]), r"predictions must be a list of strings, got a set"),
        (dict(predictions=["a"], sources=(s for s in ["c"])), r"sources must be a list of strings, got a generator"),
        (dict(predictions=["a"], references={"k": "r"}.values()), r"references must be a list .*got a dict_values"),
        (dict(predictions=["a"], references=[{"r", "s"}]), r"references\[0\] must be a list of strings, got a set"),
        (dict(predictions=["a"], references={"r": 1}), r"references must be a list .*got a dict"),
        (dict(predictions=["a"], sources=["b"], directions={"faithfulness"}), r"directions must be a list .*a set"),
        (dict(predictions=["a"], sources=["b"], prompt={"In short"}), r"prompt must be a list of strings, got a set"),
    ],
)
def test_unordered_collections_are_refused(metric, kwargs, message):
    with pytest.raises(TypeError, match=message):
        metric.compute(**kwargs)
    inputs = {k: v for k, v in kwargs.items() if k in ("predictions", "references", "sources")}
    if inputs != {"predictions": ["a"], "sources": ["b"]}:  # the inputs themselves are refused by add_batch too
        with pytest.raises(TypeError, match=message.split(",")[0]):
            metric.add_batch(**inputs)
    with pytest.raises(ValueError, match="nothing to score"):  # nothing was left pending
        metric.compute()


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda m: m.compute(predictions=["ok", "b\ud800d"], sources=["s", "t"]), r"predictions\[1\] holds '\\ud800'"),
        (lambda m: m.compute(predictions=["a"], references=[["r", "\udc80"]]), r"references\[0\]\[1\] holds"),
        (lambda m: m.compute(predictions=["a"], references=["\udc80"]), r"references\[0\] holds"),
        (lambda m: m.compute(predictions=["a"], sources=["\ud800"]), r"sources\[0\] holds '\\ud800' at character 0"),
        (lambda m: m.compute(predictions=["a"], sources=["b"], prompt="Say \ud800"), r"prompt holds"),
        (lambda m: m.compute(predictions=["a"], sources=["b"], prompt=["ok", "\ud800"]), r"prompt\[1\] holds"),
        (lambda m: m.add_batch(predictions=["\ud800"], sources=["b"]), r"predictions\[0\] holds"),
        (lambda m: m.add(prediction="a", source="\udfff"), r"sources\[0\] holds"),
    ],
)
def test_lone_surrogates_are_named_by_argument_and_index(metric, call, message):
    with pytest.raises(ValueError, match=message + r".*a lone surrogate"):
        call(metric)
    with pytest.raises(ValueError, match="nothing to score"):  # the refused batch was not kept
        metric.compute()


# ---------------------------------------------------------------------------------------------------------------------
# evaluate.combine


PREDICTION_LENGTHS = """
import datasets
import evaluate


class PredictionLengths(evaluate.Measurement):
    def _info(self):
        return evaluate.MeasurementInfo(
            description="", citation="", features=datasets.Features({"predictions": datasets.Value("string")})
        )

    def _compute(self, predictions):
        return {"mean_length": sum(map(len, predictions)) / len(predictions)}
"""


@pytest.fixture(scope="module")
def prediction_lengths(tmp_path_factory):
    path = tmp_path_factory.mktemp("measurement") / "prediction_lengths.py"
    path.write_text(PREDICTION_LENGTHS, encoding="utf-8")
    return evaluate.load(str(path))


@pytest.mark.parametrize("inputs", ["references", "sources", "both"])
def test_combine_passes_the_inputs_the_metric_was_loaded_for(
    tiny_checkpoint, reference_model, prediction_lengths, inputs
):
    sources, predictions, references = examples(seed=11, n=4)
    given = {
        "references": references if inputs in ("references", "both") else None,
        "sources": sources if inputs in ("sources", "both") else None,
    }
    options = {} if inputs == "references" else {"inputs": inputs}  # the default asks for references
    combined = evaluate.combine([evaluate.load(MODULE, tiny_checkpoint, device="cpu", **options), prediction_lengths])
    combined.add_batch(predictions=predictions[:2], **{k: v[:2] for k, v in given.items() if v is not None})
    combined.add_batch(predictions=predictions[2:], **{k: v[2:] for k, v in given.items() if v is not None})
    result = combined.compute()
    expected = reference_directions(*reference_model, predictions, given["references"], given["sources"])
    assert_matches(result, expected, list(expected))
    assert result["mean_length"] == pytest.approx(np.mean([len(p) for p in predictions]))


def test_combine_explains_how_to_pass_sources(tiny_checkpoint, prediction_lengths):
    combined = evaluate.combine([evaluate.load(MODULE, tiny_checkpoint, device="cpu"), prediction_lengths])
    with pytest.raises(ValueError, match=r'needs sources=, references= or both.*load the metric with inputs="sources"'):
        combined.add_batch(predictions=["a"], sources=["b"])


def test_inputs_option_is_checked(tiny_checkpoint):
    with pytest.raises(ValueError, match=r"inputs must be one of \('references', 'sources', 'both'\), got 'source'"):
        evaluate.load(MODULE, tiny_checkpoint, device="cpu", inputs="source")


def test_info_names_homepage_and_license(metric):
    assert metric.info.homepage == "https://github.com/neulab/BARTScore"
    assert metric.info.license.startswith("Apache-2.0")


@pytest.mark.slow
def test_threads_sharing_one_instance_each_get_their_own_scores(metric, reference_model):
    """compute from several threads on one instance: each call scores exactly its own examples (the plain
    reference, per call), and the instance stays usable afterwards. (Examples added with add/add_batch are the
    instance's, whichever thread added them: one instance per thread keeps those apart.)"""
    import threading

    jobs = []
    for seed in range(6):
        sources, predictions, _ = examples(seed=10 + seed, n=3)
        jobs.append((sources, predictions, reference_directions(*reference_model, predictions, sources=sources)))
    results, failures = {}, []
    start = threading.Barrier(len(jobs))

    def work(index, sources, predictions):
        try:
            start.wait()
            for _ in range(2):
                results[index] = metric.compute(predictions=predictions, sources=sources)
        except Exception as error:  # reported below with the thread's index
            failures.append((index, repr(error)))

    threads = [
        threading.Thread(target=work, args=(i, sources, predictions))
        for i, (sources, predictions, _) in enumerate(jobs)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not failures
    for index, (_, _, expected) in enumerate(jobs):
        assert len(results[index]["faithfulness"]) == 3
        assert_matches(results[index], expected, ("faithfulness",))
    sources, predictions, expected = jobs[0]
    assert_matches(metric.compute(predictions=predictions, sources=sources), expected, ("faithfulness",))


# ---------------------------------------------------------------------------------------------------------------------
# Instances of the same checkpoint and settings share one engine


@pytest.mark.slow
def test_instances_of_the_same_checkpoint_and_settings_share_one_engine(metric, tiny_checkpoint, reference_model):
    second = evaluate.load(MODULE, tiny_checkpoint, device="cpu", inputs="both")  # inputs is not the engine's
    shorter = evaluate.load(MODULE, tiny_checkpoint, device="cpu", max_length=24)
    assert second.scorer is metric.scorer and shorter.scorer is not metric.scorer
    sources, predictions, references = examples(seed=20)
    for instance, max_length in ((second, 1024), (shorter, 24)):
        result = instance.compute(predictions=predictions, references=references, sources=sources)
        expected = reference_directions(*reference_model, predictions, references, sources, max_length=max_length)
        assert_matches(result, expected, bart_score.DIRECTIONS)


@pytest.mark.slow
def test_an_engine_is_freed_with_the_last_instance_that_holds_it(tiny_checkpoint):
    import gc
    import weakref

    # What the process held before is left out of the collections below (a fifth of a second each over it).
    gc.freeze()
    try:
        first = evaluate.load(MODULE, tiny_checkpoint, device="cpu", max_length=40)
        second = evaluate.load(MODULE, tiny_checkpoint, device="cpu", max_length=40)
        engine = weakref.ref(first.scorer)
        del first
        gc.collect()
        assert engine() is second.scorer
        del second
        gc.collect()
        assert engine() is None
    finally:
        gc.unfreeze()


@pytest.mark.slow
def test_instances_sharing_an_engine_in_threads_each_get_their_own_scores(tiny_checkpoint, reference_model):
    """Two instances on one engine, computing in two threads at once: each gets its own examples' scores (one
    engine's tokenizer serves one thread at a time)."""
    import threading

    instances = [evaluate.load(MODULE, tiny_checkpoint, device="cpu", max_length=200) for _ in range(2)]
    assert instances[0].scorer is instances[1].scorer
    jobs = [examples(seed=30 + index, n=4) for index in range(2)]
    results, failures = {}, []
    start = threading.Barrier(2)

    def work(index):
        _, predictions, references = jobs[index]
        try:
            start.wait()
            for _ in range(3):
                results[index] = instances[index].compute(predictions=predictions, references=references)
        except Exception as error:  # reported below with the thread's index
            failures.append((index, repr(error)))

    threads = [threading.Thread(target=work, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not failures
    for index, (_, predictions, references) in enumerate(jobs):
        expected = reference_directions(*reference_model, predictions, references, max_length=200)
        assert_matches(results[index], expected, ("precision", "recall", "f_score"))


# ---------------------------------------------------------------------------------------------------------------------
# Array-likes as inputs: a Series, a numpy array, a pyarrow array and a datasets column are taken as their values; a
# table (iterating over one gives its column names), an array of the wrong shape and a missing value are refused
# with what to pass instead.


def array_likes(texts):
    import datasets
    import pandas as pd
    import pyarrow as pa

    return {
        "tuple": tuple(texts),
        "Series": pd.Series(texts, index=[10 * i + 3 for i in range(len(texts))]),  # an index that is not 0..n-1
        "ndarray": np.array(texts),
        "object ndarray": np.array(texts, dtype=object),
        "pyarrow array": pa.array(texts),
        "datasets column": datasets.Dataset.from_dict({"text": texts})["text"],
    }


def tables(texts):
    import datasets
    import pandas as pd
    import pyarrow as pa

    return {
        "DataFrame": pd.DataFrame({"prediction_column": texts}),
        "datasets Dataset": datasets.Dataset.from_dict({"prediction_column": texts}),
        "pyarrow Table": pa.table({"prediction_column": texts}),
    }


@pytest.mark.parametrize(  # the fast subset's: a Series whose index is not 0..n-1
    "kind",
    fast_cases(["tuple", "Series", "ndarray", "object ndarray", "pyarrow array", "datasets column"], ["Series"]),
)
def test_array_likes_are_taken_as_their_values_in_every_input(metric, reference_model, kind):
    sources, predictions, references = examples(seed=7, n=3)
    single = [refs[0] for refs in references]
    expected = reference_directions(*reference_model, predictions, [[r] for r in single], sources)
    result = metric.compute(
        predictions=array_likes(predictions)[kind],
        references=array_likes(single)[kind],
        sources=array_likes(sources)[kind],
    )
    assert_matches(result, expected, bart_score.DIRECTIONS)
    metric.add_batch(predictions=array_likes(predictions)[kind], sources=array_likes(sources)[kind])
    assert_matches(metric.compute(), expected, ("faithfulness",))
    metric.add(prediction=predictions[0], reference=array_likes(references[0])[kind])
    expected_one = reference_directions(*reference_model, predictions[:1], references[:1])
    assert_matches(metric.compute(), expected_one, ("precision", "recall", "f_score"))


@pytest.mark.slow
def test_references_as_a_two_dimensional_array_are_rows_of_references(metric, reference_model):
    _sources, predictions, _ = examples(seed=8, n=3)
    references = [["A cat sat.", "The cat sat."], ["A dog ran.", "Dogs ran."], ["Rain fell.", "It rained."]]
    result = metric.compute(predictions=predictions, references=np.array(references))
    expected = reference_directions(*reference_model, predictions, references)
    assert_matches(result, expected, ("precision", "recall", "f_score"))


@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("kind", ["DataFrame", "datasets Dataset", "pyarrow Table"])
@pytest.mark.parametrize("name", ["predictions", "references", "sources"])
def test_a_table_is_refused_with_the_column_to_pass_never_read_as_its_column_names(metric, kind, rows, name):
    texts = ["The cat sat on the mat.", "A dog ran.", "Birds sing."][:rows]
    given = {"predictions": texts, "sources": texts, name: tables(texts)[kind]}
    message = rf"{name} is an? \w+, a table \(columns 'prediction_column'\); pass the column that holds the texts"
    with pytest.raises(TypeError, match=message + rf".*{name}=table\['prediction_column'\]\.tolist\(\)"):
        metric.compute(**given)
    with pytest.raises(TypeError, match=message):
        metric.add_batch(**given)
    with pytest.raises(TypeError, match=r"source is an? \w+; expected a string"):
        metric.add(prediction=texts[0], source=tables(texts)[kind])
    with pytest.raises(TypeError, match=r"reference is an? \w+, a table"):
        metric.add(prediction=texts[0], reference=tables(texts)[kind])
    with pytest.raises(ValueError, match=r"nothing to score"):  # the refused calls added nothing
        metric.compute()
    assert len(metric.compute(predictions=texts, sources=texts)["faithfulness"]) == rows


@pytest.mark.parametrize(
    "value, message",
    [
        (np.array("A cat."), r"predictions is a 0-dimensional ndarray; pass an array of 1 dimension, or a list"),
        (np.array([["A cat.", "A dog."]]), r"predictions is a 2-dimensional ndarray; pass an array of 1 dimension"),
        (np.array(["A cat.", None], dtype=object), r"predictions\[1\] is None; expected a string"),
        (["A cat.", float("nan")], r"predictions\[1\] is missing \(nan\); every entry must be a string"),
    ],
    ids=["0-d", "2-d", "None", "NaN"],
)
def test_arrays_of_the_wrong_shape_and_missing_values_are_refused(metric, value, message):
    count = 1 if np.ndim(value) != 1 else len(value)
    with pytest.raises(TypeError, match=message):
        metric.compute(predictions=value, sources=["A source."] * count)
