"""The table's machinery: ``option(...)`` declares a field of an options class as an option (OptionSpec) with its one
text, ``Flag`` says how the command line offers it, ``options_table`` builds a class's TABLE and docstring and reads
each flag's kind from its field's type, and ``CheckedOptions`` checks every option in declaration order."""

from __future__ import annotations

import dataclasses
import inspect
import textwrap
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union

from ..inputs import ascii_decimal, ascii_integer
from ..messages import KEYWORDS, Mention, Naming, Part, parts_of, said

# The Space's operator settings that may give options (app.py's docstring): a model entry's ";option=value" parts,
# and the long-source settings of the Batch tab.
MODEL_ENTRY_SETTING = "BARTSCORE_APP_MODELS"
LONG_SOURCE_SETTING = "BARTSCORE_APP_LONG_SOURCE"

# The mark of a field whose text is a file's path (Annotated[str, FILE]): its flag's kind is "path".
FILE = "file"

# What the library's words say for the placeholders of an option's text that the command line fills from its flag
# and from the kinds of server (whose registry stands above the options): "{metavar}", the value, and
# "{served_kinds}", the kinds a checkpoint names a server by.
LIBRARY_WORDS = {"metavar": "this many", "served_kinds": "its kind"}
# Where the text of an option with several flags (-p and --prompt-phrases) passes from one flag's clause to the next.
NEXT_FLAG = "; or "

Value = TypeVar("Value")
Options = TypeVar("Options", bound="CheckedOptions")
# An option's text as option(...) takes it: a string, or a message's parts (text and the options it names).
Text = str | tuple[Part, ...]


class Flag:
    """How the command line offers an option: bart_score.cli._arguments makes it an argparse argument, whose --help
    says the option's one text (OptionSpec.text) in the command line's words, and the command line's messages say
    the option by its names.

    names: "-d", "--directions"; the long one names the parsed value (args.directions).
    section: where --help lists it (bart_score.cli._arguments.SECTIONS); within a section, flags come in the table's
        order (ScoringOptions, CorpusPoints, EngineOptions, each in declaration order).
    metavar, nargs, const: as argparse takes them (a path's metavar is FILE unless given); "{metavar}" in the text
        says the metavar, and --help notes a const (what the flag given alone means) where the text first names it.
    when: the option and value the flag is for (Mention("rescale", "corpus")), which --help says before the text.
    default: the parsed value when the flag is not given, where the command line names the option's default otherwise
        (-m cnn, a configuration's name for the field's Hub id), which --help marks "(default)" where the text first
        names it; else None, and the option left out takes its own default.
    default_text: what "{default}" in the text says on the command line where its default differs from the option's
        (--threads, which the command line sets from the cores and the load); else None, and it says the option's.
    read: the option's value for a parsed one (None: the value itself), such as -d's comma-separated list.
    help: the --help text of a flag that does more than set its option, which the option's text cannot say (-q also
        silences the model's loading bars); None, the option's text, for every other flag.
    kind and choices: set by options_table from the field's type: bool a "switch", int an "integer", float a
        "decimal", a Literal a "choice" of its values, Annotated[str, FILE] a "path", a tuple a "list" (--help says
        that a flag taking one value takes it comma-separated); any other type a "text"."""

    def __init__(
        self,
        *names: str,
        section: str,
        metavar: str | None = None,
        nargs: str | None = None,
        const: str | None = None,
        when: Mention | None = None,
        default: Any = None,
        default_text: str | None = None,
        read: Callable[[Any], Any] | None = None,
        help: str | None = None,
    ) -> None:
        self.names = names
        self.section = section
        self.metavar = metavar
        self.nargs = nargs
        self.const = const
        self.when = when
        self.default = default
        self.default_text = default_text
        self.read = read
        self.help = help
        self.kind = "text"
        self.choices: tuple[str, ...] | None = None

    @property
    def dest(self) -> str:
        """The parsed value's name in argparse's namespace, as argparse derives it from the long name."""
        long = next(name for name in self.names if name.startswith("--"))
        return long[2:].replace("-", "_")

    @property
    def said(self) -> str:
        """The flag as the command line's messages name it: "-d/--directions"."""
        return "/".join(self.names)

    def number(self, text: str) -> Any:
        """A number flag's value read from its text as the command line reads it (ASCII digits), or the text as given
        for the option's check to refuse; the text itself for a flag of another kind (the Space's settings)."""
        number = {"integer": ascii_integer, "decimal": ascii_decimal}.get(self.kind, lambda _: None)(text)
        return text if number is None else number

    def _take_kind(self, field_type: Any) -> None:
        """The kind and choices of the flag of a field of type `field_type`."""
        members = [member for member in _union_members(field_type) if member is not type(None)]
        literals = [value for member in members if typing.get_origin(member) is Literal for value in member.__args__]
        if members == [bool]:
            self.kind = "switch"
        elif members == [int]:
            self.kind = "integer"
        elif members == [float]:
            self.kind = "decimal"
        elif literals:
            self.kind, self.choices = "choice", tuple(literals)
        elif any(typing.get_origin(member) is Annotated and FILE in member.__metadata__ for member in members):
            self.kind, self.metavar = "path", self.metavar or "FILE"
        elif [typing.get_origin(member) for member in members] == [tuple]:
            self.kind = "list"


def _union_members(field_type: Any) -> tuple[Any, ...]:
    if typing.get_origin(field_type) in (Union, types.UnionType):
        return typing.get_args(field_type)
    return (field_type,)


@dataclass(frozen=True)
class OptionSpec:
    """One option of the table (its field gives the name and type).

    text: the option's one text, which the library's documentation (the class's docstring, the metric's keywords)
    and the command line's --help both say, each in its own words: a message's parts (bart_score.messages), whose
    Mentions of other options (max_length, --max-length) and Recipes of tasks (bart_score.build_baseline, `bartscore
    baseline`) each front end names its own way; "{default}" says the default, "{metavar}" the value (N on the
    command line, "this many" in the library's words). default: the field's. unset: what the option left out does
    where its default is None (the engine's or the inputs' choice), for "{default}" to say. check: (value, name) ->
    the value, normalised, or an InputError naming the option; a value of None is not checked where None is the
    default (the option left out). flags: how the command line offers it (none: the command line does not). field:
    the element id of the Space's page field that sets it. setting: the Space's operator setting that may give it
    (MODEL_ENTRY_SETTING, LONG_SOURCE_SETTING). parts: an options class whose own fields (and flags) build this
    option's value."""

    text: tuple[Part, ...]
    default: Any = None
    unset: str | None = None
    check: Callable[[Any, str], Any] | None = None
    flags: tuple[Flag, ...] = ()
    field: str | None = None
    setting: str | None = None
    parts: type[CheckedOptions] | None = None

    @property
    def says_default(self) -> bool:
        """Whether the text says where the default goes ("{default}"); else the library's list adds it after."""
        return any(isinstance(part, str) and "{default}" in part for part in self.text)

    def said(self, naming: Naming, words: Mapping[str, str]) -> str:
        """The text in a front end's words: its parts as `naming` says them, and each placeholder as `words` does."""
        text = said(self.text, naming)
        for placeholder, word in words.items():
            text = text.replace("{" + placeholder + "}", word)
        return text

    @property
    def doc(self) -> str:
        """The text in the library's words: options by their keywords, the default as a value."""
        default = self.unset if self.default is None else _shown_default(self.default)
        return self.said(KEYWORDS, {**LIBRARY_WORDS, **({} if default is None else {"default": default})})


def _shown_default(default: Any) -> str:
    return f'"{default}"' if isinstance(default, str) else str(default)


def option(
    default: Value,
    *,
    text: Text,
    unset: str | None = None,
    check: Callable[[Any, str], Any] | None = None,
    flag: Flag | tuple[Flag, ...] | None = None,
    field: str | None = None,
    setting: str | None = None,
    parts: type[CheckedOptions] | None = None,
) -> Value:
    """A field of an options class that is an option: dataclasses.field, with the option's entry in the table (typed
    as its default, as dataclasses.field is, so that type checkers see the field's own type)."""
    flags = () if flag is None else (flag,) if isinstance(flag, Flag) else flag
    spec = OptionSpec(parts_of(text), default, unset, check, flags, field, setting, parts)
    return dataclasses.field(default=default, metadata={"option": spec})


class CheckedOptions:
    """What the options classes share: each option's check, in declaration order, then the checks of options that go
    together (_check_together, which also sets the derived fields); replace. TABLE: the class's options by name, in
    declaration order, and TYPES their fields' types (options_table sets both); PREFIX: how errors name them
    ("corpus_points." for CorpusPoints')."""

    TABLE: ClassVar[dict[str, OptionSpec]] = {}
    TYPES: ClassVar[dict[str, Any]] = {}
    PREFIX: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for name, spec in self.TABLE.items():
            value = getattr(self, name)
            if spec.check is not None and not (value is None and self.default_of(name) is None):
                self._put(name, spec.check(value, self.PREFIX + name))
        self._check_together()

    def _check_together(self) -> None:
        """The checks of options that go together, after every option's own check."""

    def _put(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    @classmethod
    def default_of(cls, name: str) -> Any:
        return cls.__dataclass_fields__[name].default  # type: ignore[attr-defined]  # a dataclass

    def replace(self: Options, **changes: Any) -> Options:
        """A copy with some options changed, checked again."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]  # a dataclass


def options_table(options_class: type[Options]) -> type[Options]:
    """The decorator of each options class, under @dataclass: its TABLE from its fields, each flag's kind from its
    field's type, and its docstring's list of the options with their texts in the library's words."""
    fields = dataclasses.fields(options_class)  # type: ignore[arg-type]  # a dataclass
    options_class.TABLE = {f.name: f.metadata["option"] for f in fields if "option" in f.metadata}
    types_of = typing.get_type_hints(options_class, include_extras=True)
    options_class.TYPES = {name: types_of[name] for name in options_class.TABLE}
    for name, spec in options_class.TABLE.items():
        for flag in spec.flags:
            flag._take_kind(types_of[name])
    lines = [f"{name}: {spec.doc}" for name, spec in options_class.TABLE.items()]
    listed = "\n".join(_filled(line, 116, "", "    ") for line in lines)
    options_class.__doc__ = (
        f"{inspect.cleandoc(options_class.__doc__ or '')}\n\nThe options:\n\n{textwrap.indent(listed, '    ')}"
    )
    return options_class


def described_options(options_class: type[CheckedOptions], indent: str = "    ", width: int = 116) -> str:
    """The options of `options_class` as a docstring's list of keyword arguments (the metric's _KWARGS_DESCRIPTION,
    bartscore.py): each option's name, the type it takes, its text in the library's words and its default (where the
    text does not say it); an option made of parts lists them within its entry."""
    entries = []
    for name, spec in options_class.TABLE.items():
        text = _described(options_class, name)
        if spec.parts is not None:
            text += ": " + ", ".join(_described(spec.parts, part) for part in spec.parts.TABLE)
        entries.append(_filled(text, width, indent, indent + "    "))
    return "\n".join(entries) + "\n"


def _filled(text: str, width: int, first: str, later: str) -> str:
    """A list entry filled to `width`, broken only between words (never within a name such as a Hub id)."""
    return textwrap.fill(
        text, width, initial_indent=first, subsequent_indent=later, break_on_hyphens=False, break_long_words=False
    )


def _described(options_class: type[CheckedOptions], name: str) -> str:
    spec = options_class.TABLE[name]
    default = "" if spec.default is None or spec.says_default else f" (default {_shown_default(spec.default)})"
    said = " or ".join(_type_words(member) for member in _union_members(options_class.TYPES[name]))
    takes = f" ({said})" if said else ""
    return f"{name}{takes}: {spec.doc}{default}"


def _type_words(field_type: Any) -> str:
    """A field's type as a docstring says it: "int", '"mean" or "max"', "list of str"; "" for any value."""
    origin = typing.get_origin(field_type)
    if field_type is type(None):
        return "None"
    if origin is Literal:
        return " or ".join(f'"{value}"' for value in typing.get_args(field_type))
    if origin is Annotated:
        return _type_words(typing.get_args(field_type)[0])
    if origin is tuple:
        return f"list of {_type_words(typing.get_args(field_type)[0])}"
    if origin is not None:  # Mapping[str, str] and the like
        return "dict"
    return "" if field_type is Any else getattr(field_type, "__name__", str(field_type))


def choices_of(literal: Any) -> tuple[str, ...]:
    """The values of a Literal type, as a tuple (the vocabularies: AGGREGATIONS from Aggregation, ...)."""
    return typing.get_args(literal)
