"""Numbers in options take ASCII digits only, wherever a user writes them: the long-source window as text, every
integer and decimal flag of every subcommand, and the Space's settings from its environment."""

import pytest

import bart_score
from bart_score import InputError

NOT_ASCII_INTEGERS = ["²", "٣", "1_0", " 3", "+3", "３"]


@pytest.mark.parametrize("text", NOT_ASCII_INTEGERS)
def test_window_given_as_text_takes_ascii_digits_only(text):
    from bart_score.options import check_window

    with pytest.raises(InputError, match="window must be 'longdocfactscore' or a whole number"):
        check_window(text)
    assert check_window("3") == 3


@pytest.mark.parametrize("text", NOT_ASCII_INTEGERS)
@pytest.mark.parametrize("flag", ["--window", "--windows-k", "--max-sentences", "--batch-size", "--max-length"])
def test_integer_flags_take_ascii_digits_only(flag, text, tmp_path, capsys):
    (tmp_path / "t.txt").write_text("A cat sat.\n", encoding="utf-8")
    texts = str(tmp_path / "t.txt")
    arguments = ["score", "-m", str(tmp_path / "no-model"), "-s", texts, "-t", texts, "--long-source", "windows"]
    try:
        status = bart_score.main([*arguments, flag, text])
    except SystemExit as exit:  # argparse's own usage error
        status = exit.code
    assert status == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error
    assert flag in error.strip().splitlines()[-1]  # the usage, then one line naming the flag


def flag_types():
    """{(subcommand, flag): its argparse type} of every flag of every subcommand (a positional argument by its name)."""
    import argparse

    from bart_score.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    return {
        (name, (action.option_strings or [action.dest])[0]): action.type
        for name, sub in commands.items()
        for action in sub._actions
    }


def test_no_flag_of_any_subcommand_reads_its_number_with_int_alone():
    """The class: every integer flag, of every subcommand, now and later, goes through the ASCII-digits type."""
    from bart_score.cli._arguments import integer

    flags = flag_types()
    assert not [flag for flag, kind in flags.items() if kind is int]
    assert ("meta-eval", "--max-pairs") in flags and flags["meta-eval", "--max-pairs"] is integer


def test_no_flag_of_any_subcommand_reads_its_number_with_float_alone():
    """The class: every decimal flag, of every subcommand, now and later, goes through the ASCII type."""
    from bart_score.cli._arguments import decimal

    flags = flag_types()
    assert not [flag for flag, kind in flags.items() if kind is float]
    assert flags["compare", "--alpha"] is decimal and flags["meta-eval", "--dev-fraction"] is decimal


@pytest.mark.parametrize("text", NOT_ASCII_INTEGERS)
def test_the_spaces_integer_settings_take_ascii_digits_only(text):
    from space.settings import settings_from_env

    for name in ("BARTSCORE_APP_MAX_CHARS", "BARTSCORE_APP_MAX_ROWS", "BARTSCORE_APP_MAX_PAIRS"):
        with pytest.raises(ValueError, match=f"{name} must be a positive integer"):
            settings_from_env({name: text})
    for key in ("windows_k", "max_sentences", "window"):
        if text.strip() != text:  # the setting's parts are taken stripped of the spaces around them
            continue
        with pytest.raises(ValueError, match=f"BARTSCORE_APP_LONG_SOURCE .*{key} must be"):
            settings_from_env({"BARTSCORE_APP_LONG_SOURCE": f"windows;{key}={text}"})
    settings = settings_from_env({"BARTSCORE_APP_LONG_SOURCE": "windows;windows_k=2;max_sentences=40;window=1"})
    assert settings.long_source == {"long_source": "windows", "windows_k": 2, "max_sentences": 40, "window": "1"}
