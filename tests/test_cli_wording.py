"""The command line's words for what the library's messages name as data (bart_score.cli._wording): a baseline recipe
as the `bartscore baseline` command that makes it, an option or input by its flag with its value as a user types it,
a file by its path; an error's option's flag before a message that does not name it; its warnings in the same
words."""

import subprocess
import warnings

import pytest

import bart_score
from bart_score.cli import build_parser, warnings_as_lines
from bart_score.cli._wording import (
    COMMAND_LINE,
    PER_DIRECTION_INSTRUCTIONS,
    baseline_command_from,
    said_on_the_command_line,
)
from bart_score.messages import KEYWORDS, FileName, Mention, Recipe


def recipe(environment=None, **settings):
    return Recipe("baseline", {"checkpoint": "cnn", **settings}, environment or {}, call="make")


@pytest.mark.parametrize(
    "settings, environment, command",
    [
        (
            {"max_length": 1024, "path": "/b/x.json"},
            None,
            "bartscore baseline -m cnn --corpus TEXTS.txt -o /b/x.json",
        ),
        (
            {"prompt": "summary", "prompt_side": "decoder", "max_length": 512, "path": "/b/x.json"},
            None,
            "bartscore baseline -m cnn --corpus TEXTS.txt -p summary --prompt-side decoder --max-length 512 "
            "-o /b/x.json",
        ),
        (  # one phrase that is not a set's name, and phrases: --prompt-phrases, each a shell word
            {"prompt": ("In short", "it's"), "prompt_side": "encoder", "max_length": 1024, "path": "/my files/x.json"},
            None,
            "bartscore baseline -m cnn --corpus TEXTS.txt --prompt-phrases 'In short' 'it'\"'\"'s' --prompt-side "
            "encoder -o '/my files/x.json'",
        ),
        (
            {"checkpoint": "cnn-para", "max_length": 1024, "path": "x.json"},
            {"BARTSCORE_PARA_WEIGHTS": "/path/to/bart.pth"},
            "BARTSCORE_PARA_WEIGHTS=/path/to/bart.pth bartscore baseline -m cnn-para --corpus TEXTS.txt -o x.json",
        ),
        (  # a line break or tab in $'...', on one line
            {"compatibility": "gptscore", "template": "Text:\t{condition}\nSummary:", "max_length": 1024, "path": "x"},
            None,
            "bartscore baseline -m cnn --corpus TEXTS.txt --compatibility gptscore --template "
            "$'Text:\\t{condition}\\nSummary:' -o x",
        ),
        (
            {
                "chat": True,
                "instruction": "Sum up: {condition}",
                "system": "Be brief.",
                "max_length": 1024,
                "path": "x",
            },
            None,
            "bartscore baseline -m cnn --corpus TEXTS.txt --chat --instruction 'Sum up: {condition}' --system "
            "'Be brief.' -o x",
        ),
        (  # instructions of their own per direction, which no flag gives: said so in the command
            {"chat": True, "instruction": {"recall": "R: {condition}"}, "max_length": 1024, "path": "x"},
            None,
            f"bartscore baseline -m cnn --corpus TEXTS.txt --chat --instruction '{PER_DIRECTION_INSTRUCTIONS}' -o x",
        ),
    ],
)
def test_a_baseline_recipe_is_the_command_that_makes_it(settings, environment, command):
    assert baseline_command_from(recipe(environment, **settings)) == command


def test_bash_reads_the_command_back_with_its_line_breaks_tabs_and_quotes():
    template = "It's:\t{condition}\nSummary:"
    command = baseline_command_from(
        recipe(prompt=("In short",), prompt_side="encoder", template=template, max_length=256, path="o.json")
    )
    words = subprocess.run(["bash", "-c", f"printf '%s\\0' {command}"], capture_output=True, check=True, text=True)
    args = build_parser().parse_args(words.stdout.split("\0")[1:-1])
    assert (args.command, args.model, args.prompt_phrases, args.template, args.max_length, args.output) == (
        "baseline",
        "cnn",
        ["In short"],
        template,
        256,
        "o.json",
    )


def error(*parts, option=None, remedy=None):
    return bart_score.InputError(*parts, option=option, remedy=remedy)


@pytest.mark.parametrize(
    "raised, said",
    [
        (error(Mention("max_length"), " must be at least 2", option="max_length"), "--max-length must be at least 2"),
        (
            error(Mention("long_source", "windows"), " cannot be rescaled", option="long_source"),
            "--long-source windows cannot be rescaled",
        ),
        (
            error("no baseline", option="rescale", remedy=["or ", Mention("rescale", "corpus")]),
            "no baseline; or --rescale corpus",
        ),
        (  # an entry of a list has no flag of its own: the flag goes before the message
            error(Mention("directions", index=2), " is 'x'", option="directions"),
            "-d/--directions: directions[2] is 'x'",
        ),
        (  # a list value, by the flag that takes a list, each word as bash reads it back
            error("unknown prompt set 'x'", option="prompt", remedy=["give ", Mention("prompt", ["x", "y z"])]),
            "unknown prompt set 'x'; give --prompt-phrases x 'y z'",
        ),
        (  # -d's list, comma-separated as -d takes it
            error("give ", Mention("directions", ("recall", "precision"))),
            "give --directions recall,precision",
        ),
        (  # every option by its flag, not only the error's own; one without a flag as the library says it
            error(Mention("corpus_points"), " is for ", Mention("rescale", "corpus"), option="corpus_points"),
            "corpus_points is for --rescale corpus",
        ),
        (
            error(Mention("rescale", "corpus"), " is for corpora", option="baseline"),
            "--baseline: --rescale corpus is for corpora",
        ),
        (error(Mention("max_length"), " is too long"), "--max-length is too long"),
        (error(Mention("max_length", 0), " is too short"), "--max-length 0 is too short"),
        (  # a switch given, or left out
            error(Mention("chat", True), " needs a template; or ", Mention("chat", False)),
            "--chat needs a template; or without --chat",
        ),
        (  # the inputs by their flags
            error("needs ", Mention("sources"), " or ", Mention("references"), option="directions"),
            "-d/--directions: needs -s/--sources or -r/--references",
        ),
        (error(Mention("hypotheses"), " names no file", option="hypotheses"), "-t/--hypotheses names no file"),
        (  # a recipe of the baseline task, as its command
            error("no baseline", remedy=["make one: ", recipe(max_length=1024, path="x.json")]),
            "no baseline; make one: bartscore baseline -m cnn --corpus TEXTS.txt -o x.json",
        ),
        (error("cannot read ", FileName("/data/my x.csv")), "cannot read /data/my x.csv"),  # a file by its path
        (  # a message of text alone, as it is, after its option's flag
            error("device 'gpu0' is not a device", option="device"),
            "--device: device 'gpu0' is not a device",
        ),
        (error("the file has no rows"), "the file has no rows"),
    ],
)
def test_the_command_line_says_an_errors_options_by_their_flags(raised, said):
    assert said_on_the_command_line(raised) == said


def test_an_error_from_outside_bart_score_is_said_as_it_says_itself():
    assert said_on_the_command_line(OSError(28, "No space left on device")) == "[Errno 28] No space left on device"


def test_the_library_says_the_same_error_in_its_own_words():
    raised = error(
        "no baseline",
        option="rescale",
        remedy=["make one: ", recipe(path="x.json"), " or use ", Mention("rescale", "corpus")],
    )
    assert str(raised) == "no baseline; make one: make with checkpoint='cnn', path='x.json' or use rescale='corpus'"
    assert KEYWORDS.mention(Mention("prompt", ["x"])) == "prompt=['x']"
    assert COMMAND_LINE.mention(Mention("prompt", ["x"])) == "--prompt-phrases x"


def test_warnings_are_said_in_the_same_words():
    warning = bart_score.RescaleWarning("BARTScore: ", Mention("rescale", "corpus"), " is thin", remedy=Mention("chat"))
    with warnings_as_lines("bartscore score"):
        lines = [
            warnings.formatwarning(message, type(message), "x.py", 1)
            for message in (warning, UserWarning("another library's words"))
        ]
    assert lines == [
        "bartscore score: warning: BARTScore: --rescale corpus is thin; --chat\n",
        "bartscore score: warning: another library's words\n",
    ]
