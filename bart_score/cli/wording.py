"""The command line's words for what the library's messages name as data (bart_score.messages): a baseline recipe
as the ``bartscore baseline`` command that makes it (baseline_command_from), and the naming said_with_flag
(bart_score.cli.requests) says an error with: its own option by its flag, everything else as the library says it."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from ..messages import KEYWORDS, NOT_GIVEN, FileName, Mention, Recipe
from ..prompts import PROMPT_SETS
from ..variants import DEFAULT_MAX_LENGTH

# What the command says for chat instructions that differ between directions, which no flag can give.
PER_DIRECTION_INSTRUCTIONS = "<one for every direction: the command line has no per-direction instructions>"


def baseline_command_from(recipe: Recipe) -> str:
    """The `bartscore baseline` command line that does a baseline recipe (bart_score.baselines.lookup.baseline_recipe):
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


class FlagOfTheOption:
    """How the command line says an error's message: the error's own option by its flag (`flag`, "--rescale"; with a
    value, "--rescale corpus"; a list, by `list_flag` when the option has one, "--prompt-phrases a b"), a baseline
    recipe as the command that makes it, and everything else in the library's words."""

    def __init__(self, option: str | None, flag: str | None, list_flag: str | None = None) -> None:
        self.option, self.flag, self.list_flag = option, flag, list_flag

    def says_its_flag(self, mention: Mention) -> bool:
        return mention.option == self.option and self.flag is not None and mention.index is None

    def mention(self, mention: Mention) -> str:
        if not self.says_its_flag(mention):
            return KEYWORDS.mention(mention)
        value = mention.value
        if value is NOT_GIVEN:
            return str(self.flag)
        if isinstance(value, (list, tuple)):
            return " ".join([self.list_flag or str(self.flag), *map(str, value)])
        return f"{self.flag} {value}"

    def recipe(self, recipe: Recipe) -> str:
        return baseline_command_from(recipe) if recipe.task == "baseline" else KEYWORDS.recipe(recipe)

    def file_name(self, name: FileName) -> str:
        return KEYWORDS.file_name(name)
