"""What one scoring call asks for, checked once: ScoringOptions, and CorpusPoints, rescale="corpus"'s sampling."""

from __future__ import annotations

import dataclasses
import operator
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from ..errors import InputError, InputTypeError
from ..inputs import describe, optional_positive_int, positive_option
from ..messages import Mention, Part, Recipe
from ..variants import DEFAULT_CPU_MAX_TOKENS, DEFAULT_MAX_TOKENS
from ._checks import (
    checked_directions,
    comma_separated,
    given_twice,
    one_of,
    prompt_setting,
    resolve_prompts,
    shown_key,
    too_long_error,
    true_or_false,
    unrelated_texts,
    whole_number_from,
)
from ._table import FILE, LONG_SOURCE_SETTING, CheckedOptions, Flag, option, options_table
from ._vocabulary import (
    AGGREGATIONS,
    DIRECTIONS,
    LONG_SOURCE_MODES,
    PROMPT_SIDES,
    RESCALE_MODES,
    Aggregation,
    LongSourceMode,
    PromptSide,
    RescaleMode,
)
from ._windows import (
    DEFAULT_MAX_SENTENCES,
    DEFAULT_RETRIEVER,
    DEFAULT_WINDOW,
    DEFAULT_WINDOWS_K,
    LONGDOCFACTSCORE,
    WindowSettings,
    check_retriever,
    check_window,
)

# rescale="corpus"'s sampling: the most extra pairs scored for the reference points, and the seed they are drawn with.
DEFAULT_PAIRS = 1000
DEFAULT_SEED = 12345

# The most characters of a prediction, reference or source, checked before a text is split or tokenized (tokenizing
# costs about 150 MB and 5 s per million characters; a 10 MB prediction took 70 s and 2.4 GB). The longest article of
# the long-document benchmarks (LongDocFACTScore's release: PubMed and arXiv) has 69,353 characters; a million is 14
# times that, and about what max_sentences' 10,000 sentences of prose hold.
DEFAULT_MAX_CHARS = 1_000_000


class LoadedBaseline:
    """A baseline file read and checked, as the baseline option takes one: bart_score.baselines.files.Baseline (from
    bart_score.load_baseline), the one class of them, is a LoadedBaseline."""


def _baseline(value: Any, name: str) -> str | LoadedBaseline:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if not isinstance(value, (str, LoadedBaseline)):
        raise InputTypeError(
            Mention(name),
            f" must be a file path or a loaded baseline (bart_score.load_baseline), got {describe(value)}",
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
                f"its fields: {', '.join(map(shown_key, unknown[:5]))}{', ...' if len(unknown) > 5 else ''}",
                value=value,
                remedy=f"its fields are {', '.join(CorpusPoints.TABLE)}",
            )
        return CorpusPoints(**value)
    if not isinstance(value, CorpusPoints):
        raise InputTypeError(
            Mention(name), f" must be a CorpusPoints (or a mapping of its fields), got {describe(value)}", value=value
        )
    return value


@options_table
@dataclass(frozen=True)
class CorpusPoints(CheckedOptions):
    """How rescale="corpus" takes its reference points from the texts being scored."""

    PREFIX = "corpus_points."

    pairs: int = option(
        DEFAULT_PAIRS,
        text="at most {metavar} extra pairs for the reference points (default {default})",
        check=positive_option,
        flag=Flag("--rescale-pairs", metavar="N", when=Mention("rescale", "corpus"), section="rescale"),
    )
    seed: int = option(
        DEFAULT_SEED,
        text="sampling seed (default {default})",
        check=whole_number_from(0),
        flag=Flag("--rescale-seed", metavar="S", when=Mention("rescale", "corpus"), section="rescale"),
    )
    unrelated_texts: tuple[str, ...] | None = option(
        None,
        text="fixed unrelated conditions instead of other rows' texts (for inputs that all share one source)",
        check=unrelated_texts,
    )


@options_table
@dataclass(frozen=True)
class ScoringOptions(CheckedOptions):
    """The checked options of a scoring call.

    prompts and prompt_label are derived: the phrases each pair is scored under ((None,) without a prompt) and the
    signature's prompt field; windows is long_source="windows"'s checked WindowSettings (None without it)."""

    directions: tuple[str, ...] | None = option(
        None,
        text="faithfulness,precision,recall,f_score (default: {default})",
        unset="all the inputs allow",
        check=checked_directions,
        flag=Flag("-d", "--directions", section="scoring", read=comma_separated),
        field="directions",
    )
    aggregation: Aggregation | None = option(
        "mean",
        text="over several references (default: {default})",
        check=one_of((*AGGREGATIONS, None), says=f"one of {AGGREGATIONS}"),
        flag=Flag("--aggregation", section="scoring"),
    )
    prompt: str | tuple[str, ...] | None = option(
        None,
        text="a prompt set (summary, paraphrase, mt) or one prompt phrase; or your own prompt phrases (the score is "
        "their average), even one-word ones",
        check=prompt_setting,
        flag=(
            Flag("-p", "--prompt", section="scoring"),
            Flag("--prompt-phrases", nargs="+", metavar="PHRASE", section="scoring"),
        ),
        field="prompt-phrase",
    )
    prompt_side: PromptSide = option(
        "encoder",
        text="(default: {default})",
        check=one_of(PROMPT_SIDES),
        flag=Flag("--prompt-side", section="scoring"),
    )
    rescale: RescaleMode | None = option(
        None,
        text=(
            "add rescaled scores: 'baseline' uses the baseline file made by ",
            Recipe("baseline", call="bart_score.build_baseline"),
            " for this model and these settings; 'corpus' takes the reference points from the texts being scored "
            "(comparable only within them)",
        ),
        check=one_of(RESCALE_MODES, "None, 'baseline' or 'corpus'"),
        flag=Flag("--rescale", nargs="?", const="baseline", section="rescale"),
        field="rescale",
    )
    baseline: Annotated[str, FILE] | LoadedBaseline | None = option(
        None,
        text=("rescale with this baseline file (implies ", Mention("rescale"), ")"),
        check=_baseline,
        flag=Flag("--baseline", section="rescale"),
        field="rescale",
    )
    corpus_points: CorpusPoints | None = option(
        None,
        text='rescale="corpus"\'s sampling (a CorpusPoints, or a mapping of its fields)',
        check=_corpus_points,
        parts=CorpusPoints,
    )
    long_source: LongSourceMode | None = option(
        None,
        text=(
            "windows: score each prediction sentence given the source windows most like it (LongDocFACTScore); "
            "default: the source as one condition, truncated to ",
            Mention("max_length"),
        ),
        check=one_of(LONG_SOURCE_MODES, f"None or one of {LONG_SOURCE_MODES}"),
        flag=Flag("--long-source", section="long source"),
        setting=LONG_SOURCE_SETTING,
    )
    windows_k: int = option(
        DEFAULT_WINDOWS_K,
        text="windows per prediction sentence (default {default})",
        check=positive_option,
        flag=Flag("--windows-k", metavar="K", section="long source"),
        setting=LONG_SOURCE_SETTING,
    )
    window: str | int = option(
        DEFAULT_WINDOW,
        text=f"{LONGDOCFACTSCORE} (the sentence and the one before it, as LongDocFACTScore) or N (the sentence and N "
        "neighbours on each side) (default {default})",
        check=lambda value, name: check_window(value),
        flag=Flag("--window", metavar="RULE", section="long source"),
        setting=LONG_SOURCE_SETTING,
    )
    retriever: Any = option(
        DEFAULT_RETRIEVER,
        text="bm25 (lexical), or a sentence-embedding encoder checkpoint (default {default})",
        check=lambda value, name: check_retriever(value),
        flag=Flag("--retriever", metavar="NAME", section="long source"),
        setting=LONG_SOURCE_SETTING,
    )
    max_sentences: int = option(
        DEFAULT_MAX_SENTENCES,
        text="refuse a text (prediction or source) of more than {metavar} sentences (default {default})",
        check=positive_option,
        flag=Flag("--max-sentences", metavar="N", section="long source"),
        setting=LONG_SOURCE_SETTING,
    )
    batch_size: int | None = option(
        None,
        text="at most this many pairs per batch",
        check=optional_positive_int,
        flag=Flag("--batch-size", section="sizes"),
    )
    max_tokens: int | None = option(
        None,
        text=f"padded tokens per batch (default {DEFAULT_MAX_TOKENS} on a GPU, {DEFAULT_CPU_MAX_TOKENS} on a CPU)",
        check=optional_positive_int,
        flag=Flag("--max-tokens", section="sizes"),
    )
    max_chars: int = option(
        DEFAULT_MAX_CHARS,
        text="refuse a text (system output, reference or source) of more than {metavar} characters (default {default})",
        check=positive_option,
        flag=Flag("--max-chars", metavar="N", section="sizes"),
    )
    show_progress: bool = option(
        False,
        text="a progress bar on stderr",
        check=true_or_false,
        flag=Flag(
            "-q",
            "--quiet",
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
                )
            self._put("rescale", "baseline")
        if self.corpus_points is not None and self.rescale != "corpus":
            raise InputError(
                Mention("corpus_points"), " is for ", Mention("rescale", "corpus"), " only", value=self.corpus_points
            )
        if self.corpus_points is None and self.rescale == "corpus":
            self._put("corpus_points", CorpusPoints())

    def _check_long_source(self) -> None:
        if self.long_source is None:
            self._put("windows", None)
            return
        if self.rescale is not None:
            raise InputError(
                Mention("long_source", self.long_source),
                " cannot be rescaled: the reference points are whole-text scores, on another scale than window scores",
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
                Mention("options"), f" must be a ScoringOptions, got {describe(options)}", value=options
            )
        if keywords:
            raise given_twice(options, keywords, "a ScoringOptions")
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
                Mention("sources"), ", ", Mention("references"), " or both must be given with ", Mention("predictions")
            )
        if self.directions is None:
            if self.windows is not None and not has_sources:
                raise InputError(
                    Mention("long_source", self.long_source), " scores faithfulness, which needs ", Mention("sources")
                )
            return tuple(d for d in DIRECTIONS if (has_sources if d == "faithfulness" else has_references))
        if self.windows is not None and "faithfulness" not in self.directions:
            raise InputError(
                Mention("long_source", self.long_source),
                f" changes how the source conditions faithfulness, and this call asks for {', '.join(self.directions)}",
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
