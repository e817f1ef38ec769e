"""ScoringOptions: one checked object, resolved once from keywords (or the command line's flags) and passed down
whole; the command line names the library's options by their flags."""

import argparse
import dataclasses
import pathlib

import numpy as np
import pytest

import bart_score
from bart_score import CorpusPoints, EngineOptions, ScoringOptions
from bart_score.cli import build_parser
from bart_score.cli._requests import options_from_args
from bart_score.cli._wording import FLAGS, said_on_the_command_line
from bart_score.messages import Mention


def test_defaults_and_derived_fields():
    options = ScoringOptions()
    assert (options.directions, options.aggregation, options.prompt, options.prompt_side) == (
        None,
        "mean",
        None,
        "encoder",
    )
    assert (options.rescale, options.baseline, options.corpus_points) == (None, None, None)
    assert options.prompts == (None,) and options.prompt_label == "none"
    prompted = ScoringOptions(prompt="mt", prompt_side="decoder")
    assert prompted.prompt_label == "mt(1)@decoder" and len(prompted.prompts) == 1
    phrases = ScoringOptions(prompt=["In short", "That is"])
    assert phrases.prompt == ("In short", "That is") and phrases.prompt_label.startswith("custom-")


def test_the_object_is_frozen_and_replace_checks_again():
    options = ScoringOptions(directions="recall")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.aggregation = "max"
    assert options.replace(aggregation="max").aggregation == "max"
    with pytest.raises(bart_score.InputError, match="aggregation must be one of"):
        options.replace(aggregation="median")


def test_directions_are_kept_in_the_papers_order_and_checked_against_the_inputs():
    options = ScoringOptions(directions=["f_score", "faithfulness"])
    assert options.directions == ("faithfulness", "f_score")
    assert options.directions_for(has_references=True, has_sources=True) == ("faithfulness", "f_score")
    with pytest.raises(bart_score.InputError, match=r"'faithfulness' .* needs sources, which was not") as raised:
        options.directions_for(has_references=True, has_sources=False)
    assert raised.value.option == "directions" and Mention("sources") in raised.value.parts
    assert ScoringOptions().directions_for(has_references=False, has_sources=True) == ("faithfulness",)
    with pytest.raises(
        bart_score.InputError, match="sources, references or both must be given with predictions"
    ) as raised:
        ScoringOptions().directions_for(has_references=False, has_sources=False)
    assert [part for part in raised.value.parts if isinstance(part, Mention)] == [
        Mention("sources"),
        Mention("references"),
        Mention("predictions"),
    ]


def test_rescaling_is_one_mode_a_baseline_and_the_corpus_sampling():
    assert ScoringOptions(rescale="corpus").corpus_points == CorpusPoints()
    assert ScoringOptions(rescale="corpus", corpus_points={"pairs": 7}).corpus_points == CorpusPoints(pairs=7)
    by_file = ScoringOptions(baseline=pathlib.Path("b.json"))
    assert (by_file.rescale, by_file.baseline) == ("baseline", "b.json")  # read when the call checks it
    texts = CorpusPoints(unrelated_texts=["x", "y", "x"]).unrelated_texts
    assert texts == ("x", "y")  # each text once


@pytest.mark.parametrize(
    "keywords, error, message",
    [
        (dict(directions=[]), ValueError, "directions is empty"),
        (dict(directions=["recall", "recall"]), ValueError, r"directions\[1\] is 'recall' again"),
        (dict(directions=["fluency"]), ValueError, r"directions\[0\] is 'fluency'; choose from"),
        (dict(prompt_side="middle"), ValueError, "prompt_side must be one of"),
        (dict(prompt="nonsense"), ValueError, "prompt='nonsense' is not a prompt set"),
        (dict(prompt=[]), ValueError, "prompt is an empty list"),
        (dict(batch_size=0), ValueError, "batch_size must be a positive integer"),
        (dict(max_tokens=True), ValueError, "max_tokens must be a positive integer"),
        (dict(show_progress="yes"), TypeError, "show_progress must be True or False"),
        (dict(rescale="bert"), ValueError, "rescale must be None, 'baseline' or 'corpus'"),
    ],
)
def test_every_option_is_checked_where_it_is_made(keywords, error, message):
    with pytest.raises(error, match=message) as raised:
        ScoringOptions(**keywords)
    assert isinstance(raised.value, bart_score.BARTScoreError)  # one family
    assert raised.value.option == next(iter(keywords))


@pytest.mark.parametrize(
    "options_class, name, value, said",
    [
        (ScoringOptions, "aggregation", np.array(["mean", "max"]), "aggregation must be one of ('mean', 'max'), got "),
        (ScoringOptions, "long_source", np.array(["windows"]), "long_source must be None or one of ('windows',)"),
        (ScoringOptions, "window", np.array([1, 2]), "window must be 'longdocfactscore' or a whole number of"),
        (EngineOptions, "dtype", np.array([1, 2]), "dtype must be one of"),
        (
            ScoringOptions,
            "batch_size",
            lambda: -(10**5000),
            "batch_size must be a positive integer or None, got an integer",
        ),
        (ScoringOptions, "window", lambda: -(10**5000), "got an integer of about 5,000 digits"),
        (
            EngineOptions,
            "max_length",
            lambda: -(10**5000),
            "max_length must be an integer of at least 2, got an integer",
        ),
        (EngineOptions, "device", lambda: -(10**5000), "device an integer of about 5,000 digits is not a device"),
        (EngineOptions, "device", lambda: 10**5000, "is not a device: its index is over torch's largest, 127"),
        (
            CorpusPoints,
            "pairs",
            lambda: (None, -(10**5000)),
            "pairs must be a positive integer, got a tuple",
        ),
        (ScoringOptions, "window", "x" * 100_000, "got 'xxxxxxxxxx"),
    ],
)
def test_a_value_of_any_kind_is_refused_in_a_bounded_line_of_the_family(options_class, name, value, said):
    """What the fuzzing of the table found (support/fuzz_form_targets.py): a numpy array answered the choices'
    comparison with an array (its truth a ValueError), and an integer of over 4,300 digits could not be shown (made
    when the test runs: pytest cannot show it in the test's name either)."""
    with pytest.raises(bart_score.InputError) as raised:
        options_class(**{name: value() if callable(value) else value})
    assert said in str(raised.value) and len(str(raised.value)) < 500, str(raised.value)[:600]
    assert raised.value.option == options_class.PREFIX + name or raised.value.option == name


def test_a_word_that_names_no_prompt_set_is_told_how_to_pass_it_as_a_phrase():
    with pytest.raises(bart_score.InputError) as raised:
        ScoringOptions(prompt="nonsense")
    assert (raised.value.option, raised.value.value) == ("prompt", "nonsense")
    assert raised.value.remedy[-1] == Mention("prompt", ["nonsense"])
    assert str(raised.value).endswith("give it as a list of phrases: prompt=['nonsense']")
    assert said_on_the_command_line(raised.value).endswith("give it as a list of phrases: --prompt-phrases nonsense")


def test_a_call_takes_options_or_keywords_never_both():
    options = ScoringOptions(directions="recall")
    assert ScoringOptions.resolve(options) is options
    assert ScoringOptions.resolve(None, directions="recall") == options
    with pytest.raises(TypeError, match=r"as options \(a ScoringOptions\) or as keywords, not both") as raised:
        ScoringOptions.resolve(options, aggregation="max")
    assert raised.value.option == "options"
    with pytest.raises(TypeError, match=r"unexpected options \['rescale_pairs'\]"):
        ScoringOptions.resolve(None, rescale_pairs=10)
    with pytest.raises(TypeError, match="options must be a ScoringOptions, got a dict"):
        ScoringOptions.resolve({"directions": "recall"})


@pytest.mark.parametrize(
    "points, said",
    [
        ({"nope": 1}, "a key that is not among its fields: 'nope'"),
        ({"pairs": 5, 1: 2, "x" * 100: 3}, f"keys that are not among its fields: 1, '{'x' * 39}..."),
        ({(): None}, "a key that is not among its fields: ()"),
    ],
)
def test_corpus_points_of_unknown_keys_are_refused_naming_them(points, said):
    """A mapping's keys went to CorpusPoints(**points) as they were: a raw TypeError for a key it does not take."""
    with pytest.raises(bart_score.InputTypeError) as raised:
        ScoringOptions(rescale="corpus", corpus_points=points)
    assert (raised.value.option, raised.value.value) == ("corpus_points", points)
    assert str(raised.value) == f"corpus_points has {said}; its fields are pairs, seed, unrelated_texts"


@pytest.mark.xdist_group("evaluate")
def test_the_metric_refuses_corpus_points_of_an_unknown_key(tiny_checkpoint):
    import evaluate
    from support.metric import MODULE

    metric = evaluate.load(MODULE, tiny_checkpoint, device="cpu")
    with pytest.raises(bart_score.InputTypeError, match="corpus_points has a key that is not among its fields: 'nope'"):
        metric.compute(predictions=["A cat."], references=["A cat sat."], rescale="corpus", corpus_points={"nope": 1})


def test_the_same_options_object_gives_the_same_scores_as_keywords(scorer):
    predictions, sources = ["A cat sat.", "It rained."], ["The cat sat on the mat.", "Rain fell all day."]
    options = ScoringOptions(directions="faithfulness", batch_size=1)
    by_object = scorer.score_directions(predictions, sources=sources, options=options)
    by_keywords = scorer.score_directions(predictions, sources=sources, directions="faithfulness", batch_size=1)
    assert by_object == by_keywords


def test_the_command_line_builds_the_same_object():
    args = build_parser().parse_args(
        ["score", "-s", "s.txt", "-t", "t.txt", "-d", "recall,precision", "--rescale", "corpus", "--rescale-pairs", "9"]
    )
    options = options_from_args(args)
    assert options == ScoringOptions(
        directions=("precision", "recall"), rescale="corpus", corpus_points=CorpusPoints(pairs=9), show_progress=True
    )


@pytest.mark.parametrize(
    "message, option, said",
    [
        ("batch_size must be a positive integer", "batch_size", "--batch-size: batch_size must be a positive integer"),
        (
            "corpus_points.pairs must be positive",
            "corpus_points.pairs",
            "--rescale-pairs: corpus_points.pairs must be positive",
        ),
        (
            "directions: 'recall' needs references",
            "directions",
            "-d/--directions: directions: 'recall' needs references",
        ),
        (
            "references[2] is an int; expected a string",
            "references",
            "-r/--references: references[2] is an int; expected a string",
        ),
        ("the prompt setting: the file has 'none'", None, "the prompt setting: the file has 'none'"),
        ("no baseline: or rescale='corpus'", "srcs", "no baseline: or rescale='corpus'"),  # an option without a flag
    ],
)
def test_a_message_of_text_alone_is_said_after_its_options_flag(message, option, said):
    """A message that names nothing as data is said as it is, after the flag of the option it is about (its `option`):
    no front end reads a message's text to reword it."""
    assert said_on_the_command_line(bart_score.InputError(message, option=option)) == said
    assert said_on_the_command_line(ValueError(message)) == message  # only bart_score's errors name their option


def test_every_flag_named_in_messages_is_a_real_flag():
    parser = build_parser()
    known = {option for action in _all_actions(parser) for option in action.option_strings}
    known |= {action.metavar for action in _all_actions(parser) if not action.option_strings}  # convert's MODEL.gguf
    for flags in FLAGS.values():
        for flag in flags.split("/"):
            assert flag in known, flag


def _all_actions(parser):
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                yield from _all_actions(subparser)


def test_the_cli_speaks_of_flags_where_the_library_names_keywords():
    error = bart_score.InputError(Mention("long_source", "windows"), " cannot be rescaled", option="long_source")
    assert str(error) == "long_source='windows' cannot be rescaled"
    assert said_on_the_command_line(error) == "--long-source windows cannot be rescaled"
