"""BARTScore as an `evaluate` metric, and the Hub entry point of this project.

    bartscore = evaluate.load("./bartscore.py")  # or "vanilla", "cnn-para", a Hub id, a directory, a GGUF file
    bartscore.compute(predictions=[...], references=[...], sources=[...])

From any folder, once the package is installed: ``evaluate.load(bart_score.METRIC_PATH, ...)`` (this file, installed
beside the bart_score package).

The metric's card (description, citation, _info) and _compute over the `bart_score` library, which holds the
engine, the directions, the corpus tools, the metric's evaluate plumbing (bart_score.integrations.evaluate_metric) and
the command line (``python bartscore.py score ...`` runs that command line, as ``bartscore`` and ``python -m
bart_score`` do)."""

from __future__ import annotations

if __name__ == "__main__":  # the command line, without loading evaluate first
    from bart_score.cli import main

    raise SystemExit(main())

from collections.abc import Sequence
from typing import Any

import evaluate

# "# From: bartscore" is evaluate's hint for a library import: without bart_score, evaluate.load asks for
# `pip install bartscore` (the distribution's name). It reads the whole rest of the line, so no other comment
# may follow it; BARTScorer and score_dataset (the names the original module offered) are kept by __all__.
from bart_score import BARTScorer, score_dataset  # From: bartscore
from bart_score.integrations.evaluate_metric import ScoringMetric  # From: bartscore
from bart_score.options import ScoringOptions, described_options  # From: bartscore

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
Marian or decoder-only causal language model checkpoint (T5Score- and GPTScore-style scoring with the same engine),
or a GGUF file of one.
"""

_KWARGS_ARGUMENTS = """
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
"""
# The compute options, each with its type, its one text in the library's words and its default, from the table of
# options (bart_score.options).
_KWARGS_DESCRIPTION = (
    _KWARGS_ARGUMENTS
    + described_options(ScoringOptions)
    + """    rescale_with_baseline (bool), baseline_path (str): bert_score's names for rescale="baseline" and baseline.

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
    >>> from bart_score.scoring.signature import Signature
    >>> signature = Signature.parse(results["signature"])
    >>> signature.directions, signature.aggregation, signature.reference_counts, signature.prompt
    (('recall', 'f_score'), 'max', (1, 2), 'mt(1)@decoder')
    >>> for batch in (["A cat.", "A dog."], ["A day."]):
    ...     bartscore.add_batch(predictions=batch, sources=["A cat sat on a mat."] * len(batch))
    >>> len(bartscore.compute()["faithfulness"])
    3
"""
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BARTScore(ScoringMetric):
    """The BARTScore metric. Init options (also through ``evaluate.load``): the engine's settings, every field of
    bart_score's EngineOptions but its checkpoint, which the configuration name gives (device, dtype, max_length, a
    causal LM's template or chat options, threads, ...; each is documented on EngineOptions: threads sets torch's
    threads for the whole process when the model loads, and left out, the process's own setting stands); and inputs
    ("references", the default, "sources" or "both": the inputs the metric asks evaluate.combine for). Under
    torch.distributed, each rank computes on its own examples and every rank (or rank 0) gets the scores of all ranks'
    examples, rank 0's first."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/neulab/BARTScore",
            license="Apache-2.0 (this implementation; each checkpoint has its own license)",
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.feature_variants(),
            codebase_urls=["https://github.com/neulab/BARTScore"],
            reference_urls=["https://arxiv.org/abs/2106.11520"],
        )

    def _compute(
        self,
        predictions: Sequence[str],
        references: Sequence[str | Sequence[str]] | None = None,
        sources: Sequence[str] | None = None,
        options: ScoringOptions | None = None,
    ) -> dict[str, Any] | None:
        group = self.scorer.process_group()
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
