"""BARTScore as an `evaluate` metric, and the Hub entry point of this project.

    bartscore = evaluate.load("./bartscore.py")            # or "vanilla", "cnn-para", a Hub id, a directory
    bartscore.compute(predictions=[...], references=[...], sources=[...])

A thin `evaluate.Metric` over the `bart_score` library, which holds the engine, the directions, the corpus tools and
the command line (``python bartscore.py score ...`` runs that command line, as ``bartscore`` and
``python -m bart_score`` do)."""

from __future__ import annotations

if __name__ == "__main__":  # the command line, without loading evaluate first
    from bart_score.cli import main

    raise SystemExit(main())

import hashlib
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import datasets
import evaluate

# "# From: bartscore" is evaluate's hint for a library import: without bart_score, evaluate.load asks for
# `pip install bartscore` (the distribution's name). It reads the whole rest of the line, so no other comment
# may follow it; BARTScorer and score_dataset (the names the original module offered) are kept by __all__.
from bart_score import BARTScorer, score_dataset  # From: bartscore
from bart_score.errors import InputError, InputTypeError  # From: bartscore
from bart_score.inputs import describe, reference_lists, text_list  # From: bartscore
from bart_score.options import ENGINE_OPTION_NAMES, OPTION_NAMES, EngineOptions, ScoringOptions  # From: bartscore
from bart_score.variants import DEFAULT_CHECKPOINT  # From: bartscore

__all__ = ["BARTScore", "BARTScorer", "score_dataset"]

_CITATION = """\
@inproceedings{yuan2021bartscore,
  title     = {{BARTScore}: Evaluating Generated Text as Text Generation},
  author    = {Weizhe Yuan and Graham Neubig and Pengfei Liu},
  booktitle = {Advances in Neural Information Processing Systems},
  volume    = {34},
  pages     = {27263--27277},
  year      = {2021},
  url       = {https://arxiv.org/abs/2106.11520}
}
"""

_DESCRIPTION = """\
BARTScore judges a generated text by how likely a pre-trained sequence-to-sequence model (BART) finds it given
another text: the mean log-probability of its tokens. Four directions: faithfulness (source -> prediction),
precision (reference -> prediction), recall (prediction -> reference) and f_score (mean of precision and recall).
Scores are negative; higher is better. Configurations: "cnn" (default, facebook/bart-large-cnn, as the original
code), "vanilla" (facebook/bart-large, the paper's plain BARTScore), "cnn-para" (CNN plus the paraphrase-tuned
weights, read from the file named by $BARTSCORE_PARA_WEIGHTS), the other families' named checkpoints ("mbart50",
"mt5", "flan-t5", "opt", "qwen"), or any Hub id or local directory of a BART, mBART, T5/mT5/Flan-T5, PEGASUS,
Marian or decoder-only causal language model checkpoint (T5Score- and GPTScore-style scoring with the same engine).
"""

_KWARGS_DESCRIPTION = """
Computes BARTScore in every direction the inputs allow.

Args:
    predictions (list of str): the generated texts to judge.
    references (list of str, or list of lists of str): one reference, or several, per prediction; the number may
        differ from one prediction to the next.
    sources (list of str): the source (input) text of each prediction.
    Each may also be a tuple or a one-dimensional array-like (numpy array, pandas Series, datasets column, pyarrow
    array), taken as its values (references also as a two-dimensional array: a row of references per prediction). A
    table (pandas DataFrame, datasets.Dataset, pyarrow Table) is refused with the column to pass: iterating over one
    gives its column names, not its texts.
    directions (str or list of str): any of "faithfulness" (needs sources), "precision", "recall", "f_score" (need
        references). Default: every direction the given inputs allow. Only these are computed.
    aggregation ("mean" or "max"): how precision and recall combine over several references (default "mean", as the
        paper's scripts); f_score is the mean of the aggregated precision and recall.
    prompt (str or list of str): a paper prompt set by name ("summary": 70 prompts, "paraphrase": 34, "mt": 1), one
        prompt phrase, or a list of phrases. A prompted score is the average over the prompts. A lowercase single word
        is read as a set name; to use one as a phrase, put it in a list.
    prompt_side ("encoder" or "decoder"): "encoder" appends " <prompt>," to the conditioning text, "decoder" prepends
        "<prompt>, " to the scored text (the original code's strings). Default "encoder".
    rescale ("baseline" or "corpus"): also return rescaled scores, on a scale where 0 is the mean score of an
        unrelated text and 1 that of a copy (a text given itself). "baseline" takes the two points from a baseline
        file made by `bartscore baseline` (baseline, or the default location for this model and settings; an error
        gives the command that makes it); "corpus" computes them from the texts being scored, in the same pass
        (targets given texts of other rows, and targets given themselves), so no file is needed, but the scale is
        comparable only within these inputs. The map is linear per direction, so rankings and correlations do not
        change. Default: no rescaling.
    baseline (str): the baseline file (implies rescale="baseline").
    corpus_points (bart_score.CorpusPoints or dict): with rescale="corpus", the sampling: pairs (at most this many
        extra pairs, default 1000), seed (default 12345), unrelated_texts (fixed unrelated conditions instead of other
        rows' texts, for inputs that all share one source).
    rescale_with_baseline (bool), baseline_path (str): bert_score's names for rescale="baseline" and baseline.
    batch_size (int): at most this many pairs per model batch (default: no limit but max_tokens).
    max_tokens (int): padded tokens per model batch (default: the engine's, 8192 on a GPU and 2048 on a CPU); lower
        it when memory is short.
    long_source ("windows" or None): "windows" scores faithfulness sentence by sentence, each prediction sentence
        given the best of windows_k windows of the source most like it (LongDocFACTScore; docs/long-documents.md),
        for sources longer than the model reads. Default None: the source is one condition, truncated.
    windows_k (int): windows per prediction sentence (default 3).
    window ("longdocfactscore" or int): the window rule: LongDocFACTScore's (the sentence and the one before it), or
        the sentence and that many neighbours on each side (default "longdocfactscore").
    retriever (str): "bm25", or a sentence-embedding encoder checkpoint (default
        "sentence-transformers/bert-base-nli-mean-tokens").
    max_sentences (int): long_source="windows" refuses a prediction or source of more sentences (default 10000).
    show_progress (bool): a progress bar on stderr (default False).

Returns:
    faithfulness, precision, recall, f_score: one score per prediction, in input order, for each direction computed.
    faithfulness_mean, ...: the mean over predictions of each direction computed.
    faithfulness_rescaled, ..., faithfulness_rescaled_mean, ...: when rescaling, beside the raw scores.
    reference_points: when rescaling, {direction: {"unrelated": ..., "copy": ...}} in raw scores.
    faithfulness_sentences, faithfulness_windows: with long_source="windows", per prediction the sentences scored and
        the distinct source windows they were scored against.
    signature: the settings that produced the numbers, for reproducibility (with rescale:<baseline or corpus id>).

Pending batches: add/add_batch keep examples for the next compute, which scores and clears them. A compute that
fails (a bad option, bad new inputs, an error while scoring, an interrupt) leaves them as they were, so that the call
can be repeated; inputs passed to that failed compute itself are not kept.

In evaluate.combine: combine passes a metric only the inputs its features name. This metric names predictions and
references unless loaded with inputs="sources" (predictions and sources) or inputs="both"; called directly, it takes
any of them whatever it was loaded with.

Examples:
    >>> import evaluate
    >>> bartscore = evaluate.load("bartscore")  # "cnn": facebook/bart-large-cnn
    >>> results = bartscore.compute(predictions=["This is fun."], sources=["This is interesting."])
    >>> sorted(results)
    ['faithfulness', 'faithfulness_mean', 'signature']
    >>> results["faithfulness"][0] < 0  # a mean log-probability: negative, and higher is better
    True
    >>> results = bartscore.compute(
    ...     predictions=["There is a cat on the mat.", "Look! a wonderful day."],
    ...     references=[["The cat is playing on the mat.", "A cat sits on a mat."], "Today is a wonderful day"],
    ...     directions=["recall", "f_score"], aggregation="max", prompt="mt", prompt_side="decoder")
    >>> [len(results["recall"]), len(results["f_score"])]
    [2, 2]
    >>> results["signature"].split("|")[1:5]
    ['dirs:recall+f_score', 'agg:max', 'nrefs:1-2', 'prompt:mt(1)@decoder']
    >>> for batch in (["A cat.", "A dog."], ["A day."]):
    ...     bartscore.add_batch(predictions=batch, sources=["A cat sat on a mat."] * len(batch))
    >>> len(bartscore.compute()["faithfulness"])
    3
"""

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
ENGINE_SETTINGS = ENGINE_OPTION_NAMES - {"checkpoint"}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BARTScore(evaluate.Metric):
    """The BARTScore metric. Init options (also through ``evaluate.load``): the engine's settings (bart_score's
    EngineOptions but its checkpoint, which the configuration name gives): device, dtype, max_length, max_tokens,
    distributed, results_on, source_lang and target_lang (mBART), template and compatibility (causal LMs), chat,
    instruction and system (chat-format scoring of causal LMs with a chat template); see ``BARTScorer``; and inputs
    ("references", the default, "sources" or "both": the inputs the metric asks evaluate.combine for). Under
    torch.distributed, each rank computes on its own examples and every rank (or rank 0) gets the scores of all
    ranks' examples, rank 0's first."""

    def __init__(self, config_name: str | None = None, *, inputs: str = "references", **kwargs: Any) -> None:
        if inputs not in _INPUTS:
            raise InputError(f"inputs must be one of {tuple(_INPUTS)}, got {inputs!r}")
        self._inputs = inputs  # read by _info, which evaluate's __init__ calls
        self.model_name = checked_config_name(config_name)
        # The engine's settings are checked here, before evaluate's own setup; the rest of kwargs are evaluate's.
        settings = {name: kwargs.pop(name) for name in sorted(ENGINE_SETTINGS & set(kwargs))}
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
        self._scorer: BARTScorer | None = None
        self._inputs_given: dict[str, bool] | None = None  # which of references/sources the pending batches carry
        self._pending_count = 0  # examples in the pending batches

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/neulab/BARTScore",
            license="Apache-2.0 (this implementation; each checkpoint has its own license)",
            inputs_description=_KWARGS_DESCRIPTION,
            features=[_FEATURE_VARIANTS[self._inputs]]
            + [features for option, features in _FEATURE_VARIANTS.items() if option != self._inputs],
            codebase_urls=["https://github.com/neulab/BARTScore"],
            reference_urls=["https://arxiv.org/abs/2106.11520"],
        )

    def _download_and_prepare(self, dl_manager: Any) -> None:
        # The model loads once, here at evaluate.load time, so that a missing checkpoint is reported there.
        assert self.scorer is not None

    @property
    def scorer(self) -> BARTScorer:
        """The engine, loaded on first use and kept for every later compute."""
        if self._scorer is None:
            self._scorer = BARTScorer(self.engine_options)
        return self._scorer

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
            raise InputTypeError(f"prediction is {describe(prediction)}; expected a string")
        if source is not None and not isinstance(source, str):
            raise InputTypeError(f"source is {describe(source)}; expected a string")
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
                raise InputTypeError("predictions must be a list of strings, got None")
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
                result = super().compute(options=options)
            except BaseException:
                self._restore_pending(*pending)
                raise
            self._inputs_given, self._pending_count = None, 0
            return result

    def _compute(
        self,
        predictions: Sequence[str],
        references: Sequence[str | Sequence[str]] | None = None,
        sources: Sequence[str] | None = None,
        options: ScoringOptions | None = None,
    ) -> dict[str, Any] | None:
        group = self.scorer._process_group()
        if group:
            given = {"references": references is not None, "sources": sources is not None}
            predictions, references, sources, given = group.gather_examples(
                predictions,
                # given[...] says which are not None, which mypy does not follow.
                references if given["references"] else [[] for _ in predictions],  # type: ignore[arg-type]
                sources if given["sources"] else ["" for _ in predictions],  # type: ignore[arg-type]
                given,
                self.scorer.device,
            )
            references = references if given["references"] else None
            sources = sources if given["sources"] else None
        return self.scorer.score_directions(predictions, references=references, sources=sources, options=options)

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
        raise InputTypeError(f"compute got unexpected options {unknown}; its options are {list(_COMPUTE_OPTIONS)}")
    options = dict(options)
    with_baseline = options.pop("rescale_with_baseline", False)
    if not isinstance(with_baseline, bool):
        raise InputTypeError(f"rescale_with_baseline must be True or False, got {describe(with_baseline)}")
    path = options.pop("baseline_path", None)
    if path is not None:
        if options.get("baseline") is not None:
            raise InputError("baseline_path is bert_score's name for baseline; give one of them")
        if not isinstance(path, (str, os.PathLike)):
            raise InputTypeError(f"baseline_path must be a file path, got {describe(path)}")
        options["baseline"] = path  # which implies rescale="baseline"
    if with_baseline:
        if options.get("rescale") not in (None, "baseline"):
            raise InputError(
                f"rescale_with_baseline=True is bert_score's name for rescale='baseline', and this call asks for "
                f"rescale={options['rescale']!r}; give one of them"
            )
        options["rescale"] = "baseline"
    return ScoringOptions(**options)


def _input_names(given: Mapping[str, bool]) -> str:
    names = [name for name, present in given.items() if present]
    return " and ".join(f"{name}=" for name in names) or "predictions only"
