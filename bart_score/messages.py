"""Messages as data: what an error or a warning of bart_score says, as a sequence of parts (text, and the options,
tasks and files it names), so that each front end says the same message in its own words.

    Mention      an option or input named in a message (by name, set to a value, or one entry of a list)
    Recipe       a task that mends the problem (such as making a baseline file), with the settings it needs
    FileName     a file or folder named in a message
    Naming       how a front end says each of those; KEYWORDS is the library's own (keywords, calls, paths)
    said         a message's parts in one Naming's words
    shown        a value as a message shows it: its repr, bounded

The library writes no command-line flag, command or field name: the command line says a Mention by its flag and a
Recipe as its own command, the Space by its field and without server paths (bart_score.cli._wording,
space/feedback.py). This module imports nothing of bart_score."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Protocol


class _NotGiven:
    """The value of a Mention or an error that names no value (None is a value an option can be given)."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __reduce__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = _NotGiven()


class FirstMention:
    """The default of an error's option: the first option its message mentions (bart_score.errors)."""

    def __repr__(self) -> str:
        return "FIRST_MENTION"

    def __reduce__(self) -> str:
        return "FIRST_MENTION"


FIRST_MENTION = FirstMention()


@dataclasses.dataclass(frozen=True)
class Mention:
    """An option or input named in a message, which each front end says in its own words: the library by its keyword
    (``max_length``, ``rescale='corpus'``, ``predictions[3]``), the command line by its flag (``--max-length``,
    ``--rescale corpus``), the Space by its field. value: the setting it is given (NOT_GIVEN: the option alone);
    index: one entry of a list input (its position), or of a mapping (its key: ``instruction['recall']``)."""

    option: str
    value: object = NOT_GIVEN
    index: int | str | None = None


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A task that mends the problem, as data, for each front end to write as its own command or call: `task` (such
    as "baseline": make a baseline file) with `settings` (option name -> value, the options that task needs, in the
    library's names) and `environment` (variables it needs set: name -> value). call: the library's functions that
    do the task, as the library's own words name them for a Python caller (None: the task's name)."""

    task: str
    settings: Mapping[str, object] = dataclasses.field(default_factory=dict)
    environment: Mapping[str, str] = dataclasses.field(default_factory=dict)
    call: str | None = None


@dataclasses.dataclass(frozen=True)
class FileName:
    """A file or folder named in a message: the command line and the library show the path, the Space does not show
    where its server keeps files."""

    path: str


# A message is a sequence of parts: text, and the options, tasks and files it names.
Part = str | Mention | Recipe | FileName


class Naming(Protocol):
    """How a front end says what a message names (the library's own words: KEYWORDS)."""

    def mention(self, mention: Mention) -> str: ...

    def recipe(self, recipe: Recipe) -> str: ...

    def file_name(self, name: FileName) -> str: ...


# The most characters of a value a message shows.
SHOWN_CHARS = 200


def shown(value: object) -> str:
    """A value as a message shows it: its repr, cut to SHOWN_CHARS characters (then its length: a text's characters,
    else its repr's); an integer of more digits than Python writes (4,300: repr raises ValueError past them) by its
    count of digits, and a value whose repr fails by its type."""
    if isinstance(value, int) and value.bit_length() > 14_000:  # 4,214 digits or more
        return f"an integer of about {int(value.bit_length() * 0.30103):,} digits"
    try:
        text = repr(value)
    except Exception:  # an integer of too many digits within it, or a repr of its own that fails
        return f"a {type(value).__name__} that cannot be shown"
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}... ({len(value) if isinstance(value, str) else len(text):,} characters)"


class KeywordNaming:
    """The library's words: options by their keywords, tasks as the calls that do them, files by their paths."""

    def mention(self, mention: Mention) -> str:
        name = mention.option if mention.index is None else f"{mention.option}[{mention.index!r}]"
        return name if mention.value is NOT_GIVEN else f"{name}={shown(mention.value)}"

    def recipe(self, recipe: Recipe) -> str:
        """The functions that do the task (its name when it names none), with its settings as keywords and the
        environment variables it needs: "bart_score.build_baseline and bart_score.write_baseline with
        checkpoint='cnn', max_length=512, path='/x.json'"."""
        words = recipe.call or recipe.task
        settings = ", ".join(f"{name}={value!r}" for name, value in recipe.settings.items())
        if settings:
            words += f" with {settings}"
        environment = ", ".join(f"{name}={value}" for name, value in recipe.environment.items())
        if environment:
            words += f"{' and' if settings else ' with'} {environment} set in the environment"
        return words

    def file_name(self, name: FileName) -> str:
        return repr(name.path)


KEYWORDS = KeywordNaming()


def said(parts: Sequence[Part], naming: Naming) -> str:
    """A message's parts in one front end's words."""
    words = []
    for part in parts:
        if isinstance(part, str):
            words.append(part)
        elif isinstance(part, Mention):
            words.append(naming.mention(part))
        elif isinstance(part, Recipe):
            words.append(naming.recipe(part))
        else:
            words.append(naming.file_name(part))
    return "".join(words)


def parts_of(message: Sequence[Part] | Part | None) -> tuple[Part, ...]:
    """A message (one part, several, or none) as a tuple of parts."""
    if message is None:
        return ()
    if isinstance(message, (str, Mention, Recipe, FileName)):
        return (message,)
    return tuple(message)


class SaidInParts:
    """What errors and warnings of the family share: a message made of parts (its problem, then its remedy), which
    str() says in the library's words and said() in a front end's, and the data a front end needs as fields."""

    parts: tuple[Part, ...]
    remedy: tuple[Part, ...]

    def said(self, naming: Naming = KEYWORDS) -> str:
        """The message in `naming`'s words: the problem, then "; " and the remedy when there is one."""
        problem = said(self.parts, naming)
        return f"{problem}; {said(self.remedy, naming)}" if self.remedy else problem

    def problem(self, naming: Naming = KEYWORDS) -> str:
        """The message without its remedy, for a front end that gives its own."""
        return said(self.parts, naming)


def rebuilt(cls: type[SaidInParts], fields: dict) -> SaidInParts:
    """An error or warning of the family as pickle rebuilds it (across torch.distributed ranks and worker
    processes), with every field it had."""
    copy = cls.__new__(cls)
    copy.__dict__.update(fields)
    copy.args = (copy.said(),)  # type: ignore[attr-defined]
    return copy
