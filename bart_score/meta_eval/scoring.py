"""BARTScore for every record of the release's benchmarks, computed the way the release's scripts compute it.

For each benchmark, by default (``Benchmark`` in meta_eval.benchmarks): the paper's direction; several references
aggregated by mean (summarization, SUM/score.py) or max (data-to-text, D2T/score.py), and F taken per reference and
then aggregated, as D2T/score.py's ``(0.5 * (ref_hypo + hypo_ref)).max()`` does (for a mean the order does not matter);
summarization and data-to-text texts detokenized with Moses first (the release used the mosestokenizer package's
wrapper of the Moses Perl script; here sacremoses, its Python port), WMT texts scored as they are. With a prompt, each
(hypothesis, reference) pair's score is the mean over the prompts, as ``score_directions`` computes it; the release's
data-to-text script takes the max over references before the mean over prompts, so prompted data-to-text F scores can
differ slightly from the release's.

Benchmarks that use the same directions are scored together, in one ``score_directions`` call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..directions import aggregate, score_directions, signature
from ..errors import InputError, MissingExtraError
from ..options import DIRECTIONS, ScoringOptions
from ..scorer import Scorer
from .benchmarks import BENCHMARKS


def moses_detokenizer() -> Callable[[str], str]:
    """The release's ``detokenize``: the text split on spaces, detokenized as English by Moses (sacremoses)."""
    try:
        from sacremoses import MosesDetokenizer
    except ImportError:
        raise MissingExtraError(
            "the release detokenizes summarization and data-to-text texts with Moses before scoring; install "
            'sacremoses (pip install "bartscore[meta-eval]"), or score the texts as they are with detokenize=False',
            option="detokenize",
        ) from None
    moses = MosesDetokenizer(lang="en")
    done: dict[str, str] = {}

    def detokenize(text: str) -> str:
        if text not in done:
            done[text] = moses.detokenize(text.split(" "))
        return done[text]

    return detokenize


def planned_directions(name: str, directions: Sequence[str] | None = None) -> tuple[str, ...]:
    """The directions scored for a benchmark: the given ones (in DIRECTIONS order), else the paper's."""
    if directions is None:
        return BENCHMARKS[name].directions
    return tuple(d for d in DIRECTIONS if d in directions)


def score_benchmarks(
    scorer: Scorer,
    benchmarks: dict[str, Any],
    options: ScoringOptions | None = None,
    *,
    aggregation: str | None = None,
    detokenize: bool = True,
    **keywords: Any,
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]] | tuple[None, None]:
    """Scores every record of `benchmarks` (name -> Dataset from ``load_benchmark``).

    options (a ScoringOptions, or its fields as keywords): the prompt setting, batching and progress, and directions
    that override the paper's per-benchmark choice for all benchmarks; aggregation: overrides the release's
    per-benchmark aggregation (options.aggregation is not used, since its default is not the release's). The
    correlations do not change under rescaling, so options may not rescale. detokenize=False scores every text as the
    file has it. Returns ({benchmark: {direction: per-record scores}}, {benchmark: signature}), or (None, None) on
    ranks that get no results under torch.distributed."""
    options = ScoringOptions.resolve(options, **keywords)
    if options.rescale is not None:
        raise InputError("meta-evaluation scores are not rescaled: the map would leave every correlation as it is")
    if aggregation is not None:
        options.replace(aggregation=aggregation)  # checked here, before any scoring
    for name in benchmarks:
        options.replace(directions=planned_directions(name, options.directions))
    detokenizer = moses_detokenizer() if detokenize and any(BENCHMARKS[n].detokenize for n in benchmarks) else None
    groups: dict[tuple[str, ...], list[str]] = {}  # directions -> the benchmarks scored for them
    for name in benchmarks:
        groups.setdefault(planned_directions(name, options.directions), []).append(name)

    scores: dict[str, dict[str, np.ndarray]] = {}
    signatures: dict[str, str] = {}
    lead = True
    for wanted, names in groups.items():
        uses_references = any(d != "faithfulness" for d in wanted)
        predictions: list[str] = []
        references: list[Any] = []  # [reference] per prediction, or None where references are not used
        sources: list[str] = []
        owners: list[tuple[str, int]] = []
        texts = {}
        for name in names:
            prepare = detokenizer if detokenizer and BENCHMARKS[name].detokenize else (lambda text: text)
            dataset = benchmarks[name]
            records = list(zip(dataset["source"], dataset["references"], dataset["hypothesis"]))
            texts[name] = records
            for record, (source, refs, hypothesis) in enumerate(records):
                for ref in refs if uses_references else [None]:
                    predictions.append(prepare(hypothesis))
                    sources.append(prepare(source))
                    references.append([prepare(ref)] if uses_references else None)  # type: ignore[arg-type]  # a ref then
                    owners.append((name, record))
        result = score_directions(
            scorer,
            predictions,
            references=references if uses_references else None,
            sources=sources,
            options=options.replace(directions=wanted, aggregation="mean"),
        )
        if result is None:  # a rank without results: it still takes part in every group's scoring
            lead = False
            continue
        start = 0
        for name in names:
            counts = [len(refs) if uses_references else 1 for _, refs, _ in texts[name]]
            end = start + sum(counts)
            how = aggregation or BENCHMARKS[name].aggregation
            scores[name] = {}
            for direction in wanted:
                flat = np.asarray(result[direction][start:end], dtype=np.float64)
                if direction == "faithfulness":  # the same pair for every reference: its first score
                    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
                    scores[name][direction] = flat[firsts]
                else:
                    scores[name][direction] = aggregate(flat, counts, how)
            signatures[name] = signature(
                scorer, options.replace(directions=wanted, aggregation=how), counts if uses_references else ()
            ).format()
            start = end
    return (scores, signatures) if lead else (None, None)
