"""The table of options (bart_score.options): every option declared once, with a doc line, a check, its flag and its
Space field, and every front end taking what it offers from it: the command line's flags and the flag names its
messages use, the options it builds, the metric's options and the Space's settings and field marks."""

import argparse
import dataclasses
import re

import pytest
from support.cli import parser_actions
from support.extras import lacking, reason

from bart_score.cli import _arguments, build_parser
from bart_score.cli._requests import engine_options, given_options, options_from_args
from bart_score.cli._wording import FLAGS
from bart_score.messages import Mention
from bart_score.options import (
    LONG_SOURCE_SETTING,
    MODEL_ENTRY_SETTING,
    OPTION_CLASSES,
    ClusterOptions,
    CorpusPoints,
    EngineOptions,
    Flag,
    OptionSpec,
    ScoringOptions,
    described_options,
)


def every_option():
    for options_class in OPTION_CLASSES:
        for name, spec in options_class.TABLE.items():
            yield options_class, name, spec


def test_the_classes_fields_are_exactly_the_tables_options():
    for options_class in OPTION_CLASSES:
        fields = [field.name for field in dataclasses.fields(options_class) if field.init]
        assert fields == list(options_class.TABLE), options_class.__name__
        assert all(isinstance(spec, OptionSpec) for spec in options_class.TABLE.values())
    derived = {field.name for cls in OPTION_CLASSES for field in dataclasses.fields(cls) if not field.init}
    assert derived == {"prompts", "prompt_label", "windows", "chat_settings"}  # computed, never given


def test_every_option_has_a_text_that_its_class_lists_in_the_librarys_words():
    for options_class, name, spec in every_option():
        assert spec.doc.strip() and "\n" not in spec.doc, name
        assert not re.search(r"\{(default|metavar|served_kinds)\}", spec.doc), name  # every placeholder said
        listed = " ".join(options_class.__doc__.split())
        assert f" {name}: {' '.join(spec.doc.split())}" in listed, name


def test_every_flag_named_in_the_table_is_offered_by_the_command_line_in_a_known_section():
    offered = {string: action for action in parser_actions(build_parser()) for string in action.option_strings}
    for _, name, spec in every_option():
        for flag in spec.flags:
            assert flag.section in _arguments.SECTIONS, (name, flag.section)
            for string in flag.names:
                assert string in offered and offered[string].dest == flag.dest, (name, string)


def test_the_command_line_names_each_option_by_its_first_flag():
    for options_class, name, spec in every_option():
        if spec.flags:
            assert FLAGS[options_class.PREFIX + name] == "/".join(spec.flags[0].names)
    assert FLAGS["corpus_points.pairs"] == "--rescale-pairs" and FLAGS["prompt"] == "-p/--prompt"


def test_a_flags_own_default_is_a_value_its_option_takes():
    for options_class, name, spec in every_option():
        for flag in spec.flags:
            if flag.default is not None:  # -m cnn, --aggregation mean, --prompt-side encoder, --dtype float32
                value = flag.default if flag.read is None else flag.read(flag.default)
                assert getattr(options_class(**{name: value}), name) == value, name


def test_the_command_line_builds_every_option_it_offers_from_the_table():
    args = build_parser().parse_args(
        [
            "score",
            "-s",
            "s.txt",
            *("-t", "t.txt", "-d", "recall,precision", "--aggregation", "max", "--prompt-phrases", "In short"),
            *("--prompt-side", "decoder", "--long-source", "windows", "--windows-k", "2", "--window", "1"),
            *("--retriever", "bm25", "--max-sentences", "50", "--batch-size", "4", "--max-tokens", "512", "-q"),
            *("-m", "vanilla", "--device", "cpu", "--dtype", "bfloat16", "--max-length", "64"),
            *("--source-lang", "de_DE", "--target-lang", "en_XX", "--chat", "--instruction", "Say: {condition}"),
            *("--system", "Be brief."),
        ]
    )
    before = dict(vars(args))
    assert options_from_args(args) == ScoringOptions(
        directions=["precision", "recall"],
        aggregation="max",
        prompt=["In short"],
        prompt_side="decoder",
        long_source="windows",
        windows_k=2,
        window=1,
        retriever="bm25",
        max_sentences=50,
        batch_size=4,
        max_tokens=512,
        show_progress=False,
    )
    assert engine_options(args) == EngineOptions(
        device="cpu",
        max_length=64,
        checkpoint="vanilla",
        dtype="bfloat16",
        max_tokens=512,
        results_on="rank0",
        source_lang="de_DE",
        target_lang="en_XX",
        chat=True,
        instruction="Say: {condition}",
        system="Be brief.",
    )
    assert vars(args) == before  # the parsed arguments are read, never written
    rescaled = build_parser().parse_args(
        ["compare", "-s", "s", "-t", "a", "b", "--rescale", "corpus", "--rescale-seed", "3"]
    )
    assert given_options(rescaled, ScoringOptions)["corpus_points"] == {"seed": 3}
    assert options_from_args(rescaled).corpus_points == CorpusPoints(seed=3)


@pytest.mark.xdist_group("evaluate")
def test_the_metric_takes_its_engine_and_scoring_options_from_the_table():
    from bart_score.integrations import evaluate_metric  # imports evaluate: here, not while pytest collects

    assert set(EngineOptions.TABLE) - {"checkpoint"} == evaluate_metric._ENGINE_SETTINGS  # the configuration names it
    extras = {"rescale_with_baseline", "baseline_path"}  # bert_score's names, the metric's own
    assert set(evaluate_metric._COMPUTE_OPTIONS) == set(ScoringOptions.TABLE) | extras


@pytest.mark.xdist_group("gradio")
def test_the_spaces_fields_and_settings_are_the_tables():
    if lacking("app"):
        pytest.skip(reason("app"))
    import app
    import space.handlers
    import space.naming
    import space.settings

    page_fields = set(space.handlers.COMPARE_FIELDS) | set(space.handlers.BATCH_FIELDS)
    for options_class, name, spec in every_option():
        if spec.field is not None:
            assert spec.field in page_fields, (name, spec.field)
            assert space.naming.OPTION_FIELDS[options_class.PREFIX + name] == spec.field
            assert space.naming.FIELD_LABELS[spec.field]  # said by its label in messages
        assert spec.setting in (None, MODEL_ENTRY_SETTING, LONG_SOURCE_SETTING), name
    assert {MODEL_ENTRY_SETTING, LONG_SOURCE_SETTING} <= set(re.findall(r"BARTSCORE_APP_\w+", app.__doc__))
    assert list(space.settings.MODEL_OPTIONS) == [
        name for name, spec in EngineOptions.TABLE.items() if spec.setting == MODEL_ENTRY_SETTING
    ]
    assert list(space.settings.LONG_SOURCE_OPTIONS) == ["windows_k", "window", "retriever", "max_sentences"]


def test_an_option_added_to_the_table_is_offered_and_built_without_another_edit(monkeypatch):
    """What adding a setting asks of the front ends: nothing but its entry (here one put into the table by hand)."""
    entry = OptionSpec(
        text=("a made-up setting, beside ", Mention("max_length")),
        flags=(Flag("--made-up", metavar="WORD", section="device"),),
        setting=MODEL_ENTRY_SETTING,
    )
    monkeypatch.setitem(EngineOptions.TABLE, "made_up", entry)
    parser = build_parser()
    args = parser.parse_args(["baseline", "--corpus", "c.txt", "--made-up", "yes"])
    assert given_options(args, EngineOptions)["made_up"] == "yes"  # what EngineOptions would then be given
    score_help = " ".join(parser._subparsers._group_actions[0].choices["score"].format_help().split())
    assert "--made-up WORD a made-up setting, beside --max-length" in score_help
    assert entry.doc == "a made-up setting, beside max_length"


# The kind of every flag, as its option's type says it, written out by hand: a whole number, a decimal number, a
# switch, one of a vocabulary, a file's path; any flag not named here takes a text.
FLAG_KINDS = {
    "integer": {
        "--windows-k",
        "--max-sentences",
        "--batch-size",
        "--max-tokens",
        "--max-chars",
        "--rescale-pairs",
        "--rescale-seed",
        "--max-length",
        "--concurrency",
        "--request-retries",
        "--threads",
        "--actors",
        "--batch-rows",
        "--retries",
    },
    "decimal": {"--request-timeout"},
    "switch": {"--quiet", "--chat"},
    "choice": {"--aggregation", "--prompt-side", "--rescale", "--long-source", "--dtype", "--compatibility"},
    "path": {"--baseline", "--chat-template"},
    "list": {"--directions"},
}


def test_each_flag_takes_what_its_options_type_says():
    offered = {string: action for action in parser_actions(build_parser()) for string in action.option_strings}
    kinds = {name: kind for kind, names in FLAG_KINDS.items() for name in names}
    for options_class, name, spec in every_option():
        for flag in spec.flags:
            action = offered[next(string for string in flag.names if string.startswith("--"))]
            kind = kinds.get(action.option_strings[-1], "text")
            assert flag.kind == kind, (name, flag.names)
            assert (action.type is _arguments.integer) == (kind == "integer"), name
            assert (action.type is _arguments.decimal) == (kind == "decimal"), name
            assert isinstance(action, argparse._StoreTrueAction) == (kind == "switch"), name
            assert (action.metavar == "FILE") >= (kind == "path"), name
            if kind == "choice":  # every choice offered is a value the option takes, and no other value of its check
                for choice in action.choices:
                    assert getattr(options_class(**{name: choice}), name) == choice, (name, choice)
                with pytest.raises(ValueError):
                    options_class(**{name: "not-a-choice"})
            else:
                assert action.choices is None, name


def test_request_timeout_takes_seconds_with_a_fraction_in_ascii_digits(capsys):
    args = build_parser().parse_args(["score", "-s", "s.txt", "-t", "t.txt", "--request-timeout", "2.5"])
    assert engine_options(args).request_timeout == 2.5
    for text in ("٢.٥", "nan", "1_0", " 2"):
        with pytest.raises(SystemExit) as exited:
            build_parser().parse_args(["score", "-s", "s.txt", "-t", "t.txt", "--request-timeout", text])
        assert exited.value.code == 2
        assert "--request-timeout: expected a number in ASCII digits" in capsys.readouterr().err


def test_a_flag_states_its_options_default_without_restating_it():
    """--aggregation, --prompt-side and --dtype say the field's default in --help, and leave the option out when not
    given, so that the option's own default applies."""
    parser = build_parser()
    args = parser.parse_args(["score", "-s", "s.txt", "-t", "t.txt"])
    assert (args.aggregation, args.prompt_side, args.dtype) == (None, None, None)
    assert options_from_args(args).aggregation == ScoringOptions.default_of("aggregation") == "mean"
    assert engine_options(args).dtype == EngineOptions.default_of("dtype") == "float32"
    score_help = parser._subparsers._group_actions[0].choices["score"].format_help()
    assert "(default: mean)" in score_help and "(default: encoder)" in score_help and "(default: float32)" in score_help


def test_the_keyword_description_lists_every_option_with_its_type_and_default():
    for options_class in (ScoringOptions, EngineOptions, ClusterOptions):
        described = described_options(options_class)
        starts = re.findall(r"^    (\w+)", described, flags=re.MULTILINE)
        assert starts == list(options_class.TABLE), options_class.__name__
    described = described_options(ScoringOptions)
    assert re.search(r'^    aggregation \("mean" or "max" or None\): .* \(default: "mean"\)$', described, re.M | re.S)
    assert "    windows_k (int): windows per prediction sentence (default 3)\n" in described
    assert "pairs (int): at most this many extra pairs for the reference points (default 1000)" in " ".join(
        described.split()
    )
