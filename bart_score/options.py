"""What one scoring call asks for, checked once: ``ScoringOptions``; and the engine's settings: ``EngineOptions``.

The options are resolved once, where a request enters (keywords of a library call or of the metric's compute, the
command line's arguments, the Space's form), and the checked object travels down whole: the directions layer, the
corpus and dataset scorers, the meta-evaluation and the Space all take it as it is. Every check of an option lives
here; callers turn ``InputError`` into their own answer (the command line's exit status 2, the Space's message).

Checks that need the inputs (which directions the given texts allow) are ``ScoringOptions.directions_for``; checks
that need the model (the baseline's key: model, token policy, prompt setting, max_length) are made by the directions
layer before any scoring (bart_score.baselines.lookup.baseline_for).

``EngineOptions`` is the same for ``BARTScorer``'s settings: the metric, the command line and the Space each build one
and pass it whole. Its checks are those that need no model; the engine checks the rest (the device's presence,
max_length against the model's positions, the settings a model family takes)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .baselines.files import Baseline
from .errors import InputError, InputTypeError
from .inputs import check_text, describe, device_name, optional_positive_int, text_list, whole_number
from .long_source import (
    DEFAULT_MAX_SENTENCES,
    DEFAULT_RETRIEVER,
    DEFAULT_WINDOW,
    DEFAULT_WINDOWS_K,
    LONG_SOURCE_MODES,
    WindowSettings,
)
from .prompts import PROMPT_SETS
from .rescale import DEFAULT_PAIRS, DEFAULT_SEED
from .templates import ChatSettings, chat_settings, template_sides
from .variants import DEFAULT_CHECKPOINT, DTYPE_NAMES

if TYPE_CHECKING:
    import torch

DIRECTIONS = ("faithfulness", "precision", "recall", "f_score")
AGGREGATIONS = ("mean", "max")
PROMPT_SIDES = ("encoder", "decoder")
RESCALE_MODES = ("baseline", "corpus")
RESULTS_ON = ("all", "rank0")
# The policies a causal LM can be scored under besides its default one.
COMPATIBILITY = ("gptscore",)
# Per-prediction results besides the directions' scores: rescaled scores, and what long_source="windows" scored.
RESULT_SUFFIXES = ("", "_rescaled", "_sentences", "_windows")


@dataclass(frozen=True)
class CorpusPoints:
    """How rescale="corpus" takes its reference points from the texts being scored: at most `pairs` extra pairs,
    sampled with `seed`; unrelated_texts: fixed unrelated conditions instead of other rows' texts (for inputs that all
    share one source)."""

    pairs: int = DEFAULT_PAIRS
    seed: int = DEFAULT_SEED
    unrelated_texts: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if whole_number(self.pairs) is None or self.pairs < 1:
            raise InputError(
                f"corpus_points.pairs must be a positive integer, got {self.pairs!r}", option="corpus_points.pairs"
            )
        if whole_number(self.seed) is None or self.seed < 0:
            raise InputError(
                f"corpus_points.seed must be an integer of at least 0, got {self.seed!r}", option="corpus_points.seed"
            )
        object.__setattr__(self, "pairs", whole_number(self.pairs))
        object.__setattr__(self, "seed", whole_number(self.seed))
        if self.unrelated_texts is not None:
            texts = tuple(dict.fromkeys(text_list(self.unrelated_texts, "corpus_points.unrelated_texts")))
            if not texts:
                raise InputError(
                    "corpus_points.unrelated_texts is empty; leave it out to pair texts from different rows",
                    option="corpus_points.unrelated_texts",
                )
            object.__setattr__(self, "unrelated_texts", texts)


@dataclass(frozen=True)
class ScoringOptions:
    """The checked options of a scoring call.

    directions: any of DIRECTIONS (a name or a sequence), or None for every direction the inputs allow.
    aggregation: "mean" or "max" over several references (f_score is the mean of the aggregated precision and recall),
        or None for the caller's own ("mean"; meta-evaluation: the release's for each benchmark).
    prompt: a paper prompt set by name ("summary", "paraphrase", "mt"), one phrase, or a sequence of phrases; a
        prompted score is the mean over the phrases. A lowercase single word is read as a set name.
    prompt_side: "encoder" appends " <prompt>," to the condition, "decoder" prepends "<prompt>, " to the target.
    rescale: None, "baseline" (reference points from a baseline file) or "corpus" (from the texts being scored).
    baseline: the baseline file (a path, or a Baseline from bart_score.load_baseline); implies rescale="baseline".
        It is read and checked against the model and settings before any scoring. With rescale="baseline" and no
        baseline, the file at the default location for the model and settings is used.
    corpus_points: rescale="corpus"'s sampling (a CorpusPoints, or a mapping of its fields).
    long_source: None (the source is one condition, truncated at max_length) or "windows": faithfulness sentence by
        sentence, each prediction sentence given the best of windows_k windows of the source around the sentences a
        retriever finds most like it (LongDocFACTScore; bart_score.long_source, docs/long-documents.md).
    windows_k, window, retriever: long_source="windows"'s windows per sentence, window rule ("longdocfactscore" or a
        whole number of neighbours on each side) and retriever ("bm25", a sentence-embedding encoder checkpoint, or a
        bart_score.retrievers.Retriever).
    max_sentences: long_source="windows"'s most sentences per prediction or source (default 10,000); a text with more
        is refused, naming it, before anything is scored.
    batch_size, max_tokens: the most pairs and padded tokens per model batch (neither changes a score).
    show_progress: a progress bar on stderr.

    prompts and prompt_label are derived: the phrases each pair is scored under ((None,) without a prompt) and the
    signature's prompt field; windows is long_source="windows"'s checked WindowSettings (None without it)."""

    directions: tuple[str, ...] | None = None
    aggregation: str | None = "mean"
    prompt: str | tuple[str, ...] | None = None
    prompt_side: str = "encoder"
    rescale: str | None = None
    baseline: str | Baseline | None = None
    corpus_points: CorpusPoints | None = None
    long_source: str | None = None
    windows_k: int = DEFAULT_WINDOWS_K
    window: str | int = DEFAULT_WINDOW
    retriever: Any = DEFAULT_RETRIEVER
    max_sentences: int = DEFAULT_MAX_SENTENCES
    batch_size: int | None = None
    max_tokens: int | None = None
    show_progress: bool = False
    prompts: tuple[str | None, ...] = field(init=False, repr=False, compare=False)
    prompt_label: str = field(init=False, repr=False, compare=False)
    windows: WindowSettings | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        put("directions", _checked_directions(self.directions))
        if self.aggregation is not None and self.aggregation not in AGGREGATIONS:
            raise InputError(
                f"aggregation must be one of {AGGREGATIONS}, got {self.aggregation!r}", option="aggregation"
            )
        if self.prompt_side not in PROMPT_SIDES:
            raise InputError(
                f"prompt_side must be one of {PROMPT_SIDES}, got {self.prompt_side!r}", option="prompt_side"
            )
        if self.prompt is not None and not isinstance(self.prompt, str):
            put("prompt", tuple(text_list(self.prompt, "prompt")))
        prompts, label = resolve_prompts(self.prompt)
        put("prompts", prompts)
        put("prompt_label", label if self.prompt is None else f"{label}@{self.prompt_side}")
        put("batch_size", optional_positive_int(self.batch_size, "batch_size"))
        put("max_tokens", optional_positive_int(self.max_tokens, "max_tokens"))
        if not isinstance(self.show_progress, bool):
            raise InputTypeError(
                f"show_progress must be True or False, got {describe(self.show_progress)}", option="show_progress"
            )
        self._check_rescaling(put)
        self._check_long_source(put)

    def _check_long_source(self, put: Any) -> None:
        windows = WindowSettings(self.windows_k, self.window, self.retriever, self.max_sentences)
        put("windows_k", windows.k)
        put("window", windows.window)
        put("max_sentences", windows.max_sentences)
        if self.long_source is None:
            put("windows", None)
            return
        if self.long_source not in LONG_SOURCE_MODES:
            raise InputError(
                f"long_source must be None or one of {LONG_SOURCE_MODES}, got {self.long_source!r}",
                option="long_source",
            )
        if self.rescale is not None:
            raise InputError(
                f"long_source={self.long_source!r} cannot be rescaled: the reference points are whole-text scores, "
                f"on another scale than window scores; leave rescaling out",
                option="long_source",
            )
        put("windows", windows)

    def _check_rescaling(self, put: Any) -> None:
        if self.rescale is not None and self.rescale not in RESCALE_MODES:
            raise InputError(f"rescale must be None, 'baseline' or 'corpus', got {self.rescale!r}", option="rescale")
        if self.baseline is not None:
            if self.rescale == "corpus":
                raise InputError(
                    "rescale='corpus' takes its reference points from the texts being scored, and cannot be "
                    "combined with a baseline file",
                    option="rescale",
                )
            if isinstance(self.baseline, os.PathLike):
                put("baseline", os.fspath(self.baseline))
            elif not isinstance(self.baseline, (str, Baseline)):
                raise InputTypeError(
                    f"baseline must be a file path or a loaded baseline (bart_score.load_baseline), got "
                    f"{describe(self.baseline)}",
                    option="baseline",
                )
            put("rescale", "baseline")
        if self.corpus_points is not None:
            if self.rescale != "corpus":
                raise InputError(
                    f"corpus_points is for rescale='corpus' only; this call rescales with {self.rescale or 'nothing'}",
                    option="corpus_points",
                )
            if isinstance(self.corpus_points, Mapping):
                put("corpus_points", CorpusPoints(**self.corpus_points))
            elif not isinstance(self.corpus_points, CorpusPoints):
                raise InputTypeError(
                    f"corpus_points must be a CorpusPoints (or a mapping of its fields), got "
                    f"{describe(self.corpus_points)}",
                    option="corpus_points",
                )
        elif self.rescale == "corpus":
            put("corpus_points", CorpusPoints())

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
            raise InputTypeError(f"options must be a ScoringOptions, got {describe(options)}", option="options")
        if keywords:
            raise InputTypeError(
                f"pass the scoring options as options= or as keywords, not both (got options= and {sorted(keywords)})",
                option="options",
            )
        return options

    def replace(self, **changes: Any) -> ScoringOptions:
        """A copy with some options changed, checked again."""
        return dataclasses.replace(self, **changes)

    def directions_for(self, *, has_references: bool, has_sources: bool) -> tuple[str, ...]:
        """The directions to compute for inputs with (or without) references and sources: the ones asked for, each
        checked against the inputs, else every direction they allow."""
        if not has_references and not has_sources:
            raise InputError("BARTScore needs sources=, references= or both, besides predictions")
        if self.directions is None:
            if self.windows is not None and not has_sources:
                raise InputError(
                    f"long_source={self.long_source!r} scores faithfulness, which needs sources=", option="long_source"
                )
            return tuple(d for d in DIRECTIONS if (has_sources if d == "faithfulness" else has_references))
        if self.windows is not None and "faithfulness" not in self.directions:
            raise InputError(
                f"long_source={self.long_source!r} changes how the source conditions faithfulness (source -> "
                f"prediction), and this call asks for {', '.join(self.directions)} without it; ask for faithfulness",
                option="long_source",
            )
        for direction in self.directions:
            if direction == "faithfulness" and not has_sources:
                raise InputError(
                    "direction 'faithfulness' (source -> prediction) needs sources=, which was not given",
                    option="directions",
                )
            if direction != "faithfulness" and not has_references:
                raise InputError(
                    f"direction {direction!r} needs references=, which were not given", option="directions"
                )
        return self.directions


OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(ScoringOptions) if f.init)


@dataclass(frozen=True)
class EngineOptions:
    """The checked settings of a ``BARTScorer`` (their meaning: its docstring), as one object to build once and pass
    whole: ``BARTScorer(options)``. The first seven may be given by position, in the original class's order.

    chat_settings is derived: the checked chat options (bart_score.templates.ChatSettings), None without chat."""

    device: str | torch.device | None = None
    max_length: int | None = None
    checkpoint: str = DEFAULT_CHECKPOINT
    dtype: str = "float32"
    max_tokens: int | None = None
    distributed: bool = True
    results_on: str = "all"
    _: dataclasses.KW_ONLY
    source_lang: str | None = None
    target_lang: str | None = None
    template: str | None = None
    compatibility: str | None = None
    chat: bool = False
    instruction: str | Mapping[str, str] | None = None
    system: str | None = None
    chat_settings: ChatSettings | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        if self.dtype not in DTYPE_NAMES:
            raise InputError(f"dtype must be one of {DTYPE_NAMES}, got {self.dtype!r}", option="dtype")
        if self.results_on not in RESULTS_ON:
            raise InputError(f"results_on must be 'all' or 'rank0', got {self.results_on!r}", option="results_on")
        put("max_tokens", optional_positive_int(self.max_tokens, "max_tokens"))
        if not isinstance(self.distributed, bool):
            raise InputTypeError(
                f"distributed must be True or False, got {describe(self.distributed)}", option="distributed"
            )
        if self.device is not None:
            put("device", device_name(self.device))
        if self.max_length is not None:
            if whole_number(self.max_length) is None or self.max_length < 2:
                raise InputError(
                    f"max_length must be an integer of at least 2, got {self.max_length!r}", option="max_length"
                )
            put("max_length", whole_number(self.max_length))
        put(
            "chat_settings",
            chat_settings(
                self.chat,
                self.instruction,
                self.system,
                template=self.template,
                compatibility=self.compatibility,
            ),
        )
        if self.compatibility is not None and self.compatibility not in COMPATIBILITY:
            raise InputError(
                f"compatibility must be None or one of {COMPATIBILITY}, got {self.compatibility!r}",
                option="compatibility",
            )
        if self.template is not None:
            template_sides(self.template)

    @classmethod
    def resolve(cls, options: EngineOptions | None = None, /, **keywords: Any) -> EngineOptions:
        """The settings of a call that takes `options` or the same settings as keywords (never both)."""
        if options is None:
            return cls(**keywords)
        if not isinstance(options, EngineOptions):
            raise InputTypeError(f"options must be an EngineOptions, got {describe(options)}", option="options")
        if keywords:
            raise InputTypeError(
                f"pass the engine's settings as an EngineOptions or as keywords, not both (got an EngineOptions and "
                f"{sorted(keywords)})",
                option="options",
            )
        return options

    def replace(self, **changes: Any) -> EngineOptions:
        """A copy with some settings changed, checked again."""
        return dataclasses.replace(self, **changes)


ENGINE_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(EngineOptions) if f.init)


def _checked_directions(directions: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """The directions asked for, in DIRECTIONS order, each once (None: every direction the inputs allow)."""
    if directions is None:
        return None
    requested = [directions] if isinstance(directions, str) else text_list(directions, "directions")
    if not requested:
        raise InputError(
            "directions is empty; leave it out to compute every direction the inputs allow", option="directions"
        )
    for index, direction in enumerate(requested):
        if direction not in DIRECTIONS:
            raise InputError(f"directions[{index}] is {direction!r}; choose from {DIRECTIONS}", option="directions")
        if direction in requested[:index]:
            raise InputError(
                f"directions[{index}] is {direction!r} again; give each direction once", option="directions"
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
                    f"unknown prompt set {prompt!r}; the sets are {tuple(PROMPT_SETS)}. "
                    f"To use it as a prompt phrase, pass it in a list: prompt=[{prompt!r}] (on the command line: "
                    f"--prompt-phrases {prompt})",
                    option="prompt",
                )
            return PROMPT_SETS[prompt], f"{prompt}({len(PROMPT_SETS[prompt])})"
        phrases = [check_text(prompt, "prompt")]
    else:
        phrases = text_list(prompt, "prompt")
        if not phrases:
            raise InputError("prompt is an empty list; pass None for no prompt", option="prompt")
    for index, phrase in enumerate(phrases):
        if not phrase.strip():
            raise InputError(f"prompt[{index}] is blank", option="prompt")
    digest = hashlib.sha1("\n".join(phrases).encode("utf-8")).hexdigest()[:8]
    return tuple(phrases), f"custom-{digest}({len(phrases)})"
