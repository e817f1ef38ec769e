"""The plumbing of the BARTScore ``evaluate`` metric: ``ScoringMetric``, the evaluate.Metric that bartscore.py's
metric subclasses with its card (the description, the citation, _info) and _compute.

It takes the engine's settings as init options (one EngineOptions), keeps pending batches of predictions with their
references and/or sources (feature variants named by the inputs a batch carries), checks compute's options as one
ScoringOptions before anything is scored, and puts the pending batches back after a failed compute. Instances with
the same checkpoint and engine settings share one engine in a process (bart_score.integrations.shared_engines).
evaluate's configuration name names the checkpoint: checked_config_name refuses one that cannot, and cache_name keeps it
from steering evaluate's cache path.

Errors reach the metric's caller as bart_score raises them, said in the library's words (bart_score.messages.KEYWORDS),
which are the metric's own: its init options are EngineOptions' fields and its compute options ScoringOptions' (and
bert_score's rescale_with_baseline and baseline_path, which its own errors name as given), its inputs are the
library's predictions, references and sources, and a baseline recipe is the library calls that a Python caller makes.
The checkpoint, which the configuration name gives, is named by its value ("the checkpoint 'cnn'"): a configuration
name that could not name one is refused by checked_config_name, in the configuration name's words, before any
library check would name the checkpoint as an option.

This module imports evaluate and datasets; nothing else in bart_score imports it, so the package stays light."""

from __future__ import annotations

import abc
import hashlib
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import datasets
import evaluate

from ..errors import InputError, InputTypeError
from ..inputs import describe, reference_lists, text_list
from ..options import ENGINE_OPTION_NAMES, OPTION_NAMES, EngineOptions, ScoringOptions
from ..scoring.engine import BARTScorer
from ..variants import DEFAULT_CHECKPOINT
from .shared_engines import SharedEngine, shared_engine

# bert_score's names, kept for its users: rescale_with_baseline=True is rescale="baseline", baseline_path is baseline.
_ALIASES = ("rescale_with_baseline", "baseline_path")
_INPUT_FEATURES = {
    "predictions": datasets.Value("string"),
    "references": datasets.List(datasets.Value("string")),
    "sources": datasets.Value("string"),
}
# The feature variants, one per kind of input a batch may carry (as evaluate's bertscore offers one per reference
# type); the first one listed is what the metric asks evaluate.combine for.
_INPUTS = {"references": ("references",), "sources": ("sources",), "both": ("references", "sources")}
_FEATURE_VARIANTS = {
    option: datasets.Features({name: _INPUT_FEATURES[name] for name in ("predictions", *names)})
    for option, names in _INPUTS.items()
}
_COMPUTE_OPTIONS = (*sorted(OPTION_NAMES), *_ALIASES)
# The init options that are the engine's (its checkpoint is the configuration name).
_ENGINE_SETTINGS = ENGINE_OPTION_NAMES - {"checkpoint"}


class ScoringMetric(evaluate.Metric, metaclass=abc.ABCMeta):
    """An evaluate.Metric over BARTScorer. Init options: the engine's settings (EngineOptions' fields but checkpoint,
    which the configuration name gives) and inputs ("references", the default, "sources" or "both": the inputs the
    metric asks evaluate.combine for). A subclass gives _info (its features: feature_variants()) and _compute.
    Abstract, so that evaluate.load, which takes the first metric class it finds in the metric's module, passes it
    over for the subclass."""

    @abc.abstractmethod
    def _info(self) -> evaluate.MetricInfo: ...

    @abc.abstractmethod
    def _compute(
        self,
        predictions: Sequence[str],
        references: Sequence[str | Sequence[str]] | None = None,
        sources: Sequence[str] | None = None,
        options: ScoringOptions | None = None,
    ) -> dict[str, Any] | None: ...

    def __init__(self, config_name: str | None = None, *, inputs: str = "references", **kwargs: Any) -> None:
        if inputs not in _INPUTS:
            raise InputError(f"inputs must be one of {tuple(_INPUTS)}, got {inputs!r}", option="inputs")
        self._inputs = inputs  # read by _info, which evaluate's __init__ calls
        self.model_name = checked_config_name(config_name)
        # The engine's settings are checked here, before evaluate's own setup; the rest of kwargs are evaluate's.
        settings = {name: kwargs.pop(name) for name in sorted(_ENGINE_SETTINGS & set(kwargs))}
        checkpoint = DEFAULT_CHECKPOINT if self.model_name == "default" else self.model_name
        engine_options = EngineOptions(checkpoint=checkpoint, **settings)
        super().__init__(config_name=cache_name(self.model_name), **kwargs)
        # Under evaluate's own multi-process mode (num_process > 1) only process 0 scores, so it must not wait
        # for the other ranks; otherwise ranks gather their examples and share the scoring (docs/scaling.md).
        if self.num_process > 1:
            engine_options = engine_options.replace(distributed=False)
        self.engine_options = engine_options
        # add_batch and compute run one at a time per instance: the pending batches and evaluate's cache files are
        # the instance's, so threads sharing it would otherwise score one another's examples and leave it unusable.
        # Reentrant, since compute adds its own predictions through add_batch.
        self._calls = threading.RLock()
        self._engine: SharedEngine | None = None
        self._inputs_given: dict[str, bool] | None = None  # which of references/sources the pending batches carry
        self._pending_count = 0  # examples in the pending batches

    def feature_variants(self) -> list[datasets.Features]:
        """The features for _info: a variant per kind of input, the one `inputs` names first (which evaluate.combine
        asks for)."""
        return [_FEATURE_VARIANTS[self._inputs]] + [
            features for option, features in _FEATURE_VARIANTS.items() if option != self._inputs
        ]

    def _download_and_prepare(self, dl_manager: Any) -> None:
        # The model loads once, here at evaluate.load time, so that a missing checkpoint is reported there.
        assert self.scorer is not None

    @property
    def scorer(self) -> BARTScorer:
        """The engine, loaded on first use and kept for every later compute."""
        return self._shared_engine().scorer

    def _shared_engine(self) -> SharedEngine:
        """The engine with the lock it scores under: one for every instance (and reward) of this process that asks
        for the same checkpoint and settings (bart_score.integrations.shared_engines), so that a second instance adds no
        model."""
        if self._engine is None:
            self._engine = shared_engine(self.engine_options)
        return self._engine

    def add_batch(
        self,
        *,
        predictions: Sequence[str] | None = None,
        references: Sequence[str | Sequence[str]] | None = None,
        sources: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Adds a batch of predictions with their references and/or sources (as in compute) for a later compute."""
        with self._calls:  # one call at a time per instance (see __init__)
            if kwargs:
                raise InputTypeError(
                    f"add_batch got unexpected inputs {sorted(kwargs)}; it takes predictions, references and sources"
                )
            predictions = text_list(predictions, "predictions")
            given = {"references": references is not None, "sources": sources is not None}
            if not any(given.values()):
                raise InputError(
                    "BARTScore needs sources=, references= or both, besides predictions (in evaluate.combine, load the "
                    'metric with inputs="sources" or inputs="both" so that combine passes sources on)'
                )
            if self._inputs_given is not None and given != self._inputs_given:
                raise InputError(
                    f"this batch gives {_input_names(given)} but earlier batches gave "
                    f"{_input_names(self._inputs_given)}; give the same inputs in every add/add_batch call"
                )
            batch: dict[str, Any] = {"predictions": predictions}
            if references is not None:
                batch["references"] = reference_lists(references, "references", len(predictions))
            if sources is not None:
                batch["sources"] = text_list(sources, "sources", len(predictions))
            pending = self._inputs_given
            self._inputs_given = given  # the feature names evaluate's add_batch writes
            try:
                super().add_batch(**batch)
            except BaseException:
                self._inputs_given = pending
                raise
            self._pending_count += len(predictions)

    def add(
        self,
        *,
        prediction: str | None = None,
        reference: str | Sequence[str] | None = None,
        source: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Adds one prediction with its reference(s) and/or source for a later compute."""
        if not isinstance(prediction, str):
            raise InputTypeError(f"prediction is {describe(prediction)}; expected a string", option="prediction")
        if source is not None and not isinstance(source, str):
            raise InputTypeError(f"source is {describe(source)}; expected a string", option="source")
        if reference is not None and not isinstance(reference, str):
            reference = text_list(reference, "reference")  # several references: a list of strings, named as given
        self.add_batch(
            predictions=[prediction],
            references=None if reference is None else [reference],
            sources=None if source is None else [source],
            **kwargs,
        )

    def compute(
        self,
        *,
        predictions: Sequence[str] | None = None,
        references: Sequence[str | Sequence[str]] | None = None,
        sources: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any] | None:
        """Scores the given inputs, or those added with add/add_batch, and returns the results dict. Every option is
        checked before anything is scored; a failed compute leaves the pending batches as they were."""
        with self._calls:  # one call at a time per instance (see __init__)
            if predictions is None and (references is not None or sources is not None):
                raise InputTypeError("predictions must be a list of strings, got None", option="predictions")
            given = self._inputs_given
            if predictions is not None:
                given = {"references": references is not None, "sources": sources is not None}
            if given is None:
                raise InputError(
                    "nothing to score: pass predictions= (with sources= and/or references=), or call add/add_batch "
                    "first"
                )
            options = compute_options(kwargs)
            options.directions_for(has_references=given["references"], has_sources=given["sources"])
            pending = (self._inputs_given, self._pending_count)
            if predictions is not None:
                self.add_batch(predictions=predictions, references=references, sources=sources)
            try:
                with self._shared_engine().lock:  # instances that share the engine score in turn
                    result = super().compute(options=options)
            except BaseException:
                self._restore_pending(*pending)
                raise
            self._inputs_given, self._pending_count = None, 0
            return result

    # -----------------------------------------------------------------------------------------------------------------
    # evaluate's internals. evaluate.Metric offers no way to name the inputs a batch carries or to put pending
    # batches back after a failed compute, so these overrides use its private methods and attributes, as checked
    # against the evaluate versions in EVALUATE_CHECKED. tests/test_evaluate_internals.py fails loudly when an
    # evaluate release no longer has what they rely on (EVALUATE_INTERNALS).

    def _feature_names(self) -> list[str]:
        """The inputs of the pending batches; with none pending, those of the first feature variant (which
        evaluate.combine asks for)."""
        if self._inputs_given is None:
            return super()._feature_names()
        return ["predictions", *(name for name, present in self._inputs_given.items() if present)]

    def _infer_feature_from_batch(self, batch: Mapping[str, Any]) -> datasets.Features:
        return next(features for features in _FEATURE_VARIANTS.values() if set(features) == set(batch))

    def _restore_pending(self, inputs_given: dict[str, bool] | None, count: int) -> None:
        """After a failed compute: the examples that were pending before it, and only those, are pending again.
        evaluate has by then read them back from its cache files (self.data); those files are released as after a
        successful compute, and the examples written anew."""
        kept = None
        if self.data is not None and count:
            assert inputs_given is not None  # pending examples were added with their inputs
            names = ["predictions", *(name for name, present in inputs_given.items() if present)]
            kept = {name: self.data[name][:count] for name in names}
        if self.buf_writer is None and self.filelocks:
            for filelock, path in zip(self.filelocks, self.file_paths):
                os.remove(path)
                filelock.release()
        for name in _PENDING_STATE:
            setattr(self, name, None)
        self._inputs_given, self._pending_count = None, 0
        if kept:
            self.add_batch(**kept)


# evaluate.Metric's pending-batch state, reset after a failed compute as evaluate resets it after a successful one.
_PENDING_STATE = (
    "writer",
    "buf_writer",
    "data",
    "filelock",
    "filelocks",
    "file_paths",
    "cache_file_name",
    "selected_feature_format",
)
# What the overrides above rely on: evaluate.Metric's private methods, and the attributes a metric has once built.
EVALUATE_INTERNALS = {"methods": ("_feature_names", "_infer_feature_from_batch"), "attributes": _PENDING_STATE}
EVALUATE_CHECKED = ("0.4.6",)


# The longest name a file system gives a file or folder, in bytes (NAME_MAX on Linux and macOS, 255 UTF-16 units on
# Windows): a Hub id's parts and a folder's names are no longer.
_NAME_BYTES = 255
# The config name's share of evaluate's cache path: a plain name of up to this many characters is kept as it is.
_CACHE_NAME_LENGTH = 64


def checked_config_name(config_name: Any) -> str:
    """evaluate.load's configuration name ("default" when none), which names the checkpoint: refused when it cannot
    be one, before evaluate builds a cache path from it."""
    if config_name is None or config_name == "":
        return "default"
    if not isinstance(config_name, str):
        raise InputTypeError(
            f"the configuration name (evaluate.load's second argument) must be a string naming the checkpoint, got "
            f"{describe(config_name)}"
        )
    longest = max(config_name.replace("\\", "/").split("/"), key=lambda part: len(part.encode("utf-8", "replace")))
    if len(longest.encode("utf-8", "replace")) > _NAME_BYTES:
        raise InputError(
            f"the configuration name (evaluate.load's second argument) names the checkpoint: a configuration such as "
            f"'cnn', a Hub id or a local folder, and it holds a name of {len(longest)} characters "
            f"({longest[:20]!r}...), longer than a Hub id's parts and a folder's names can be ({_NAME_BYTES} bytes)"
        )
    return config_name


def cache_name(model_name: str) -> str:
    """The config name evaluate joins into its cache path: a plain short name as it is; a path or Hub id, which must
    not steer the cache path, as its last characters in safe form and a digest of the whole name."""
    if re.fullmatch(rf"[\w.-]{{1,{_CACHE_NAME_LENGTH}}}", model_name, flags=re.ASCII):
        return model_name
    digest = hashlib.sha1(model_name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    tail = re.sub(r"[^\w.-]+", "_", model_name).strip("_")[-(_CACHE_NAME_LENGTH - len(digest) - 1) :]
    return f"{tail}-{digest}" if tail else digest


def compute_options(options: Mapping[str, Any]) -> ScoringOptions:
    """compute's options as one ScoringOptions, checked before anything is scored or any batch is touched; bert_score's
    rescale_with_baseline and baseline_path are read as rescale="baseline" and baseline."""
    unknown = sorted(set(options) - set(_COMPUTE_OPTIONS))
    if unknown:
        raise InputTypeError(
            f"compute got unexpected options {unknown}; its options are {list(_COMPUTE_OPTIONS)}", option="options"
        )
    options = dict(options)
    with_baseline = options.pop("rescale_with_baseline", False)
    if not isinstance(with_baseline, bool):
        raise InputTypeError(
            f"rescale_with_baseline must be True or False, got {describe(with_baseline)}",
            option="rescale_with_baseline",
        )
    path = options.pop("baseline_path", None)
    if path is not None:
        if options.get("baseline") is not None:
            raise InputError(
                "baseline_path is bert_score's name for baseline; give one of them", option="baseline_path"
            )
        if not isinstance(path, (str, os.PathLike)):
            raise InputTypeError(f"baseline_path must be a file path, got {describe(path)}", option="baseline_path")
        options["baseline"] = path  # which implies rescale="baseline"
    if with_baseline:
        if options.get("rescale") not in (None, "baseline"):
            raise InputError(
                f"rescale_with_baseline=True is bert_score's name for rescale='baseline', and this call asks for "
                f"rescale={options['rescale']!r}; give one of them",
                option="rescale_with_baseline",
            )
        options["rescale"] = "baseline"
    return ScoringOptions(**options)


def _input_names(given: Mapping[str, bool]) -> str:
    names = [name for name, present in given.items() if present]
    return " and ".join(f"{name}=" for name in names) or "predictions only"
