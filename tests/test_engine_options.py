"""EngineOptions: BARTScorer's settings as one checked object, built once by the metric, the command line and the
Space and passed whole; BARTScorer(options), BARTScorer(**settings) and the original's positional call agree."""

import dataclasses

import pytest

import bart_score
from bart_score import EngineOptions, InputError
from bart_score.options import ENGINE_OPTION_NAMES


def test_defaults_are_the_engines():
    options = EngineOptions()
    assert (options.checkpoint, options.device, options.dtype, options.max_length, options.max_tokens) == (
        "facebook/bart-large-cnn",
        None,
        "float32",
        None,
        None,
    )
    assert (options.distributed, options.results_on, options.chat, options.chat_settings) == (True, "all", False, None)
    assert {
        "checkpoint",
        "device",
        "dtype",
        "max_length",
        "max_tokens",
        "distributed",
        "results_on",
        "source_lang",
        "target_lang",
        "template",
        "compatibility",
        "chat",
        "instruction",
        "system",
        "chat_template",
        "served_model",
        "served_tokenizer",
        "concurrency",
        "request_timeout",
        "request_retries",
        "threads",
    } == ENGINE_OPTION_NAMES


def test_the_first_seven_settings_go_by_position_in_the_original_order():
    options = EngineOptions("cpu", 64, "vanilla", "bfloat16", 100, False, "rank0")
    assert options == EngineOptions(
        device="cpu",
        max_length=64,
        checkpoint="vanilla",
        dtype="bfloat16",
        max_tokens=100,
        distributed=False,
        results_on="rank0",
    )
    with pytest.raises(TypeError):
        EngineOptions("cpu", 64, "vanilla", "bfloat16", 100, False, "rank0", "de_DE")  # the rest are keywords


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("dtype", "float64", r"dtype must be one of \('float32', 'bfloat16', 'float16'\), got 'float64'"),
        ("results_on", "rank1", r"results_on must be 'all' or 'rank0', got 'rank1'"),
        ("max_tokens", 0, r"max_tokens must be a positive integer or None, got 0"),
        ("max_length", 1, r"max_length must be an integer of at least 2, got 1"),
        ("max_length", 2.5, r"max_length must be an integer of at least 2, got 2.5"),
        ("distributed", "yes", r"distributed must be True or False"),
        ("device", "gpu0", r"device 'gpu0' is not a device"),
        ("device", -1, r"device -1 is not a device"),
        ("compatibility", "t5score", r"compatibility must be None or one of \('gptscore',\), got 't5score'"),
        ("template", "no placeholder", r"template must hold the field \{condition\} once"),
        ("chat", "yes", r"chat must be True or False"),
        ("instruction", "Summarize: {condition}", r"instruction is for chat scoring, which is not asked for"),
        ("system", "You judge.", r"system is for chat scoring, which is not asked for"),
    ],
)
def test_a_bad_value_of_each_setting_is_refused_naming_it(setting, value, message):
    with pytest.raises(InputError, match=message) as raised:
        EngineOptions(**{setting: value})
    if setting not in ("template", "chat", "instruction", "system"):  # the chat and template checks name theirs in text
        assert raised.value.option == setting


def test_chat_settings_are_checked_and_kept():
    options = EngineOptions(chat=True, instruction="Say: {condition}", system="Be brief.")
    assert options.chat_settings is not None and options.chat_settings.system == "Be brief."
    assert set(options.chat_settings.instructions.values()) == {"Say: {condition}"}
    with pytest.raises(InputError, match="template does not go with chat scoring"):
        EngineOptions(chat=True, template="{condition}\n")
    with pytest.raises(InputError, match="system is for chat scoring") as refused:
        EngineOptions(system="You judge.")
    assert refused.value.option == "system"


def test_the_object_is_frozen_and_replace_checks_again():
    options = EngineOptions(device="cpu")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.dtype = "float16"
    assert options.replace(dtype="float16").dtype == "float16"
    with pytest.raises(InputError, match="dtype must be one of"):
        options.replace(dtype="int8")


def test_a_device_is_kept_by_its_name():
    assert EngineOptions(device=1).device == "cuda:1"


@pytest.mark.slow
def test_the_scorer_takes_the_options_or_keywords_or_the_original_positional_call(tiny_checkpoint):
    options = EngineOptions(device="cpu", max_length=64, checkpoint=tiny_checkpoint)
    by_options = bart_score.BARTScorer(options)
    by_keywords = bart_score.BARTScorer(device="cpu", max_length=64, checkpoint=tiny_checkpoint)
    by_position = bart_score.BARTScorer("cpu", 64, tiny_checkpoint)
    sources, targets = ["The cat sat on the mat.", "A day out."], ["A cat sat.", "It was a fine day."]
    scores = [scorer.score(sources, targets) for scorer in (by_options, by_keywords, by_position)]
    assert scores[0] == scores[1] == scores[2]
    # the settings as given, with the value the engine chose for the one left out: max_tokens' default on a CPU
    assert by_options.options == by_keywords.options == by_position.options == options.replace(max_tokens=2048)
    assert (by_options.max_length, str(by_options.device), by_options.options.dtype, by_options.options.results_on) == (
        64,
        "cpu",
        "float32",
        "all",
    )


@pytest.mark.slow
def test_the_options_are_the_only_holder_of_the_settings_and_keep_what_the_engine_resolved(tiny_checkpoint):
    scorer = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu")
    resolved = scorer.options
    assert (resolved.device, resolved.max_length, resolved.max_tokens) == ("cpu", 1024, 2048)  # 1024: the default
    settings = {"device", "max_length", "max_tokens", "dtype", "checkpoint", "distributed", "results_on"}
    assert not settings & set(vars(scorer))  # read from the options, never copied
    assert (scorer.max_length, scorer.device.type) == (1024, "cpu")  # the original class's attributes, read there
    assert bart_score.BARTScorer(resolved).options == resolved  # the resolved options build the same engine


def test_the_scorer_protocols_and_the_scorers_read_the_settings_from_the_options_alone():
    """The Scorer protocols name the options whole and no setting of their own (a plan reads scorer.options); of the
    settings, a scorer answers itself only for the original class's attributes, device and max_length."""
    from bart_score.scoring import protocols
    from bart_score.scoring._plan import PlannedScorer

    declared = set()
    for protocol in (protocols.ScorerIdentity, protocols.Scorer, protocols.IdentifiedScorer):
        declared |= {name for name in vars(protocol) if not name.startswith("_")}
    assert declared == {"model_label", "options", "signature_fields", "score", "model_identity", "token_policy"}
    settings = set(EngineOptions.TABLE) | {"chat_settings", "instructions"}
    assert {name for name in dir(PlannedScorer) if name in settings} == {"device", "max_length"}


@pytest.mark.slow
def test_a_named_configuration_is_kept_as_the_checkpoint_it_names(tiny_checkpoint, monkeypatch):
    from bart_score.models import loading

    monkeypatch.setitem(loading.NAMED_CHECKPOINTS, "tiny", tiny_checkpoint)
    scorer = bart_score.BARTScorer(checkpoint="tiny", device="cpu")
    assert scorer.options.checkpoint == tiny_checkpoint


@pytest.mark.slow
def test_with_max_length_changes_the_options_and_shares_the_model(tiny_checkpoint):
    scorer = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu")
    shorter = scorer.with_max_length(16)
    assert shorter.options.max_length == shorter.max_length == 16
    assert shorter.options == scorer.options.replace(max_length=16)
    assert shorter.model is scorer.model and scorer.max_length == 1024  # the original keeps its own
    long, short = "word " * 40, "a word"
    with pytest.warns(bart_score.TokenizationWarning, match="to max_length=16 tokens"):  # the source is cut
        assert shorter.score([long], [short]) != scorer.score([long], [short])
    # one rule for max_length (EngineOptions': a whole number of at least 2), and one bound by the model's positions
    for scorer_call in (lambda n: scorer.with_max_length(n), lambda n: scorer.options.replace(max_length=n)):
        with pytest.raises(InputError, match=r"max_length must be an integer of at least 2, got 1") as raised:
            scorer_call(1)
        assert raised.value.option == "max_length"
    for bounded in (scorer.with_max_length, lambda n: bart_score.BARTScorer(scorer.options.replace(max_length=n))):
        with pytest.raises(InputError, match=r"max_length must be an integer from 2 to 1024 \(the model's positions\)"):
            bounded(1025)


def test_options_and_keywords_at_once_are_refused_before_loading(tiny_checkpoint):
    options = EngineOptions(device="cpu", checkpoint=tiny_checkpoint)
    with pytest.raises(InputError, match=r"as options \(an EngineOptions\) or as keywords, not both"):
        bart_score.BARTScorer(options, max_length=64)
    with pytest.raises(TypeError):
        bart_score.BARTScorer(options, 64)
