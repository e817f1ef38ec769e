"""BARTScore as an `evaluate` metric, and the Hub entry point of this project.

    bartscore = evaluate.load("./bartscore.py")            # or "vanilla", "cnn-para", a Hub id, a directory
    bartscore.compute(predictions=[...], references=[...], sources=[...])

A thin `evaluate.Metric` over the `bart_score` library, which holds the engine, the directions, the corpus tools and
the command line (``python bartscore.py score ...`` runs that command line, as ``bartscore`` and
``python -m bart_score`` do)."""

if __name__ == "__main__":  # the command line, without loading evaluate first
    from bart_score.cli import main

    raise SystemExit(main())

import re

import datasets
import evaluate

from bart_score import BARTScorer, score_dataset  # noqa: F401  (names the original module offered)
from bart_score.directions import resolve_options
from bart_score.inputs import describe, reference_lists, text_list
from bart_score.rescale import DEFAULT_PAIRS, DEFAULT_SEED, resolve_rescaling
from bart_score.variants import DEFAULT_CHECKPOINT, DEFAULT_MAX_TOKENS

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
    directions (str or list of str): any of "faithfulness" (needs sources), "precision", "recall", "f_score" (need
        references). Default: every direction the given inputs allow. Only these are computed.
    aggregation ("mean" or "max"): how precision and recall combine over several references (default "mean", as the
        paper's scripts); f_score is the mean of the aggregated precision and recall.
    prompt (str or list of str): a paper prompt set by name ("summary": 70 prompts, "paraphrase": 34, "mt": 1), one
        prompt phrase, or a list of phrases. A prompted score is the average over the prompts. A lowercase single word
        is read as a set name; to use one as a phrase, put it in a list.
    prompt_side ("encoder" or "decoder"): "encoder" appends " <prompt>," to the conditioning text, "decoder" prepends
        "<prompt>, " to the scored text (the original code's strings). Default "encoder".
    rescale_with_baseline (bool): also return rescaled scores, on a scale where 0 is the mean score of an unrelated
        text and 1 that of a copy (a text given itself), taken from a baseline file made by `bartscore baseline`:
        baseline_path, or the default location for this model and settings (an error gives the command that makes
        it). The map is linear per direction, so rankings and correlations do not change. Default False.
    baseline_path (str): the baseline file (implies rescale_with_baseline=True).
    rescale ("baseline" or "corpus"): "baseline" is rescale_with_baseline=True; "corpus" computes the reference
        points from the texts being scored, in the same pass (targets given texts of other rows, and targets given
        themselves), so no file is needed, but the scale is comparable only within these inputs.
    rescale_pairs (int): with rescale="corpus", at most this many extra pairs for the reference points (default 1000).
    rescale_seed (int): with rescale="corpus", the sampling seed (default 12345).
    unrelated_texts (list of str): with rescale="corpus", fixed unrelated conditions instead of other rows' texts (for
        inputs that all share one source).
    batch_size (int): at most this many pairs per model batch (default: no limit but max_tokens).
    max_tokens (int): padded tokens per model batch (default 8192); lower it when memory is short.
    show_progress (bool): a progress bar on stderr (default False).

Returns:
    faithfulness, precision, recall, f_score: one score per prediction, in input order, for each direction computed.
    faithfulness_mean, ...: the mean over predictions of each direction computed.
    faithfulness_rescaled, ..., faithfulness_rescaled_mean, ...: when rescaling, beside the raw scores.
    reference_points: when rescaling, {direction: {"unrelated": ..., "copy": ...}} in raw scores.
    signature: the settings that produced the numbers, for reproducibility (with rescale:<baseline or corpus id>).

Examples:
    >>> import evaluate
    >>> bartscore = evaluate.load("./bartscore.py")  # "cnn": facebook/bart-large-cnn
    >>> results = bartscore.compute(predictions=["This is fun."], sources=["This is interesting."])
    >>> round(results["faithfulness"][0], 4)
    -2.5107
    >>> results = bartscore.compute(
    ...     predictions=["There is a cat on the mat.", "Look! a wonderful day."],
    ...     references=[["The cat is playing on the mat.", "A cat sits on a mat."], "Today is a wonderful day"],
    ...     directions=["recall", "f_score"], aggregation="max", prompt="paraphrase", prompt_side="decoder")
    >>> sorted(results)
    ['f_score', 'f_score_mean', 'recall', 'recall_mean', 'signature']
"""

_RESCALE_OPTIONS = {
    "rescale",
    "rescale_with_baseline",
    "baseline_path",
    "rescale_pairs",
    "rescale_seed",
    "unrelated_texts",
}

_FEATURES = datasets.Features(
    {
        "predictions": datasets.Value("string"),
        "references": datasets.List(datasets.Value("string")),
        "sources": datasets.Value("string"),
    }
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BARTScore(evaluate.Metric):
    """The BARTScore metric. Init options (also through ``evaluate.load``): device, dtype, max_length, max_tokens,
    distributed, results_on, source_lang and target_lang (mBART), template and compatibility (causal LMs); see
    ``BARTScorer``. Under torch.distributed, each rank computes on its own examples and
    every rank (or rank 0) gets the scores of all ranks' examples, rank 0's first."""

    def __init__(
        self,
        config_name=None,
        *,
        device=None,
        dtype="float32",
        max_length=None,
        max_tokens=DEFAULT_MAX_TOKENS,
        distributed=True,
        results_on="all",
        source_lang=None,
        target_lang=None,
        template=None,
        compatibility=None,
        **kwargs,
    ):
        self.model_name = config_name or "default"
        # evaluate joins the config name into a cache path; a checkpoint path or Hub id must not steer it.
        cache_name = (
            self.model_name
            if re.fullmatch(r"[\w.-]+", self.model_name)
            else re.sub(r"[^\w.-]+", "_", self.model_name).strip("_")[-64:]
        )
        super().__init__(config_name=cache_name, **kwargs)
        # Under evaluate's own multi-process mode (num_process > 1) only process 0 scores, so it must not wait
        # for the other ranks; otherwise ranks gather their examples and share the scoring (see README).
        self._engine_options = {
            "device": device,
            "dtype": dtype,
            "max_length": max_length,
            "max_tokens": max_tokens,
            "distributed": distributed and self.num_process == 1,
            "results_on": results_on,
            "source_lang": source_lang,
            "target_lang": target_lang,
            "template": template,
            "compatibility": compatibility,
        }
        self._scorer = None
        self._inputs_given = None  # which of references/sources the pending batches carry

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=_FEATURES,
            codebase_urls=["https://github.com/neulab/BARTScore"],
            reference_urls=["https://arxiv.org/abs/2106.11520"],
        )

    def _download_and_prepare(self, dl_manager):
        # The model loads once, here at evaluate.load time, so that a missing checkpoint is reported there.
        assert self.scorer is not None

    @property
    def scorer(self):
        """The engine, loaded on first use and kept for every later compute."""
        if self._scorer is None:
            checkpoint = DEFAULT_CHECKPOINT if self.model_name == "default" else self.model_name
            self._scorer = BARTScorer(checkpoint=checkpoint, **self._engine_options)
        return self._scorer

    def add_batch(self, *, predictions=None, references=None, sources=None, **kwargs):
        """Adds a batch of predictions with their references and/or sources (as in compute) for a later compute."""
        predictions = text_list(predictions, "predictions")
        given = {"references": references is not None, "sources": sources is not None}
        if self._inputs_given is not None and given != self._inputs_given:
            raise ValueError(
                f"this batch gives {_input_names(given)} but earlier batches gave {_input_names(self._inputs_given)}; "
                f"give the same inputs in every add/add_batch call"
            )
        if references is None:
            references = [[] for _ in predictions]
        else:
            references = reference_lists(references, "references", len(predictions))
        sources = [""] * len(predictions) if sources is None else text_list(sources, "sources", len(predictions))
        super().add_batch(predictions=predictions, references=references, sources=sources, **kwargs)
        self._inputs_given = given

    def add(self, *, prediction=None, reference=None, source=None, **kwargs):
        """Adds one prediction with its reference(s) and/or source for a later compute."""
        if not isinstance(prediction, str):
            raise TypeError(f"prediction is {describe(prediction)}; expected a string")
        self.add_batch(
            predictions=[prediction],
            references=None if reference is None else [reference],
            sources=None if source is None else [source],
            **kwargs,
        )

    def compute(self, *, predictions=None, references=None, sources=None, **kwargs):
        """Scores the given inputs, or those added with add/add_batch, and returns the results dict."""
        if predictions is None and (references is not None or sources is not None):
            raise TypeError("predictions must be a list of strings, got None")
        given = self._inputs_given
        if predictions is not None:
            given = {"references": references is not None, "sources": sources is not None}
        if given is None:
            raise ValueError(
                "nothing to score: pass predictions= (with sources= and/or references=), or call add/add_batch first"
            )
        option_names = {"directions", "aggregation", "prompt", "prompt_side"}
        resolve_options(
            has_references=given["references"],
            has_sources=given["sources"],
            **{k: v for k, v in kwargs.items() if k in option_names},
        )
        resolve_rescaling(**{k: v for k, v in kwargs.items() if k in _RESCALE_OPTIONS})
        try:
            if predictions is not None:
                self.add_batch(predictions=predictions, references=references, sources=sources)
            return super().compute(**kwargs)
        except BaseException:
            self._discard_pending()
            raise
        finally:
            self._inputs_given = None

    def _discard_pending(self):
        """Drops evaluate's half-written batch state after a failed compute, so that the next call starts clean."""
        for name in ("writer", "buf_writer", "data", "filelock", "cache_file_name", "selected_feature_format"):
            setattr(self, name, None)

    def _compute(
        self,
        predictions,
        references,
        sources,
        directions=None,
        aggregation="mean",
        prompt=None,
        prompt_side="encoder",
        rescale=None,
        rescale_with_baseline=False,
        baseline_path=None,
        rescale_pairs=DEFAULT_PAIRS,
        rescale_seed=DEFAULT_SEED,
        unrelated_texts=None,
        batch_size=None,
        max_tokens=None,
        show_progress=False,
    ):
        given = self._inputs_given
        group = self.scorer._process_group()
        if group:
            predictions, references, sources, given = group.gather_examples(
                predictions, references, sources, given, self.scorer.device
            )
        return self.scorer.score_directions(
            predictions,
            references=references if given["references"] else None,
            sources=sources if given["sources"] else None,
            directions=directions,
            aggregation=aggregation,
            prompt=prompt,
            prompt_side=prompt_side,
            rescale=rescale,
            rescale_with_baseline=rescale_with_baseline,
            baseline_path=baseline_path,
            rescale_pairs=rescale_pairs,
            rescale_seed=rescale_seed,
            unrelated_texts=unrelated_texts,
            batch_size=batch_size,
            max_tokens=max_tokens,
            show_progress=show_progress,
        )


def _input_names(given):
    names = [name for name, present in given.items() if present]
    return " and ".join(f"{name}=" for name in names) or "predictions only"
