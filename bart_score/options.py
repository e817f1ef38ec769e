"""What one scoring call asks for, checked once: ``ScoringOptions``; and the engine's settings: ``EngineOptions``.

The options are resolved once, where a request enters (keywords of a library call or of the metric's compute, the
command line's arguments, the Space's form), and the checked object travels down whole: the directions layer, the
corpus and dataset scorers, the meta-evaluation and the Space all take it as it is. Every check of an option lives
here; callers turn ``InputError`` into their own answer (the command line's exit status 2, the Space's message).

Each option is declared once, as a field of its class given by ``option(...)``: its name, type and default, its
check, one line of documentation (the class's docstring lists them), its command-line flag (``Flag``) and the Space's
field or operator setting that sets it. The front ends take everything from this table: the command line's
arguments, the flag names its messages use and the options it builds from them (bart_score.cli), the metric's load
and compute options (bart_score.integrations.evaluate_metric), and the Space's per-model options, long-source settings
and field marks (space/). A class checks each field in declaration order, then the fields that go together.

Checks that need the inputs (which directions the given texts allow) are ``ScoringOptions.directions_for``; checks
that need the model (the baseline's key: model, token policy, prompt setting, max_length) are made by the directions
layer before any scoring (bart_score.baselines.lookup.baseline_for).

``EngineOptions`` is the same for ``BARTScorer``'s settings: the metric, the command line and the Space each build one
and pass it whole. Its checks are those that need no model; the engine checks the rest (the device's presence,
max_length against the model's positions, the settings a model family takes) and keeps the values it resolves
(the device, max_tokens and max_length it chose) in its own copy, ``scorer.options``."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import operator
import os
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .baselines.files import Baseline
from .baselines.rescale import DEFAULT_PAIRS, DEFAULT_SEED
from .corpora.reading import read_bounded
from .errors import InputError, InputTypeError
from .inputs import (
    ascii_decimal,
    check_text,
    describe,
    device_name,
    optional_positive_int,
    positive_option,
    text_list,
    whole_number,
)
from .long_documents.retrievers import check_retriever
from .long_documents.windows import (
    DEFAULT_MAX_SENTENCES,
    DEFAULT_RETRIEVER,
    DEFAULT_WINDOW,
    DEFAULT_WINDOWS_K,
    LONG_SOURCE_MODES,
    LONGDOCFACTSCORE,
    WindowSettings,
    check_window,
)
from .messages import Mention, Part, parts_of, shown
from .models.served.transport import (
    DEFAULT_CONCURRENCY,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RETRIES,
    MAX_CONCURRENCY,
    MAX_REQUEST_TIMEOUT,
)
from .models.templates import ChatSettings, chat_settings, template_sides
from .scoring.prompts import PROMPT_SETS
from .variants import DEFAULT_CHECKPOINT, DEFAULT_CPU_MAX_TOKENS, DEFAULT_MAX_TOKENS, DTYPE_NAMES

if TYPE_CHECKING:
    import torch

DIRECTIONS = ("faithfulness", "precision", "recall", "f_score")
AGGREGATIONS = ("mean", "max")
PROMPT_SIDES = ("encoder", "decoder")
RESCALE_MODES = ("baseline", "corpus")
RESULTS_ON = ("all", "rank0")
# The policies a causal LM can be scored under besides its default one.
COMPATIBILITY = ("gptscore",)
# What long_source="windows" scored per prediction (faithfulness_sentences, faithfulness_windows): counts, not scores.
COUNT_SUFFIXES = ("_sentences", "_windows")
# Per-prediction results besides the directions' scores: rescaled scores, and the counts.
RESULT_SUFFIXES = ("", "_rescaled", *COUNT_SUFFIXES)
# The Space's operator settings that may give options (app.py's docstring): a model entry's ";option=value" parts,
# and the long-source settings of the Batch tab.
MODEL_ENTRY_SETTING = "BARTSCORE_APP_MODELS"
LONG_SOURCE_SETTING = "BARTSCORE_APP_LONG_SOURCE"

# The most characters of a prediction, reference or source, checked before a text is split or tokenized (tokenizing
# costs about 150 MB and 5 s per million characters; a 10 MB prediction took 70 s and 2.4 GB). The longest article of
# the long-document benchmarks (LongDocFACTScore's release: PubMed and arXiv) has 69,353 characters; a million is 14
# times that, and about what max_sentences' 10,000 sentences of prose hold.
DEFAULT_MAX_CHARS = 1_000_000

Value = TypeVar("Value")
Options = TypeVar("Options", bound="CheckedOptions")


class Flag:
    """How the command line offers an option: bart_score.cli.arguments makes it an argparse argument, and the command
    line's messages say the option by its names.

    names: "-d", "--directions"; the long one names the parsed value (args.directions).
    help: the --help text; "{default}" in it is default_text, which a subcommand may say otherwise.
    section: where --help lists it (bart_score.cli.arguments.SECTIONS); within a section, flags come in the table's
        order (ScoringOptions, CorpusPoints, EngineOptions, each in declaration order).
    metavar, choices, nargs, const, default: as argparse takes them; integer: a whole number in ASCII digits;
        switch: given or not (True or False).
    read: the option's value for a parsed one (None: the value itself), such as -d's comma-separated list."""

    def __init__(
        self,
        *names: str,
        help: str,
        section: str,
        metavar: str | None = None,
        choices: Sequence[str] | None = None,
        nargs: str | None = None,
        const: str | None = None,
        default: Any = None,
        default_text: str | None = None,
        integer: bool = False,
        switch: bool = False,
        read: Callable[[Any], Any] | None = None,
    ) -> None:
        self.names = names
        self.help = help
        self.section = section
        self.metavar = metavar
        self.choices = choices
        self.nargs = nargs
        self.const = const
        self.default = default
        self.default_text = default_text
        self.integer = integer
        self.switch = switch
        self.read = read

    @property
    def dest(self) -> str:
        """The parsed value's name in argparse's namespace, as argparse derives it from the long name."""
        long = next(name for name in self.names if name.startswith("--"))
        return long[2:].replace("-", "_")

    @property
    def said(self) -> str:
        """The flag as the command line's messages name it: "-d/--directions"."""
        return "/".join(self.names)


@dataclass(frozen=True)
class OptionSpec:
    """One option of the table (its field gives the name, type and default).

    doc: one line of documentation. check: (value, name) -> the value, normalised, or an InputError naming the option;
    a value of None is not checked where None is the default (the option left out). flags: how the command line
    offers it (none: the command line does not). field: the element id of the Space's page field that sets it.
    setting: the Space's operator setting that may give it (MODEL_ENTRY_SETTING, LONG_SOURCE_SETTING). parts: an
    options class whose own fields (and flags) build this option's value."""

    doc: str
    check: Callable[[Any, str], Any] | None = None
    flags: tuple[Flag, ...] = ()
    field: str | None = None
    setting: str | None = None
    parts: type[CheckedOptions] | None = None


def option(
    default: Value,
    *,
    doc: str,
    check: Callable[[Any, str], Any] | None = None,
    flag: Flag | tuple[Flag, ...] | None = None,
    field: str | None = None,
    setting: str | None = None,
    parts: type[CheckedOptions] | None = None,
) -> Value:
    """A field of an options class that is an option: dataclasses.field, with the option's entry in the table (typed
    as its default, as dataclasses.field is, so that type checkers see the field's own type)."""
    flags = () if flag is None else (flag,) if isinstance(flag, Flag) else flag
    spec = OptionSpec(doc, check, flags, field, setting, parts)
    return dataclasses.field(default=default, metadata={"option": spec})


class CheckedOptions:
    """What the options classes share: each option's check, in declaration order, then the checks of options that go
    together (_check_together, which also sets the derived fields); replace. TABLE: the class's options by name, in
    declaration order (options_table sets it); PREFIX: how errors name them ("corpus_points." for CorpusPoints')."""

    TABLE: ClassVar[dict[str, OptionSpec]] = {}
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
    """The decorator of each options class, under @dataclass: its TABLE from its fields, and its docstring's list of
    the options with their doc lines."""
    fields = dataclasses.fields(options_class)  # type: ignore[arg-type]  # a dataclass
    options_class.TABLE = {f.name: f.metadata["option"] for f in fields if "option" in f.metadata}
    lines = [f"{name}: {spec.doc}" for name, spec in options_class.TABLE.items()]
    listed = "\n".join(textwrap.fill(line, 116, subsequent_indent="    ") for line in lines)
    options_class.__doc__ = (
        f"{inspect.cleandoc(options_class.__doc__ or '')}\n\nThe options:\n\n{textwrap.indent(listed, '    ')}"
    )
    return options_class


# -- the checks of single options ---------------------------------------------------------------------------------


def _one_of(choices: Sequence[Any], says: str | None = None) -> Callable[[Any, str], Any]:
    """The check of an option that takes one of `choices` (`says`: the choices as its message writes them)."""

    def check(value: Any, name: str) -> Any:
        # Compared as text only: `value in choices` asks the value whether it equals each, and a numpy array answers
        # with an array, whose truth is an error.
        for choice in choices:
            if value is choice or (isinstance(value, str) and value == choice):
                return choice
        raise InputError(
            Mention(name),
            f" must be {says or f'one of {tuple(choices)}'}, got {shown(value)}",
            option=name,
            value=value,
        )

    return check


def _true_or_false(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InputTypeError(Mention(name), f" must be True or False, got {describe(value)}", option=name, value=value)
    return value


def _whole_number_from(least: int) -> Callable[[Any, str], int]:
    """The check of an option that takes a whole number of at least `least`."""

    def check(value: Any, name: str) -> int:
        number = whole_number(value)
        if number is None or number < least:
            raise InputError(
                Mention(name), f" must be an integer of at least {least}, got {shown(value)}", option=name, value=value
            )
        return number

    return check


def _device(value: Any, name: str) -> str:
    return device_name(value)


def _name(value: Any, name: str) -> str:
    """The check of an option that names something (a model, a checkpoint): a text that is not blank."""
    if not isinstance(value, str):
        raise InputTypeError(Mention(name), f" must be a text, got {describe(value)}", option=name, value=value)
    if not value.strip():
        raise InputError(Mention(name), " is blank", option=name, value=value)
    return check_text(value, name)


def _request_seconds(value: Any, name: str) -> float:
    """The check of a served model's request_timeout: a positive number of seconds, at most MAX_REQUEST_TIMEOUT."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_REQUEST_TIMEOUT:
        raise InputError(
            Mention(name),
            f" must be a number of seconds above 0 and at most {MAX_REQUEST_TIMEOUT:,g} (a day), got {shown(value)}",
            option=name,
            value=value,
        )
    return float(value)


def _concurrency(value: Any, name: str) -> int:
    """The check of a served model's concurrency: a whole number from 1 to MAX_CONCURRENCY."""
    number = whole_number(value)
    if number is None or not 1 <= number <= MAX_CONCURRENCY:
        raise InputError(
            Mention(name),
            f" must be an integer from 1 to {MAX_CONCURRENCY} (requests in flight at once), got {shown(value)}",
            option=name,
            value=value,
        )
    return number


def _decimal_text(text: str) -> Any:
    """A decimal flag's number (ASCII digits, a point, an exponent), or its text as given, for its check to refuse."""
    number = ascii_decimal(text)
    return text if number is None else number


def _template(value: Any, name: str) -> str:
    template_sides(value, Mention(name))
    return value


# The most bytes a chat template file may hold: real templates hold a few KiB (SmolLM2's 0.7, Llama 3.1's 4.9).
MAX_CHAT_TEMPLATE_BYTES = 1 << 20


def _chat_template_file(value: Any, name: str) -> str:
    """A chat template file that can be read: a regular file of UTF-8 text within MAX_CHAT_TEMPLATE_BYTES."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        raise InputTypeError(
            Mention(name), f" must be the path of a chat template file, got {describe(value)}", option=name, value=value
        )
    try:
        read_bounded(value, limit=MAX_CHAT_TEMPLATE_BYTES).decode("utf-8")
    except InputError as error:
        raise InputError(Mention(name), ": ", *error.parts, option=name, value=value, remedy=error.remedy) from None
    except UnicodeDecodeError as error:
        raise InputError(
            Mention(name), f" {value!r} is not UTF-8 text (byte {error.start})", option=name, value=value
        ) from None
    return value


def _window(value: Any, name: str) -> str | int:
    return check_window(value)


def _retriever(value: Any, name: str) -> Any:
    return check_retriever(value)


def _unrelated_texts(value: Any, name: str) -> tuple[str, ...]:
    texts = tuple(dict.fromkeys(text_list(value, name)))
    if not texts:
        raise InputError(
            Mention(name),
            " is empty",
            option=name,
            value=value,
            remedy="leave it out to pair texts from different rows",
        )
    return texts


def _baseline(value: Any, name: str) -> str | Baseline:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if not isinstance(value, (str, Baseline)):
        raise InputTypeError(
            Mention(name),
            f" must be a file path or a loaded baseline (bart_score.load_baseline), got {describe(value)}",
            option=name,
            value=value,
        )
    return value


def _corpus_points(value: Any, name: str) -> CorpusPoints:
    if isinstance(value, Mapping):
        unknown = [key for key in value if key not in CorpusPoints.TABLE]
        if unknown:
            raise InputTypeError(
                Mention(name),
                f" has {'keys' if len(unknown) > 1 else 'a key'} that {'are' if len(unknown) > 1 else 'is'} not among "
                f"its fields: {', '.join(map(_shown_key, unknown[:5]))}{', ...' if len(unknown) > 5 else ''}",
                option=name,
                value=value,
                remedy=f"its fields are {', '.join(CorpusPoints.TABLE)}",
            )
        return CorpusPoints(**value)
    if not isinstance(value, CorpusPoints):
        raise InputTypeError(
            Mention(name),
            f" must be a CorpusPoints (or a mapping of its fields), got {describe(value)}",
            option=name,
            value=value,
        )
    return value


def _shown_key(key: object) -> str:
    """A mapping's key as a message shows it, cut to 40 characters."""
    shown = repr(key)
    return shown if len(shown) <= 40 else f"{shown[:40]}..."


def _prompt(value: Any, name: str) -> str | tuple[str, ...]:
    """A prompt set's name or one phrase as it is, a sequence of phrases as a tuple; checked by resolve_prompts."""
    prompt = value if isinstance(value, str) else tuple(text_list(value, name))
    resolve_prompts(prompt)
    return prompt


def _checked_directions(directions: str | Sequence[str], name: str = "directions") -> tuple[str, ...]:
    """The directions asked for, in DIRECTIONS order, each once."""
    requested = [directions] if isinstance(directions, str) else text_list(directions, name)
    if not requested:
        raise InputError(
            Mention(name),
            " is empty",
            option=name,
            value=directions,
            remedy="leave it out to compute every direction the inputs allow",
        )
    for index, direction in enumerate(requested):
        if direction not in DIRECTIONS:
            raise InputError(
                Mention(name, index=index),
                f" is {shown(direction)}",
                option=name,
                value=directions,
                remedy=f"choose from {DIRECTIONS}",
            )
        if direction in requested[:index]:
            raise InputError(
                Mention(name, index=index),
                f" is {shown(direction)} again",
                option=name,
                value=directions,
                remedy="give each direction once",
            )
    return tuple(d for d in DIRECTIONS if d in requested)


def resolve_prompts(prompt: str | Sequence[str] | None) -> tuple[tuple[str | None, ...], str]:
    """(phrases, label): a lowercase identifier names a paper set; any other string is one phrase; a sequence is a
    set of phrases."""
    if prompt is None:
        return (None,), "none"
    if isinstance(prompt, str):
        if re.fullmatch(r"[a-z][a-z0-9_-]*", prompt):
            if prompt not in PROMPT_SETS:
                raise InputError(
                    f"unknown prompt set {prompt!r}; the sets are {tuple(PROMPT_SETS)}",
                    option="prompt",
                    value=prompt,
                    remedy=[
                        "to use it as a prompt phrase, give it as a list of phrases: ",
                        Mention("prompt", [prompt]),
                    ],
                )
            return PROMPT_SETS[prompt], f"{prompt}({len(PROMPT_SETS[prompt])})"
        phrases = [check_text(prompt, "prompt")]
    else:
        phrases = text_list(prompt, "prompt")
        if not phrases:
            raise InputError(
                Mention("prompt"),
                " is an empty list",
                option="prompt",
                value=prompt,
                remedy="pass None for no prompt",
            )
    for index, phrase in enumerate(phrases):
        if not phrase.strip():
            raise InputError(Mention("prompt", index=index), " is blank", option="prompt", value=prompt)
    digest = hashlib.sha1("\n".join(phrases).encode("utf-8")).hexdigest()[:8]
    return tuple(phrases), f"custom-{digest}({len(phrases)})"


def _comma_separated(text: str) -> list[str]:
    """-d's directions as a list for ScoringOptions, which checks them (an empty -d is an empty list, which it
    refuses rather than taking it to mean every direction)."""
    return text.split(",") if text else []


def too_long_error(text: Part | Sequence[Part], length: int, limit: int, option: str | None = None) -> InputError:
    """The refusal of a text (`text`: the message's name for it) of `length` characters, over max_chars (`limit`)."""
    return InputError(
        *parts_of(text),
        f" has {length:,} characters, more than ",
        Mention("max_chars", limit),
        option=option,
        remedy=["raise ", Mention("max_chars"), ", or shorten or divide the text"],
    )


# -- the options --------------------------------------------------------------------------------------------------


@options_table
@dataclass(frozen=True)
class CorpusPoints(CheckedOptions):
    """How rescale="corpus" takes its reference points from the texts being scored."""

    PREFIX = "corpus_points."

    pairs: int = option(
        DEFAULT_PAIRS,
        doc="at most this many extra pairs for the reference points",
        check=positive_option,
        flag=Flag(
            "--rescale-pairs",
            integer=True,
            metavar="N",
            help=f"--rescale corpus: at most N extra pairs for the reference points (default {DEFAULT_PAIRS})",
            section="rescale",
        ),
    )
    seed: int = option(
        DEFAULT_SEED,
        doc="the seed the pairs are sampled with",
        check=_whole_number_from(0),
        flag=Flag(
            "--rescale-seed",
            integer=True,
            metavar="S",
            help=f"--rescale corpus: sampling seed (default {DEFAULT_SEED})",
            section="rescale",
        ),
    )
    unrelated_texts: tuple[str, ...] | None = option(
        None,
        doc="fixed unrelated conditions instead of other rows' texts (for inputs that all share one source)",
        check=_unrelated_texts,
    )


@options_table
@dataclass(frozen=True)
class ScoringOptions(CheckedOptions):
    """The checked options of a scoring call.

    prompts and prompt_label are derived: the phrases each pair is scored under ((None,) without a prompt) and the
    signature's prompt field; windows is long_source="windows"'s checked WindowSettings (None without it)."""

    directions: tuple[str, ...] | None = option(
        None,
        doc="any of DIRECTIONS (a name or a sequence), or None for every direction the inputs allow",
        check=_checked_directions,
        flag=Flag(
            "-d",
            "--directions",
            help="comma-separated: faithfulness,precision,recall,f_score (default: {default})",
            default_text="all the inputs allow",
            section="scoring",
            read=_comma_separated,
        ),
        field="directions",
    )
    aggregation: str | None = option(
        "mean",
        doc='"mean" or "max" over several references (f_score is the mean of the aggregated precision and recall), or '
        "None for the caller's own (\"mean\"; meta-evaluation: the release's for each benchmark)",
        check=_one_of((*AGGREGATIONS, None), says=f"one of {AGGREGATIONS}"),
        flag=Flag(
            "--aggregation",
            choices=AGGREGATIONS,
            default="mean",
            help="over several references (default: {default})",
            default_text="mean",
            section="scoring",
        ),
    )
    prompt: str | tuple[str, ...] | None = option(
        None,
        doc='a paper prompt set by name ("summary", "paraphrase", "mt"), one phrase, or a sequence of phrases; a '
        "prompted score is the mean over the phrases. A lowercase single word is read as a set name",
        check=_prompt,
        flag=(
            Flag(
                "-p", "--prompt", help="a prompt set (summary, paraphrase, mt) or one prompt phrase", section="scoring"
            ),
            Flag(
                "--prompt-phrases",
                nargs="+",
                metavar="PHRASE",
                help="your own prompt phrases (the score is their average), even one-word ones",
                section="scoring",
            ),
        ),
        field="prompt-phrase",
    )
    prompt_side: str = option(
        "encoder",
        doc='"encoder" appends " <prompt>," to the condition, "decoder" prepends "<prompt>, " to the target',
        check=_one_of(PROMPT_SIDES),
        flag=Flag(
            "--prompt-side", choices=PROMPT_SIDES, default="encoder", help="(default: encoder)", section="scoring"
        ),
    )
    rescale: str | None = option(
        None,
        doc='None, "baseline" (reference points from a baseline file) or "corpus" (from the texts being scored)',
        check=_one_of(RESCALE_MODES, "None, 'baseline' or 'corpus'"),
        flag=Flag(
            "--rescale",
            nargs="?",
            const="baseline",
            choices=RESCALE_MODES,
            help="add rescaled scores: 'baseline' (the default when no value is given) uses the baseline file made by "
            "`bartscore baseline` for this model and these settings; 'corpus' takes the reference points from the "
            "texts being scored (comparable only within them)",
            section="rescale",
        ),
        field="rescale",
    )
    baseline: str | Baseline | None = option(
        None,
        doc='the baseline file (a path, or a Baseline from bart_score.load_baseline); implies rescale="baseline". It '
        'is read and checked against the model and settings before any scoring. With rescale="baseline" and no '
        "baseline, the file at the default location for the model and settings is used",
        check=_baseline,
        flag=Flag(
            "--baseline", metavar="FILE", help="rescale with this baseline file (implies --rescale)", section="rescale"
        ),
        field="rescale",
    )
    corpus_points: CorpusPoints | None = option(
        None,
        doc='rescale="corpus"\'s sampling (a CorpusPoints, or a mapping of its fields)',
        check=_corpus_points,
        parts=CorpusPoints,
    )
    long_source: str | None = option(
        None,
        doc='None (the source is one condition, truncated at max_length) or "windows": faithfulness sentence by '
        "sentence, each prediction sentence given the best of windows_k windows of the source around the sentences a "
        "retriever finds most like it (LongDocFACTScore; bart_score.long_documents.windows, docs/long-documents.md)",
        check=_one_of(LONG_SOURCE_MODES, f"None or one of {LONG_SOURCE_MODES}"),
        flag=Flag(
            "--long-source",
            choices=LONG_SOURCE_MODES,
            help="windows: score each prediction sentence given the source windows most like it (LongDocFACTScore); "
            "default: the source as one condition, truncated to --max-length",
            section="long source",
        ),
        setting=LONG_SOURCE_SETTING,
    )
    windows_k: int = option(
        DEFAULT_WINDOWS_K,
        doc='long_source="windows"\'s windows per prediction sentence',
        check=positive_option,
        flag=Flag(
            "--windows-k",
            integer=True,
            metavar="K",
            help=f"windows per prediction sentence (default {DEFAULT_WINDOWS_K})",
            section="long source",
        ),
        setting=LONG_SOURCE_SETTING,
    )
    window: str | int = option(
        DEFAULT_WINDOW,
        doc='long_source="windows"\'s window rule: "longdocfactscore" or a whole number of neighbours on each side',
        check=_window,
        flag=Flag(
            "--window",
            metavar="RULE",
            help=f"{LONGDOCFACTSCORE} (the sentence and the one before it, as LongDocFACTScore) or N (the sentence and "
            f"N neighbours on each side) (default {DEFAULT_WINDOW})",
            section="long source",
        ),
        setting=LONG_SOURCE_SETTING,
    )
    retriever: Any = option(
        DEFAULT_RETRIEVER,
        doc='long_source="windows"\'s retriever: "bm25", a sentence-embedding encoder checkpoint, or a '
        "bart_score.long_documents.retrievers.Retriever",
        check=_retriever,
        flag=Flag(
            "--retriever",
            metavar="NAME",
            help=f"bm25 (lexical), or a sentence-embedding encoder checkpoint (default {DEFAULT_RETRIEVER})",
            section="long source",
        ),
        setting=LONG_SOURCE_SETTING,
    )
    max_sentences: int = option(
        DEFAULT_MAX_SENTENCES,
        doc='long_source="windows"\'s most sentences per prediction or source (default 10,000); a text with more is '
        "refused, naming it, before anything is scored",
        check=positive_option,
        flag=Flag(
            "--max-sentences",
            integer=True,
            metavar="N",
            help=f"refuse a text (prediction or source) of more than N sentences (default {DEFAULT_MAX_SENTENCES})",
            section="long source",
        ),
        setting=LONG_SOURCE_SETTING,
    )
    batch_size: int | None = option(
        None,
        doc="the most pairs per model batch (does not change a score)",
        check=optional_positive_int,
        flag=Flag("--batch-size", integer=True, help="at most this many pairs per batch", section="sizes"),
    )
    max_tokens: int | None = option(
        None,
        doc="the most padded tokens per model batch (does not change a score; default: the engine's)",
        check=optional_positive_int,
        flag=Flag(
            "--max-tokens",
            integer=True,
            help=f"padded tokens per batch (default {DEFAULT_MAX_TOKENS} on a GPU, {DEFAULT_CPU_MAX_TOKENS} on a CPU)",
            section="sizes",
        ),
    )
    max_chars: int = option(
        DEFAULT_MAX_CHARS,
        doc=f"the most characters of a prediction, reference or source (default {DEFAULT_MAX_CHARS:,}); a longer text "
        "is refused, naming it, before it is split or tokenized",
        check=positive_option,
        flag=Flag(
            "--max-chars",
            integer=True,
            metavar="N",
            help=f"refuse a text (system output, reference or source) of more than N characters (default "
            f"{DEFAULT_MAX_CHARS})",
            section="sizes",
        ),
    )
    show_progress: bool = option(
        False,
        doc="a progress bar on stderr",
        check=_true_or_false,
        flag=Flag(
            "-q",
            "--quiet",
            switch=True,
            help="no progress or loading bars (notes about the input still show)",
            section="progress",
            read=operator.not_,
        ),
    )
    prompts: tuple[str | None, ...] = dataclasses.field(init=False, repr=False, compare=False)
    prompt_label: str = dataclasses.field(init=False, repr=False, compare=False)
    windows: WindowSettings | None = dataclasses.field(init=False, repr=False, compare=False)

    def _check_together(self) -> None:
        prompts, label = resolve_prompts(self.prompt)
        self._put("prompts", prompts)
        self._put("prompt_label", label if self.prompt is None else f"{label}@{self.prompt_side}")
        self._check_rescaling()
        self._check_long_source()

    def _check_rescaling(self) -> None:
        if self.baseline is not None:
            if self.rescale == "corpus":
                raise InputError(
                    Mention("rescale", "corpus"),
                    " takes its reference points from the texts being scored, and cannot be combined with a baseline "
                    "file",
                    option="rescale",
                    value="corpus",
                )
            self._put("rescale", "baseline")
        if self.corpus_points is not None:
            if self.rescale != "corpus":
                raise InputError(
                    Mention("corpus_points"),
                    " is for ",
                    Mention("rescale", "corpus"),
                    f" only; this call rescales with {self.rescale or 'nothing'}",
                    option="corpus_points",
                    value=self.corpus_points,
                )
        elif self.rescale == "corpus":
            self._put("corpus_points", CorpusPoints())

    def _check_long_source(self) -> None:
        if self.long_source is None:
            self._put("windows", None)
            return
        if self.rescale is not None:
            raise InputError(
                Mention("long_source", self.long_source),
                " cannot be rescaled: the reference points are whole-text scores, on another scale than window scores",
                option="long_source",
                value=self.long_source,
                remedy="leave rescaling out",
            )
        self._put("windows", WindowSettings(self.windows_k, self.window, self.retriever, self.max_sentences))

    @classmethod
    def resolve(cls, options: ScoringOptions | None = None, /, **keywords: Any) -> ScoringOptions:
        """The options of a call that takes `options` or the same settings as keywords (never both)."""
        if options is None:
            unknown = sorted(set(keywords) - OPTION_NAMES)
            if unknown:
                raise InputTypeError(
                    f"unexpected options {unknown}; the scoring options are {sorted(OPTION_NAMES)}", option="options"
                )
            return cls(**keywords)
        if not isinstance(options, ScoringOptions):
            raise InputTypeError(
                Mention("options"),
                f" must be a ScoringOptions, got {describe(options)}",
                option="options",
                value=options,
            )
        if keywords:
            raise InputTypeError(
                "pass the scoring options as ",
                Mention("options"),
                " (a ScoringOptions) or as keywords, not both (got ",
                Mention("options"),
                f" and {sorted(keywords)})",
                option="options",
                value=options,
            )
        return options

    def check_lengths(self, texts: Sequence[str | Sequence[str]], name: str) -> None:
        """Refuses a text of the input `name` (predictions, sources; references, a list of texts per prediction)
        over max_chars characters, before it is split or tokenized."""
        for index, entry in enumerate(texts):
            longest = len(entry) if isinstance(entry, str) else max(map(len, entry), default=0)
            if longest > self.max_chars:
                named = Mention(name, index=index)
                text: list[Part] = [named] if isinstance(entry, str) else [named, " holds a text that"]
                raise too_long_error(text, longest, self.max_chars, option=name)

    def directions_for(self, *, has_references: bool, has_sources: bool) -> tuple[str, ...]:
        """The directions to compute for inputs with (or without) references and sources: the ones asked for, each
        checked against the inputs, else every direction they allow."""
        if not has_references and not has_sources:
            raise InputError(
                "BARTScore needs ",
                Mention("sources"),
                ", ",
                Mention("references"),
                " or both, besides ",
                Mention("predictions"),
            )
        if self.directions is None:
            if self.windows is not None and not has_sources:
                raise InputError(
                    Mention("long_source", self.long_source),
                    " scores faithfulness, which needs ",
                    Mention("sources"),
                    option="long_source",
                    value=self.long_source,
                )
            return tuple(d for d in DIRECTIONS if (has_sources if d == "faithfulness" else has_references))
        if self.windows is not None and "faithfulness" not in self.directions:
            raise InputError(
                Mention("long_source", self.long_source),
                f" changes how the source conditions faithfulness (source -> prediction), and this call asks for "
                f"{', '.join(self.directions)} without it",
                option="long_source",
                value=self.long_source,
                remedy="ask for faithfulness",
            )
        for direction in self.directions:
            if direction == "faithfulness" and not has_sources:
                raise InputError(
                    "direction 'faithfulness' (source -> prediction) needs ",
                    Mention("sources"),
                    ", which was not given",
                    option="directions",
                    value=self.directions,
                )
            if direction != "faithfulness" and not has_references:
                raise InputError(
                    f"direction {direction!r} needs ",
                    Mention("references"),
                    ", which were not given",
                    option="directions",
                    value=self.directions,
                )
        return self.directions


OPTION_NAMES = frozenset(ScoringOptions.TABLE)

# The most CPU threads torch may be given (threads): more than the cores of any machine torch runs on, and few enough
# that a thread pool of that size (each thread's stack reserved) cannot exhaust a process.
MAX_THREADS = 1024


def _threads(value: Any, name: str) -> int:
    """The check of threads: a whole number from 1 to MAX_THREADS."""
    number = whole_number(value)
    if number is None or not 1 <= number <= MAX_THREADS:
        raise InputError(
            Mention(name), f" must be an integer from 1 to {MAX_THREADS}, got {shown(value)}", option=name, value=value
        )
    return number


@options_table
@dataclass(frozen=True)
class EngineOptions(CheckedOptions):
    """The checked settings of a ``BARTScorer``, as one object to build once and pass whole: ``BARTScorer(options)``.
    The first seven may be given by position, in the original class's order.

    chat_settings is derived: the checked chat options (bart_score.models.templates.ChatSettings), None without chat."""

    device: str | torch.device | None = option(
        None,
        doc='"cuda", "cuda:1", "cpu", ...; default CUDA when available',
        check=_device,
        flag=Flag("--device", help="cuda, cuda:1, cpu, ... (default: CUDA when available)", section="device"),
    )
    max_length: int | None = option(
        None,
        doc="tokens a text is truncated to (default 1024, as the original, or the model's positions if fewer)",
        check=_whole_number_from(2),
        flag=Flag(
            "--max-length",
            integer=True,
            help="truncate texts to this many tokens (default 1024, or the model's positions)",
            section="sizes",
        ),
    )
    checkpoint: str = option(
        DEFAULT_CHECKPOINT,
        doc='a named configuration ("vanilla", "cnn", "cnn-para", "mbart50", "mt5", "flan-t5", "opt", "qwen"), a Hub '
        "id, or a local directory of a BART, mBART, T5/mT5/Flan-T5, PEGASUS, Marian or decoder-only causal LM "
        "checkpoint, or a GGUF file",
        flag=Flag(
            "-m",
            "--model",
            default="cnn",
            help="vanilla, cnn (default), cnn-para, mbart50, mt5, flan-t5, opt, qwen, a Hub id, a checkpoint directory "
            "of a BART, mBART, T5/mT5/Flan-T5, PEGASUS, Marian or decoder-only causal LM, or a GGUF file (needs "
            'pip install "bartscore[gguf]")',
            section="checkpoint",
        ),
    )
    dtype: str = option(
        "float32",
        doc='"float32" (default, the original\'s numbers), or "bfloat16"/"float16" for speed on GPUs',
        check=_one_of(DTYPE_NAMES),
        flag=Flag("--dtype", choices=DTYPE_NAMES, default="float32", help="(default: float32)", section="device"),
    )
    max_tokens: int | None = option(
        None,
        doc=f"padded tokens per model batch (default {DEFAULT_MAX_TOKENS} on a GPU, {DEFAULT_CPU_MAX_TOKENS} on a "
        "CPU); lower it if memory is short (scores do not change)",
        check=optional_positive_int,
        flag=ScoringOptions.TABLE["max_tokens"].flags,  # one --max-tokens sets both
    )
    distributed: bool = option(
        True,
        doc="when a torch.distributed process group is initialised (torchrun, accelerate launch), every rank passes "
        "the same inputs and each scores a share of the work, balanced by tokens; False scores alone",
        check=_true_or_false,
    )
    results_on: str = option(
        "all",
        doc='"all" (every rank gets all scores) or "rank0" (other ranks get None)',
        check=_one_of(RESULTS_ON, "'all' or 'rank0'"),
    )
    _: dataclasses.KW_ONLY
    source_lang: str | None = option(
        None,
        doc='mBART\'s language code of the sources ("en_XX", "de_DE", ...)',
        flag=Flag(
            "--source-lang", metavar="CODE", help="mBART: the sources' language code (e.g. de_DE)", section="checkpoint"
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    target_lang: str | None = option(
        None,
        doc="mBART's language code of the predictions and references",
        flag=Flag(
            "--target-lang",
            metavar="CODE",
            help="mBART: the outputs' and references' code (e.g. en_XX)",
            section="checkpoint",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    template: str | None = option(
        None,
        doc='causal LMs: the prefix built from a condition, holding "{condition}" once (default "{condition}\\n")',
        check=_template,
        flag=Flag(
            "--template",
            help="causal LMs: the prefix built from a condition, holding {condition} once (default: '{condition}\\n'; "
            "in bash write a newline as $'...\\n')",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    compatibility: str | None = option(
        None,
        doc='"gptscore" scores a causal LM exactly as GPTScore\'s opt_score.py does (its template is "{condition}" + '
        "GPTScore's prompt_text)",
        check=_one_of(COMPATIBILITY, f"None or one of {COMPATIBILITY}"),
        flag=Flag(
            "--compatibility",
            choices=COMPATIBILITY,
            help="causal LMs: score exactly as GPTScore does (its prompt_text goes into --template after {condition})",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    chat: bool = option(
        False,
        doc="True scores a causal LM that has a chat template in its chat format: the condition, put into the "
        "instruction, is a user turn and the target the assistant's reply (bart_score.models.chat)",
        flag=Flag(
            "--chat",
            switch=True,
            help="causal LMs with a chat template (instruction-tuned): score in their chat format, the condition in a "
            "user turn (--instruction) and the scored text as the assistant's reply, closed by the template's "
            "end-of-turn token",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    instruction: str | Mapping[str, str] | None = option(
        None,
        doc='with chat: the user turn built from a condition, holding "{condition}" once; one for every direction, or '
        "{direction: instruction} for some of faithfulness, precision and recall (default: each direction's own, "
        "bart_score.models.templates.DEFAULT_INSTRUCTIONS). score() uses faithfulness's",
        flag=Flag(
            "--instruction",
            metavar="TEXT",
            help="with --chat: the user turn, holding {condition} once, for every direction (default: each "
            "direction's own: 'Summarize the following text.' for faithfulness, 'Paraphrase the following text.' for "
            "precision and recall, then a blank line and {condition})",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    system: str | None = option(
        None,
        doc="with chat: a system turn put first (default: none, or whatever the chat template adds by itself)",
        flag=Flag(
            "--system",
            metavar="TEXT",
            help="with --chat: a system turn first (default: the chat template's own, if any)",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    chat_template: str | None = option(
        None,
        doc="with chat: a file holding the chat template to score in (Jinja, as a tokenizer's chat_template), for a "
        "model that has none (a base model's GGUF file) or instead of its own; it renders under the same limits",
        check=_chat_template_file,
        flag=Flag(
            "--chat-template",
            metavar="FILE",
            help="with --chat: a chat template file (Jinja) to score in, for a model without one or instead of its own",
            section="prompting",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    served_model: str | None = option(
        None,
        doc='a checkpoint that names an inference server ("vllm+http://127.0.0.1:8000/v1"; docs/models.md): the '
        "served model's name on it (default: the server's only model)",
        check=_name,
        flag=Flag(
            "--served-model",
            metavar="NAME",
            help="with -m naming a server (vllm+, sglang+, tgi+ or llama.cpp+ and its URL): the served model's name "
            "(default: the server's only model)",
            section="checkpoint",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    served_tokenizer: str | None = option(
        None,
        doc="a served model: the Hub id, folder or GGUF file its tokenizer is read from, to tokenize as the server "
        "does (default: the Hub id the server reports, from the Hugging Face cache; a path it reports is never read)",
        check=_name,
        flag=Flag(
            "--served-tokenizer",
            metavar="CHECKPOINT",
            help="a served model: the Hub id, folder or GGUF file its tokenizer is read from (default: the Hub id "
            "the server reports; needed for llama.cpp+, which reports a path)",
            section="checkpoint",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    concurrency: int | None = option(
        None,
        doc=f"a served model: the most requests in flight at once, from 1 to {MAX_CONCURRENCY} (default "
        f"{DEFAULT_CONCURRENCY})",
        check=_concurrency,
        flag=Flag(
            "--concurrency",
            integer=True,
            metavar="N",
            help=f"a served model: at most N requests at once, N at most {MAX_CONCURRENCY} (default "
            f"{DEFAULT_CONCURRENCY})",
            section="device",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    request_timeout: float | None = option(
        None,
        doc=f"a served model: the seconds a request may take in all, connecting, sending and its whole answer (default "
        f"{DEFAULT_REQUEST_TIMEOUT:g}, at most {MAX_REQUEST_TIMEOUT:,g}: a day)",
        check=_request_seconds,
        flag=Flag(
            "--request-timeout",
            metavar="SECONDS",
            help=f"a served model: seconds a request may take in all, its whole answer included (default "
            f"{DEFAULT_REQUEST_TIMEOUT:g}, at most {MAX_REQUEST_TIMEOUT:g})",
            read=_decimal_text,
            section="device",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    request_retries: int | None = option(
        None,
        doc=f"a served model: attempts after a request fails for want of an answer (429, 5xx, a timeout, a dropped "
        f"connection), with back-off (default {DEFAULT_RETRIES})",
        check=_whole_number_from(0),
        flag=Flag(
            "--request-retries",
            integer=True,
            metavar="N",
            help=f"a served model: retry a request N times after a 429, 5xx, timeout or dropped connection (default "
            f"{DEFAULT_RETRIES})",
            section="device",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    threads: int | None = option(
        None,
        doc=f"torch's CPU threads, from 1 to {MAX_THREADS}, set when the engine loads (torch.set_num_threads, which is "
        "process-wide); default: left as the process has them (the caller's torch.set_num_threads, OMP_NUM_THREADS)",
        check=_threads,
        flag=Flag(
            "--threads",
            integer=True,
            metavar="N",
            help="torch's CPU threads (default: OMP_NUM_THREADS if set, else the cores this process may use less the "
            "load average of the others, at least 1; docs/cli.md)",
            section="device",
        ),
        setting=MODEL_ENTRY_SETTING,
    )
    chat_settings: ChatSettings | None = dataclasses.field(init=False, repr=False, compare=False)

    def _check_together(self) -> None:
        """The chat options, checked with the template and compatibility they may not go with."""
        self._put(
            "chat_settings",
            chat_settings(
                self.chat, self.instruction, self.system, template=self.template, compatibility=self.compatibility
            ),
        )
        if self.chat_template is not None and not self.chat:
            raise InputError(
                Mention("chat_template"),
                " is for chat scoring, which is not asked for",
                option="chat_template",
                value=self.chat_template,
                remedy=["ask for it with ", Mention("chat", True)],
            )

    @classmethod
    def resolve(cls, options: EngineOptions | None = None, /, **keywords: Any) -> EngineOptions:
        """The settings of a call that takes `options` or the same settings as keywords (never both)."""
        if options is None:
            return cls(**keywords)
        if not isinstance(options, EngineOptions):
            raise InputTypeError(
                Mention("options"),
                f" must be an EngineOptions, got {describe(options)}",
                option="options",
                value=options,
            )
        if keywords:
            raise InputTypeError(
                f"pass the engine's settings as an EngineOptions or as keywords, not both (got an EngineOptions and "
                f"{sorted(keywords)})",
                option="options",
                value=options,
            )
        return options


ENGINE_OPTION_NAMES = frozenset(EngineOptions.TABLE)


# A Ray cluster's address: "auto", or a head's host (a name, IPv4, or IPv6 in brackets) and port, with "ray://" for
# Ray Client.
CLUSTER_ADDRESS = re.compile(r"auto|(ray://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}")


# The cluster's bounds (bart_score.scaling.cluster, docs/security.md): the most scorers a run asks for (each loads a
# model); a scorer for at most every BATCHES_PER_ACTOR batches, so that a pool is never larger than its work; and the
# batches a table is cut into by default, BATCHES_PER_ACTOR_TARGET per scorer of at most MAX_AUTO_BATCH_ROWS rows, so
# that a killed driver loses about 1/BATCHES_PER_ACTOR_TARGET of the rows.
MAX_CLUSTER_ACTORS = 1024
BATCHES_PER_ACTOR = 4
BATCHES_PER_ACTOR_TARGET = 32
MAX_AUTO_BATCH_ROWS = 1000


def _whole_number_between(least: int, most: int) -> Callable[[Any, str], int | None]:
    """The check of an option that takes None or a whole number from `least` to `most`."""

    def check(value: Any, name: str) -> int | None:
        number = None if value is None else whole_number(value)
        if value is not None and (number is None or not least <= number <= most):
            raise InputError(
                Mention(name),
                f" must be an integer from {least} to {most} or None, got {shown(value)}",
                option=name,
                value=value,
            )
        return number

    return check


def _cluster_address(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputTypeError(
            Mention(name), f" must be an address (a str) or None, got {describe(value)}", option=name, value=value
        )
    if not CLUSTER_ADDRESS.fullmatch(value):
        raise InputError(
            Mention(name),
            f" must be 'auto', 'ray://<head>:<port>' or '<head>:<port>', got {value!r}",
            option=name,
            value=value,
            remedy="leave it out to start a local cluster",
        )
    return value


@options_table
@dataclass(frozen=True)
class ClusterOptions(CheckedOptions):
    """How a corpus is scored across a Ray cluster (bart_score.scaling.cluster): where, by how many scorers, in batches
    of how many rows, and how often a failed batch is tried again."""

    address: str | None = option(
        None,
        doc='the Ray cluster to join: "auto" (the one this machine belongs to), "ray://<head>:10001" (Ray Client) or '
        'the head\'s "<host>:<port>"; an address never starts a cluster. None: the cluster this process is already '
        "connected to, else a local one started for the run",
        check=_cluster_address,
        flag=Flag(
            "--address",
            metavar="ADDRESS",
            help="the Ray cluster to join: auto (this machine's), ray://HEAD:10001 (Ray Client) or HEAD:PORT "
            "(default: a local cluster started for the run)",
            section="cluster",
        ),
    )
    actors: int | None = option(
        None,
        doc=f"the scorers, each a Ray actor holding one loaded model (with a GPU of its own where the cluster has "
        f"GPUs), at most {MAX_CLUSTER_ACTORS}, and never more than one per {BATCHES_PER_ACTOR} batches of the table; "
        f"None: one per GPU of the cluster, or one on a cluster without GPUs",
        check=_whole_number_between(1, MAX_CLUSTER_ACTORS),
        flag=Flag(
            "--actors",
            integer=True,
            metavar="N",
            help=f"scorers, each holding one loaded model, at most {MAX_CLUSTER_ACTORS} and one per "
            f"{BATCHES_PER_ACTOR} batches (default: one per GPU of the cluster, or one)",
            section="cluster",
        ),
    )
    rows_per_batch: int | None = option(
        None,
        doc="the rows a scorer scores in one engine call (planned and deduplicated together): the unit that is "
        "retried, written and checkpointed (does not change a score beyond float32 rounding); None: sized from the "
        f"table and the actors, {BATCHES_PER_ACTOR_TARGET} batches per actor of at most {MAX_AUTO_BATCH_ROWS} rows",
        check=optional_positive_int,
        flag=Flag(
            "--batch-rows",
            integer=True,
            metavar="N",
            help=f"rows a scorer scores at once, tried again, written and checkpointed as one (default: "
            f"{BATCHES_PER_ACTOR_TARGET} batches per scorer, of at most {MAX_AUTO_BATCH_ROWS} rows)",
            section="cluster",
        ),
    )
    retries: int = option(
        3,
        doc="how many times a batch is tried again after a failure that is not the input's (a ScoringError, an "
        "error from outside bart_score, a lost actor or node) before the run fails naming its rows",
        check=_whole_number_from(0),
        flag=Flag(
            "--retries",
            integer=True,
            metavar="N",
            help="times a failed batch is tried again before the run fails naming its rows; an error of the input's "
            "is not (default 3)",
            section="cluster",
        ),
    )


# The table of every option, in the order the command line's --help lists the flags of a section.
OPTION_CLASSES: tuple[type[CheckedOptions], ...] = (ScoringOptions, CorpusPoints, EngineOptions, ClusterOptions)
