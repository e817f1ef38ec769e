"""The plumbing of the BARTScore ``evaluate`` metric: ``ScoringMetric``, the evaluate.Metric that bartscore.py's
metric subclasses with its card (the description, the citation, _info) and _compute.

It takes the engine's settings as init options (one EngineOptions), keeps pending batches of predictions with their
references and/or sources itself (in memory, checked as they are added; a feature variant per kind of input that a
batch may carry), checks compute's options as one ScoringOptions before anything is scored, and clears the pending
batches only once their scores are back, so that a failed compute leaves them as they were. It relies on
evaluate.Metric's public API only (add_batch, compute, download_and_prepare, and the _info and _compute that evaluate
asks a metric to define), so that an evaluate release cannot break it by changing what evaluate keeps private.
Instances with the same checkpoint and engine settings share one engine in a process
(bart_score.integrations._shared_engines).
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
import contextlib
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
from ._shared_engines import SharedEngine, shared_engine

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
    over for the subclass.

    It uses evaluate.Metric's public API only: the pending batches are the metric's own, in memory, checked as they
    are added, and compute hands them to _compute (under evaluate's multi-process mode, to evaluate's add_batch and
    compute, whose files gather every process's examples for process 0)."""

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
        # add_batch and compute run one at a time per instance: the pending batches are the instance's, so threads
        # sharing it would otherwise score one another's examples.
        self._calls = threading.Lock()
        self._engine: SharedEngine | None = None
        self._pending: list[_Batch] = []  # the batches added since the last successful compute, checked
        self._inputs_given: dict[str, bool] | None = None  # which of references/sources the pending batches carry

    def feature_variants(self) -> list[datasets.Features]:
        """The features for _info: a variant per kind of input, the one `inputs` names first (which evaluate.combine
        asks for)."""
        return [_FEATURE_VARIANTS[self._inputs]] + [
            features for option, features in _FEATURE_VARIANTS.items() if option != self._inputs
        ]

    def download_and_prepare(self, *args: Any, **kwargs: Any) -> None:
        """evaluate.load's last step. The model loads here, once, so that a missing checkpoint is reported by
        evaluate.load."""
        super().download_and_prepare(*args, **kwargs)
        self._shared_engine()

    @property
    def scorer(self) -> BARTScorer:
        """The engine, loaded on first use and kept for every later compute."""
        return self._shared_engine().scorer

    def _shared_engine(self) -> SharedEngine:
        """The engine with the lock it scores under: one for every instance (and reward) of this process that asks
        for the same checkpoint and settings (bart_score.integrations._shared_engines), so that a second instance adds
        no model."""
        if self._engine is None:
            self._engine = shared_engine(self.engine_options)
        return self._engine

    def __len__(self) -> int:
        """The examples pending for the next compute."""
        return sum(len(batch["predictions"]) for batch in self._pending)

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
            self._pending.append(self._checked_batch(predictions, references, sources, kwargs))
            self._inputs_given = _inputs_of(self._pending[-1])

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
            batches = self._pending
            if predictions is not None:
                batches = [*batches, self._checked_batch(predictions, references, sources, {})]
            # The pending batches stay until the scores are back: a compute that fails leaves them as they were.
            result = self._score(_joined(batches), options)
            self._pending, self._inputs_given = [], None
            return result

    def _score(self, inputs: _Batch, options: ScoringOptions) -> dict[str, Any] | None:
        """The scores of these examples: from _compute here, or under evaluate's multi-process mode from evaluate's
        compute, which gathers every process's examples for process 0 and returns None to the others."""
        if self.num_process == 1:
            with self._shared_engine().lock:  # instances that share the engine score in turn
                return self._compute(**inputs, options=options)
        if inputs["predictions"]:
            super().add_batch(**inputs)
        with self._shared_engine().lock if self.process_id == 0 else contextlib.nullcontext():
            return super().compute(options=options)

    def _checked_batch(
        self,
        predictions: Sequence[str] | None,
        references: Sequence[str | Sequence[str]] | None,
        sources: Sequence[str] | None,
        unexpected: Mapping[str, Any],
    ) -> _Batch:
        """A batch's inputs, checked as add_batch takes them, and against the pending batches' inputs."""
        if unexpected:
            raise InputTypeError(
                f"add_batch got unexpected inputs {sorted(unexpected)}; it takes predictions, references and sources"
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
        loaded_for = {name: name in _INPUTS[self._inputs] for name in given}
        if self.num_process > 1 and given != loaded_for:
            raise InputError(
                f"under evaluate's multi-process mode (num_process={self.num_process}) the metric takes the inputs it "
                f"was loaded for ({_input_names(loaded_for)}), and this batch gives {_input_names(given)}",
                remedy=f"load it with inputs={_inputs_option(given)!r}",
            )
        batch: _Batch = {"predictions": predictions}
        if references is not None:
            batch["references"] = reference_lists(references, "references", len(predictions))
        if sources is not None:
            batch["sources"] = text_list(sources, "sources", len(predictions))
        return batch


# A batch of examples as the metric keeps it: predictions, and references (a list per example) and/or sources.
_Batch = dict[str, list[Any]]


def _inputs_of(batch: _Batch) -> dict[str, bool]:
    return {"references": "references" in batch, "sources": "sources" in batch}


def _inputs_option(given: Mapping[str, bool]) -> str:
    """The `inputs` init option that names these inputs."""
    return "both" if all(given.values()) else next(name for name, present in given.items() if present)


def _joined(batches: Sequence[_Batch]) -> _Batch:
    """The batches' examples as one batch, in the order they were added."""
    return {name: [item for batch in batches for item in batch[name]] for name in batches[0]}


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
