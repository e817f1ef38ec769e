"""The subcommands' argparse arguments: the inputs, a table's columns, and the options' flags, made from the table of
options (bart_score.options: each option's Flag says its names and section): the model and scoring options, the
long-source options and rescaling, each subcommand choosing which it offers; each flag's --help, its option's one text
in the command line's words (flag_help); and the argparse type of each kind of flag (Flag.kind, from its option's
type: integer, decimal, choice, path, switch, list). Nothing here imports torch, so that --help answers at once."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from ..inputs import MAX_INTEGER_DIGITS, ascii_decimal, ascii_integer
from ..messages import KEYWORDS, NOT_GIVEN, FileName, Mention, Recipe, said
from ..models.served.kinds import written_kinds
from ..options import OPTION_CLASSES, EngineOptions, Flag, OptionSpec
from ..options._table import NEXT_FLAG
from ..scoring.score_cache import DEFAULT_CHUNK_PAIRS

# Where --help lists the options' flags (Flag.section): the sections of the "model and scoring" group in order, then
# the long-source group's, the rescaling group's and the Ray cluster's (bartscore cluster).
MODEL_SECTIONS = ("checkpoint", "prompting", "scoring", "device", "sizes", "progress")
LONG_SOURCE_SECTION = "long source"
RESCALE_SECTION = "rescale"
CLUSTER_SECTION = "cluster"
SECTIONS = (*MODEL_SECTIONS, LONG_SOURCE_SECTION, RESCALE_SECTION, CLUSTER_SECTION)
# The option whose flag chooses the long-source mode, which a subcommand may leave out (add_long_source_arguments).
LONG_SOURCE_MODE = "long_source"
# The flags of the inputs that the library's messages name (sources, references and the systems' hypotheses).
INPUT_FLAGS = {
    "sources": ("-s", "--sources"),
    "references": ("-r", "--references"),
    "hypotheses": ("-t", "--hypotheses"),
}


def integer(text: str) -> int:
    """The type of every integer flag: ASCII digits only, as int() alone would also take "٣" (as 3), "1_000" and
    white space around the digits."""
    number = ascii_integer(text)
    if number is None:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of at most {MAX_INTEGER_DIGITS} ASCII digits (0-9), got {text!r}"
        )
    return number


def decimal(text: str) -> float:
    """The type of every decimal flag: ASCII digits only (with a decimal point or an exponent), as float() alone
    would also take "٠.٥" (as 0.5), "1_0", "nan" and white space around the number."""
    number = ascii_decimal(text)
    if number is None:
        raise argparse.ArgumentTypeError(f"expected a number in ASCII digits (0-9), such as 0.05, got {text!r}")
    return number


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    inputs = parser.add_argument_group("inputs (plain-text files with one segment per line, or one --input table)")
    inputs.add_argument(*INPUT_FLAGS["sources"], metavar="FILE", help="source texts")
    inputs.add_argument(
        *INPUT_FLAGS["references"],
        metavar="FILE",
        nargs="+",
        default=[],
        help="reference files (several give several references per segment)",
    )
    inputs.add_argument(
        *INPUT_FLAGS["hypotheses"],
        metavar="FILE",
        nargs="+",
        default=[],
        help="one file per system; the file name names the system",
    )
    inputs.add_argument("-i", "--input", metavar="FILE", help="a .jsonl or .csv file with one row per segment")
    add_column_arguments(inputs, "--input")


def add_column_arguments(group: argparse._ArgumentGroup, table_option: str) -> None:
    group.add_argument("--source-column", help=f"source column of {table_option} (default: source, if there is one)")
    group.add_argument(
        "--reference-columns",
        nargs="+",
        metavar="COLUMN",
        help=f"reference columns of {table_option} (default: reference, references, reference_<n>)",
    )
    group.add_argument(
        "--system-columns",
        nargs="+",
        metavar="COLUMN",
        help=f"system columns of {table_option} (default: every other column)",
    )


def add_cache_arguments(parser: argparse.ArgumentParser, unless_given: str) -> None:
    """The score cache's flags, which score, compare and meta-eval share: --cache FILE and --save-every PAIRS (checked
    by bart_score.cli._requests' check_cache_path and checked_save_every); `unless_given`: what the subcommand does
    without --cache."""
    cache = parser.add_argument_group(
        "score cache (an interrupted or failed run resumes: the same command again scores only the pairs missing)"
    )
    cache.add_argument("--cache", metavar="FILE", help=f"a file that keeps the scores across runs ({unless_given})")
    cache.add_argument(
        "--save-every",
        type=integer,
        metavar="PAIRS",
        help=f"append finished scores to the cache every this many pairs (default {DEFAULT_CHUNK_PAIRS}; for a "
        f"served model, --concurrency: the requests in flight)",
    )


def add_rescale_arguments(parser: argparse.ArgumentParser, effect: str) -> None:
    """The rescaling flags (--rescale, --baseline, --rescale-pairs, ...); `effect` says what rescaled scores change in
    this subcommand's output."""
    rescaling = parser.add_argument_group(
        "rescaled scores (0 = an unrelated text, 1 = a copy; raw scores stay beside them)",
        f"A linear map per direction, so it never changes a ranking: {effect}",
    )
    add_flags(rescaling, RESCALE_SECTION)


def add_model_arguments(
    parser: argparse.ArgumentParser,
    *,
    directions_default_text: str | None = None,
    aggregation_default_text: str | None = None,
    several_models: str | None = None,
) -> None:
    """The model and scoring options (MODEL_SECTIONS). What a subcommand says otherwise: directions_default_text and
    aggregation_default_text, what --help says the default is (None: the table's); several_models, what giving -m
    more than once does (None: -m is given once, a later one replacing an earlier one, as argparse does; else
    args.model is the list given, or None)."""
    checkpoint = EngineOptions.TABLE["checkpoint"]
    changes: dict[str, dict[str, Any]] = {
        "directions": {"default_text": directions_default_text},
        "aggregation": {"default_text": aggregation_default_text},
    }
    if several_models:
        said_once = flag_help(checkpoint, checkpoint.flags[0])
        changes["checkpoint"] = {"action": "append", "default": None, "help": f"{said_once}; {several_models}"}
    model = parser.add_argument_group("model and scoring")
    for section in MODEL_SECTIONS:
        add_flags(model, section, changes)


def add_long_source_arguments(parser: argparse.ArgumentParser, *, mode: bool = True) -> None:
    """The long-source options; `mode`: whether --long-source itself is offered (meta-eval computes the windows row
    of the long-document benchmarks on its own)."""
    group = parser.add_argument_group(
        "long sources (faithfulness sentence by sentence, each given the best of a few windows of the source)"
    )
    add_flags(group, LONG_SOURCE_SECTION, leave_out=() if mode else (LONG_SOURCE_MODE,))


def section_specs(section: str) -> list[tuple[str, OptionSpec]]:
    """(name, entry) of each option whose flags --help lists in `section`, in the table's order; a flag that sets
    options of two classes (--max-tokens) comes once, with the first."""
    listed: dict[str, tuple[str, OptionSpec]] = {}
    for options_class in OPTION_CLASSES:
        for name, spec in options_class.TABLE.items():
            if spec.flags and spec.flags[0].section == section:
                listed.setdefault(spec.flags[0].dest, (name, spec))
    return list(listed.values())


def section_options(section: str) -> list[tuple[str, tuple[Flag, ...]]]:
    """(name, flags) of each option whose flags --help lists in `section` (section_specs)."""
    return [(name, spec.flags) for name, spec in section_specs(section)]


def add_flags(
    group: argparse._ArgumentGroup,
    section: str,
    changes: Mapping[str, Mapping[str, Any]] | None = None,
    leave_out: tuple[str, ...] = (),
) -> None:
    """The flags of a section's options, but those left out; `changes`: per option, argparse keywords that a
    subcommand says otherwise, and default_text (what "{default}" in its text says; None: the table's). The flags of
    one option (-p and --prompt-phrases) are mutually exclusive."""
    for name, spec in section_specs(section):
        if name in leave_out:
            continue
        target = group.add_mutually_exclusive_group() if len(spec.flags) > 1 else group
        for flag in spec.flags:
            keywords = dict((changes or {}).get(name, {}))
            said_default = keywords.pop("default_text", None)
            keywords = {"help": flag_help(spec, flag, said_default), **_argparse_keywords(flag), **keywords}
            target.add_argument(*flag.names, **keywords)


# The argparse keywords of each kind of flag (Flag.kind, from its option's type); a choice's are its choices.
KIND_KEYWORDS: dict[str, dict[str, Any]] = {
    "switch": {"action": "store_true"},
    "integer": {"type": integer},
    "decimal": {"type": decimal},
    "choice": {},
    "path": {},
    "list": {},
    "text": {},
}


def _argparse_keywords(flag: Flag) -> dict[str, Any]:
    keywords: dict[str, Any] = dict(KIND_KEYWORDS[flag.kind])
    for key in ("nargs", "const", "default", "choices", "metavar"):
        if getattr(flag, key) is not None:
            keywords[key] = getattr(flag, key)
    return keywords


def _option_flags() -> dict[str, tuple[Flag, ...]]:
    """The flags of each option the library's messages name, by its name there (CorpusPoints' as
    corpus_points.<name>), from the table; a flag that sets options of two classes (--max-tokens) is each's."""
    flags: dict[str, tuple[Flag, ...]] = {}
    for options_class in OPTION_CLASSES:
        for name, spec in options_class.TABLE.items():
            if spec.flags:
                flags.setdefault(options_class.PREFIX + name, spec.flags)
    return flags


OPTION_FLAGS = _option_flags()


class HelpNaming:
    """The words of --help for what an option's text names (bart_score.messages.Naming): another option by its first
    flag (-m, --max-length), with a value as a user types it (--rescale corpus); a task as the subcommand that does it
    (`bartscore baseline`); a file by its path."""

    def mention(self, mention: Mention) -> str:
        flags = OPTION_FLAGS.get(mention.option)
        if flags is None:
            return KEYWORDS.mention(mention)
        if mention.value is NOT_GIVEN:
            return flags[0].names[0]
        return f"{flags[0].names[-1]} {mention.value}"

    def recipe(self, recipe: Recipe) -> str:
        return f"`bartscore {recipe.task}`"

    def file_name(self, name: FileName) -> str:
        return name.path


HELP_NAMING = HelpNaming()


def flag_help(spec: OptionSpec, flag: Flag, default_text: str | None = None) -> str:
    """A flag's --help: its option's one text in the command line's words (HELP_NAMING), each rule of the command
    line's frame made from the flag's fields. "{default}" says `default_text`, else the flag's (Flag.default_text),
    else the option's default or what it does unset; "{metavar}", the metavar; "{served_kinds}", the kinds of server
    as a checkpoint names them (their registry, above the options). An option of several flags gives each its clause
    of the text (NEXT_FLAG between them). The value that the flag given alone (const) or not given (default) means is
    noted where the text first names it; a list taken in one value is "comma-separated"; the option and value the flag
    is for (when) comes first. A flag that does more than set its option says its own help (-q)."""
    if flag.help is not None:
        return flag.help
    words = {"metavar": flag.metavar or "", "served_kinds": written_kinds()}
    default = default_text or flag.default_text or (spec.unset if spec.default is None else str(spec.default))
    text = spec.said(HELP_NAMING, words if default is None else {**words, "default": default})
    if len(spec.flags) > 1:
        text = text.split(NEXT_FLAG)[spec.flags.index(flag)]
    if flag.const is not None:
        text = _noted(text, flag.const, "the default when no value is given")
    if flag.default is not None:
        text = _noted(text, flag.default, "default")
    if flag.kind == "list" and flag.nargs is None:
        text = f"comma-separated: {text}"
    if flag.when is not None:
        text = f"{said([flag.when], HELP_NAMING)}: {text}"
    return text


def _noted(text: str, value: str, note: str) -> str:
    """`text` with `note` in parentheses after the first word that is `value`, and its closing quote if quoted (the
    text unchanged where no word is: tests/test_option_table.py checks that each such flag's --help has its note)."""
    start = text.find(value)
    while start >= 0 and not (_outside_word(text, start - 1) and _outside_word(text, start + len(value))):
        start = text.find(value, start + 1)
    if start < 0:
        return text
    end = start + len(value)
    end += text[end : end + 1] in ("'", '"')
    return f"{text[:end]} ({note}){text[end:]}"


def _outside_word(text: str, index: int) -> bool:
    """Whether the character at `index` (none, beyond either end) is no part of a word or a name such as cnn-para."""
    return not 0 <= index < len(text) or not (text[index].isalnum() or text[index] in "-_")
