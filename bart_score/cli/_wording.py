"""The command line's words for what the library's messages name as data (bart_score.messages): COMMAND_LINE, its
Naming, says an option or input by its flag from the table of options (with a value, as a user types it:
``--rescale corpus``, ``--prompt-phrases word``), a baseline recipe as the ``bartscore baseline`` command that makes
it (baseline_command_from) and a file by its path; said_on_the_command_line says a whole error with it, its option's
flag before a message that does not name it. Failed is a run-time failure with the words the command line says
around its error ("scoring failed", "cannot write FILE"), which the subcommands raise for bart_score.cli.main to say."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from ..errors import BARTScoreError
from ..messages import KEYWORDS, NOT_GIVEN, FileName, Mention, Recipe
from ..options import Flag
from ..scoring.prompts import PROMPT_SETS
from ..variants import DEFAULT_MAX_LENGTH
from ._arguments import INPUT_FLAGS, OPTION_FLAGS

# What the command says for chat instructions that differ between directions, which no flag can give.
PER_DIRECTION_INSTRUCTIONS = "<one for every direction: the command line has no per-direction instructions>"


def baseline_command_from(recipe: Recipe) -> str:
    """The `bartscore baseline` command line that does a baseline recipe (bart_score.baselines._lookup.baseline_recipe):
    its model, prompt setting, token policy and max_length as flags, the path as -o, on one line for bash."""
    settings = recipe.settings
    words = ["bartscore", "baseline", "-m", str(settings["checkpoint"]), "--corpus", "TEXTS.txt"]
    environment = "".join(f"{name}={value} " for name, value in recipe.environment.items())
    prompt = settings.get("prompt")
    if isinstance(prompt, str) and prompt in PROMPT_SETS:
        words += ["-p", prompt, "--prompt-side", str(settings["prompt_side"])]
    elif prompt is not None:
        phrases = [prompt] if isinstance(prompt, str) else list(prompt)  # type: ignore[call-overload]  # a sequence
        words += ["--prompt-phrases", *phrases, "--prompt-side", str(settings["prompt_side"])]
    words += _policy_words(settings)
    if settings["max_length"] != DEFAULT_MAX_LENGTH:
        words += ["--max-length", str(settings["max_length"])]
    words += ["-o", str(settings["path"])]
    return environment + " ".join(map(_shell_word, words))


def _shell_word(word: str) -> str:
    """A word as bash reads it back, on one line: a word with line breaks or tabs in $'...' quotes."""
    if not any(character in word for character in "\n\r\t"):
        return shlex.quote(word)
    escaped = word.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + "'"


def _policy_words(settings: Mapping[str, object]) -> list[str]:
    """The flags that give a recipe's token policy (a causal template, GPTScore's, chat's)."""
    if settings.get("chat"):
        words = ["--chat"]
        instruction = settings.get("instruction")
        if isinstance(instruction, str):
            words += ["--instruction", instruction]
        elif instruction is not None:
            words += ["--instruction", PER_DIRECTION_INSTRUCTIONS]
        system = settings.get("system")
        return words + (["--system", str(system)] if system is not None else [])
    words = ["--compatibility", str(settings["compatibility"])] if "compatibility" in settings else []
    return words + (["--template", str(settings["template"])] if "template" in settings else [])


# The flags of the library's settings that are no option of the table: meta-eval --select's split.
SPLIT_FLAGS = {"dev_fraction": "--dev-fraction", "seed": "--seed"}
# convert's arguments (bart_score.models.conversion's gguf and folder), by their places in its usage line.
CONVERT_ARGUMENTS = {"gguf": "MODEL.gguf", "folder": "DIR"}
# Each option's and input's flags as the command line's messages name them: "-d/--directions", "--rescale-pairs".
FLAGS = {
    **{name: flags[0].said for name, flags in OPTION_FLAGS.items()},
    **{name: "/".join(names) for name, names in INPUT_FLAGS.items()},
    **SPLIT_FLAGS,
    **CONVERT_ARGUMENTS,
}


class CommandLineNaming:
    """The command line's words (bart_score.messages.Naming): an option or input by its flag (FLAGS), with a value as
    a user types it (typed_value); an entry of a list (directions[2]), and what no flag gives, as the library says it;
    a baseline recipe as the command that makes it; a file by its path."""

    def mention(self, mention: Mention) -> str:
        flags = OPTION_FLAGS.get(mention.option)
        if mention.option not in FLAGS or mention.index is not None:
            return KEYWORDS.mention(mention)
        if mention.value is NOT_GIVEN:
            return FLAGS[mention.option]
        typed = typed_value(flags, mention.value) if flags else None
        return KEYWORDS.mention(mention) if typed is None else typed

    def recipe(self, recipe: Recipe) -> str:
        return baseline_command_from(recipe) if recipe.task == "baseline" else KEYWORDS.recipe(recipe)

    def file_name(self, name: FileName) -> str:
        return name.path


COMMAND_LINE = CommandLineNaming()


def typed_value(flags: Sequence[Flag], value: object) -> str | None:
    """An option's value as a user types it, on one line for bash: "--rescale corpus", "--max-length 0", a list by the
    flag that takes one ("--prompt-phrases 'In short' it") or comma-separated (-d's "--directions recall,precision"),
    a switch alone ("--chat") or left out ("without --chat"); None for a value no flag gives."""
    if isinstance(value, (list, tuple)):
        listing = next((flag for flag in flags if flag.nargs is not None), None)
        if listing is not None:
            words = [_long_name(listing), *map(str, value)]
        else:
            words = [_long_name(flags[0]), ",".join(map(str, value))]
    elif flags[0].kind == "switch":
        given = True if flags[0].read is None else flags[0].read(True)
        return _long_name(flags[0]) if value == given else f"without {_long_name(flags[0])}"
    elif value is None or isinstance(value, bool):
        return None
    else:
        words = [_long_name(flags[0]), str(value)]
    return " ".join(map(_shell_word, words))


def _long_name(flag: Flag) -> str:
    return next(name for name in flag.names if name.startswith("--"))


def names_its_option(error: BARTScoreError) -> bool:
    """Whether an error's message names its own option as a whole (not one entry of it), which the command line says
    by its flag."""
    return any(
        isinstance(part, Mention) and part.option == error.option and part.index is None
        for part in error.parts + error.remedy
    )


def said_on_the_command_line(error: BaseException) -> str:
    """An error's message in the command line's words (COMMAND_LINE), with the flag of the option it is about
    (`option`) before it where the message does not name that option by its flag ("-d/--directions: directions[2]
    is 'x'"); an error from outside bart_score as it says itself."""
    if not isinstance(error, BARTScoreError):
        return str(error)
    message = error.said(COMMAND_LINE)
    if error.option not in FLAGS or names_its_option(error):
        return message
    return f"{FLAGS[error.option]}: {message}"


class Failed(Exception):
    """A run-time failure, with the words the command line says around its error (bart_score.cli.main says it once,
    and its exit status is the error's): `context` before the error's words ("scoring failed", "cannot write out.tsv";
    a usage error is said as one, without it), `reason` instead of them (the strerror of a file that cannot be
    written; None: said_on_the_command_line), and `notes`, lines said after it. quiet: nothing is said here (it was
    said already, or rank 0 under torchrun says it)."""

    def __init__(
        self,
        error: BaseException,
        context: str | None = None,
        *,
        reason: str | None = None,
        notes: Sequence[str] = (),
        quiet: bool = False,
    ) -> None:
        super().__init__(error)
        self.error, self.context, self.reason, self.notes, self.quiet = error, context, reason, tuple(notes), quiet
