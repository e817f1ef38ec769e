"""The command line's words for what the library's messages name as data: a baseline recipe as the `bartscore
baseline` command that makes it, and an error's option by its flag (bart_score.cli.wording, through said_with_flag)."""

import subprocess

import pytest

import bart_score
from bart_score.cli import build_parser
from bart_score.cli.requests import said_with_flag
from bart_score.cli.wording import PER_DIRECTION_INSTRUCTIONS, baseline_command_from
from bart_score.messages import KEYWORDS, Mention, Recipe


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
        (  # a list value, by the flag that takes a list
            error("unknown prompt set 'x'", option="prompt", remedy=["give ", Mention("prompt", ["x", "y z"])]),
            "unknown prompt set 'x'; give --prompt-phrases x y z",
        ),
        (  # another option than the error's is said as the library says it
            error(Mention("corpus_points"), " is for ", Mention("rescale", "corpus"), option="corpus_points"),
            "corpus_points is for rescale='corpus'",
        ),
        (
            error(Mention("rescale", "corpus"), " is for corpora", option="baseline"),
            "--baseline: rescale='corpus' is for corpora",
        ),
        (error(Mention("max_length"), " is too long"), "max_length is too long"),
        (  # a recipe of the baseline task, as its command
            error("no baseline", remedy=["make one: ", recipe(max_length=1024, path="x.json")]),
            "no baseline; make one: bartscore baseline -m cnn --corpus TEXTS.txt -o x.json",
        ),
    ],
)
def test_the_command_line_says_an_errors_option_by_its_flag(raised, said):
    assert said_with_flag(raised) == said


def test_the_library_says_the_same_error_in_its_own_words():
    raised = error(
        "no baseline",
        option="rescale",
        remedy=["make one: ", recipe(path="x.json"), " or use ", Mention("rescale", "corpus")],
    )
    assert str(raised) == "no baseline; make one: make with checkpoint='cnn', path='x.json' or use rescale='corpus'"
    assert KEYWORDS.mention(Mention("prompt", ["x"])) == "prompt=['x']"
