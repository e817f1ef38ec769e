"""One text per option (bart_score.options): each option's text, written once in its option(...) entry, is what the
library's documentation says in its keywords (OptionSpec.doc: the classes' docstrings, the metric's keywords) and what
the command line's --help says in its flags (bart_score.cli._arguments.flag_help), framed by rules made from the
flag's fields; and each option states its default once.

Run as a script from the checkout (`PYTHONPATH=. python tests/test_option_texts.py`), it prints the counts these
tests bound: the flags that say a help of their own instead of their option's text, and the options that state their
default more than once."""

from __future__ import annotations

import re

from support.cli import parser_actions

from bart_score.cli import _arguments, build_parser
from bart_score.options import OPTION_CLASSES, CorpusPoints, EngineOptions, Flag, OptionSpec, ScoringOptions
from bart_score.options._table import LIBRARY_WORDS, NEXT_FLAG

# The flags that say a help of their own: -q also silences the model's loading bars, which no option says (the
# library's show_progress is a progress bar), so no rule can make its help from show_progress' text.
OWN_HELPS = ["-q/--quiet"]
# A clause of a text that states a default, up to the end of its clause: "(default: {default})", "default 1024, ...".
DEFAULT_CLAUSE = re.compile(r"\bdefault\b[:\s]*([^);]*)")
PLACEHOLDER = re.compile(r"\{(default|metavar|served_kinds)\}")


def every_option():
    for options_class in OPTION_CLASSES:
        for name, spec in options_class.TABLE.items():
            yield options_class, name, spec


def raw_text(spec: OptionSpec) -> str:
    """The text as written, its Mentions and Recipes left out."""
    return "".join(part for part in spec.text if isinstance(part, str))


def default_statements(options_class, name: str, spec: OptionSpec) -> list[str]:
    """Where the table states the option's own default: its field (a value), its unset (what None does), a clause of
    its text that says it in words or digits rather than by "{default}", and a flag that says the field's default
    again (Flag.default and default_text are for a command line whose default differs)."""
    default = options_class.default_of(name)
    found = [] if default is None else ["field"]
    found += [] if spec.unset is None else ["unset"]
    found += [f"text: {clause!r}" for clause in DEFAULT_CLAUSE.findall(raw_text(spec)) if clause != "{default}"]
    for flag in spec.flags:
        if default is not None and (flag.default == default or flag.default_text == str(default)):
            found.append(f"{flag.said}'s default")
    return found


def stated_twice() -> list[str]:
    return [
        f"{options_class.__name__}.{name}: {', '.join(found)}"
        for options_class, name, spec in every_option()
        if len(found := default_statements(options_class, name, spec)) > 1
    ]


def own_helps() -> list[str]:
    return [flag.said for _, _, spec in every_option() for flag in spec.flags if flag.help is not None]


def test_no_option_states_its_default_twice():
    assert stated_twice() == []


def test_a_text_says_its_default_only_where_it_has_one_to_say():
    for options_class, name, spec in every_option():
        default = options_class.default_of(name)
        assert spec.default == default, name  # the spec's default is the field's, not a copy written again
        if spec.says_default:
            assert default is not None or spec.unset is not None, name
        assert spec.unset is None or default is None, name  # unset says what None does
        assert len(DEFAULT_CLAUSE.findall(raw_text(spec))) <= 1, name


def test_only_a_flag_that_does_more_than_its_option_has_a_help_of_its_own():
    assert own_helps() == OWN_HELPS


def without_frames(help_text: str, flag: Flag) -> str:
    """A flag's --help without what the command line's rules add to its option's text."""
    if flag.when is not None:
        help_text = help_text.split(": ", 1)[1]
    help_text = help_text.removeprefix("comma-separated: ")
    for note in ("the default when no value is given", "default"):
        help_text = help_text.replace(f" ({note})", "", 1 if flag.const or flag.default else 0)
    return help_text


def test_every_flags_help_is_its_options_text_in_the_command_lines_words():
    """--help is the text with its parts named by flags, its placeholders filled, and only the frames that the flag's
    fields make: its clause where the option has several flags, the notes of const and default, "comma-separated",
    and the option and value it is for."""
    for _, name, spec in every_option():
        for flag in spec.flags:
            if flag.help is not None:
                continue
            default = flag.default_text or (spec.unset if spec.default is None else str(spec.default))
            words = {"metavar": flag.metavar or "", "served_kinds": _arguments.written_kinds(), "default": default}
            text = spec.said(_arguments.HELP_NAMING, {key: word for key, word in words.items() if word is not None})
            clause = text.split(NEXT_FLAG)[spec.flags.index(flag)] if len(spec.flags) > 1 else text
            help_text = _arguments.flag_help(spec, flag)
            assert without_frames(help_text, flag) == clause, (name, flag.said)
            assert not PLACEHOLDER.search(help_text), (name, flag.said)
            if flag.const is not None:
                assert f"{flag.const}' (the default when no value is given)" in help_text, name
            if flag.default is not None:
                assert f"{flag.default} (default)" in help_text, name


def test_the_command_line_says_each_flags_help_as_flag_help_makes_it():
    """score takes every option's flag as the table says it (meta-eval and cluster say some defaults otherwise)."""
    score = build_parser()._subparsers._group_actions[0].choices["score"]
    offered = {string: action for action in parser_actions(score) for string in action.option_strings}
    for _, name, spec in every_option():
        for flag in spec.flags:
            if flag.section != _arguments.CLUSTER_SECTION:
                assert offered[flag.names[-1]].help == _arguments.flag_help(spec, flag), (name, flag.said)


def test_the_librarys_words_name_options_by_keyword_and_no_flag():
    flags = {name for _, _, spec in every_option() for flag in spec.flags for name in flag.names}
    for _, name, spec in every_option():
        said = spec.doc
        assert not PLACEHOLDER.search(said), name
        assert not any(re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", said) for flag in flags), (name, said)
    assert ScoringOptions.TABLE["long_source"].doc.endswith("truncated to max_length")
    assert ScoringOptions.TABLE["rescale"].doc.startswith(
        "add rescaled scores: 'baseline' uses the baseline file made by bart_score.build_baseline for this model"
    )
    this_many = LIBRARY_WORDS["metavar"]
    assert CorpusPoints.TABLE["pairs"].doc == f"at most {this_many} extra pairs for the reference points (default 1000)"
    assert EngineOptions.TABLE["threads"].doc.startswith("torch's CPU threads (default: left as the process has them")


def test_the_command_line_says_the_same_texts_by_its_flags():
    help_of = {
        name: _arguments.flag_help(spec, spec.flags[0])
        for name, spec in {**ScoringOptions.TABLE, **EngineOptions.TABLE}.items()
        if spec.flags
    }
    assert help_of["long_source"].endswith("truncated to --max-length")
    assert "made by `bartscore baseline` for this model" in help_of["rescale"]
    assert help_of["served_model"].startswith(f"with -m naming a server ({_arguments.written_kinds()} and its URL)")
    assert help_of["threads"].startswith("torch's CPU threads (default: OMP_NUM_THREADS if set")
    assert help_of["checkpoint"].startswith("vanilla, cnn (default), cnn-para,")
    assert help_of["directions"] == (
        "comma-separated: faithfulness,precision,recall,f_score (default: all the inputs allow)"
    )
    pairs = CorpusPoints.TABLE["pairs"]
    assert _arguments.flag_help(pairs, pairs.flags[0]).startswith("--rescale corpus: at most N extra pairs")
    prompt = ScoringOptions.TABLE["prompt"]
    assert [_arguments.flag_help(prompt, flag) for flag in prompt.flags] == [
        "a prompt set (summary, paraphrase, mt) or one prompt phrase",
        "your own prompt phrases (the score is their average), even one-word ones",
    ]


def test_a_note_goes_after_the_first_whole_word_and_its_closing_quote():
    assert _arguments._noted("cnn-para, cnn, xcnn", "cnn", "default") == "cnn-para, cnn (default), xcnn"
    assert _arguments._noted("take 'baseline' or baseline", "baseline", "n") == "take 'baseline' (n) or baseline"
    assert _arguments._noted("cnn", "cnn", "default") == "cnn (default)"
    assert _arguments._noted("cnn_x or cnn2", "cnn", "default") == "cnn_x or cnn2"  # no whole word: unchanged


if __name__ == "__main__":
    print(f"flags with a help of their own: {len(own_helps())} {own_helps()}")
    print(f"options that state their default more than once: {len(stated_twice())} {stated_twice()}")
