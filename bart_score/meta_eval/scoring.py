"""BARTScore for every record of the release's benchmarks, computed the way the release's scripts compute it.

For each benchmark, by default (``Benchmark`` in meta_eval.benchmarks): the paper's direction; several references
aggregated by mean (summarization, SUM/score.py) or max (data-to-text, D2T/score.py), and F taken per reference and
then aggregated, as D2T/score.py's ``(0.5 * (ref_hypo + hypo_ref)).max()`` does (for a mean the order does not matter);
summarization and data-to-text texts detokenized with Moses first (the release used the mosestokenizer package's
wrapper of the Moses Perl script; here sacremoses, its Python port), WMT texts scored as they are. With a prompt, each
(hypothesis, reference) pair's score is the mean over the prompts, as ``score_directions`` computes it; the release's
data-to-text script takes the max over references before the mean over prompts, so prompted data-to-text F scores can
differ slightly from the release's.

Benchmarks that use the same directions are scored together, in one ``score_directions`` request; its pairs are
planned first (plan_benchmarks), so that meta-eval's grid can gather every configuration's pairs before any
scoring."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError, MissingExtraError
from ..messages import Mention
from ..options import DIRECTIONS, ScoringOptions
from ..scoring._directions import DirectionsPlan, aggregate, direction_results, plan_directions, signature
from ..scoring._pair_groups import call_scores
from ..scoring.protocols import Scorer, ScorerIdentity
from .benchmarks import BENCHMARKS


def moses_detokenizer() -> Callable[[str], str]:
    """The release's ``detokenize``: the text split on spaces, detokenized as English by Moses (sacremoses)."""
    try:
        from sacremoses import MosesDetokenizer
    except ImportError:
        raise MissingExtraError.needs(
            Mention("detokenize", True), "sacremoses", "meta-eval", ", or ", Mention("detokenize", False)
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


@dataclass(frozen=True)
class DirectionsRequest:
    """The benchmarks scored for the same directions, in one score_directions request: its plan, the benchmarks in
    order, and each benchmark's count of pairs per record (its references, or 1 where references are not used)."""

    plan: DirectionsPlan
    names: list[str]
    counts: dict[str, list[int]]
    uses_references: bool


@dataclass(frozen=True)
class BenchmarksPlan:
    """The pairs score_benchmarks needs, as one engine call per set of directions (requests), with the options they
    were planned under (options.aggregation: None for each benchmark's own)."""

    requests: list[DirectionsRequest]
    options: ScoringOptions


def score_benchmarks(
    scorer: Scorer,
    benchmarks: dict[str, Any],
    options: ScoringOptions | None = None,
    *,
    detokenize: bool = True,
    **keywords: Any,
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]] | tuple[None, None]:
    """Scores every record of `benchmarks` (name -> Dataset from ``load_benchmark``).

    options (a ScoringOptions, or its fields as keywords): the prompt setting, batching and progress; directions that
    override the paper's per-benchmark choice for all benchmarks (None: the paper's); aggregation over references for
    all benchmarks (None, the default here: the release's for each benchmark). The correlations do not change under
    rescaling, so options may not rescale. detokenize=False scores every text as the file has it. Returns
    ({benchmark: {direction: per-record scores}}, {benchmark: signature}), or (None, None) on ranks that get no
    results under torch.distributed.

    In three steps: plan_benchmarks (the pairs), one scorer.score call per set of directions, benchmark_results."""
    plan = plan_benchmarks(scorer, benchmarks, options, detokenize=detokenize, **keywords)
    # Every rank takes part in every request's scoring, even one that gets no results.
    scores = [call_scores(scorer, request.plan.call, request.plan.options) for request in plan.requests]
    if any(values is None for values in scores):
        return None, None
    return benchmark_results(plan, scores)  # type: ignore[arg-type]  # none of them is None


def plan_benchmarks(
    scorer: ScorerIdentity,
    benchmarks: Mapping[str, Any],
    options: ScoringOptions | None = None,
    *,
    detokenize: bool = True,
    **keywords: Any,
) -> BenchmarksPlan:
    """The pairs score_benchmarks needs (same arguments; benchmarks: anything with the source, references and
    hypothesis columns of a Dataset from load_benchmark), every check made, nothing scored."""
    if options is None:
        keywords.setdefault("aggregation", None)  # each benchmark's own, the release's, unless one is asked for
    options = ScoringOptions.resolve(options, **keywords)
    if options.rescale is not None:
        raise InputError(
            "meta-evaluation scores are not rescaled: the map would leave every correlation as it is",
            option="rescale",
            value=options.rescale,
        )
    detokenizer = moses_detokenizer() if detokenize and any(BENCHMARKS[n].detokenize for n in benchmarks) else None
    groups: dict[tuple[str, ...], list[str]] = {}  # directions -> the benchmarks scored for them
    for name in benchmarks:
        groups.setdefault(planned_directions(name, options.directions), []).append(name)
    requests = []
    for wanted, names in groups.items():
        uses_references = any(d != "faithfulness" for d in wanted)
        predictions: list[str] = []
        references: list[list[str]] = []  # [reference] per prediction, where references are used
        sources: list[str] = []
        counts = {}
        for name in names:
            prepare = detokenizer if detokenizer and BENCHMARKS[name].detokenize else (lambda text: text)
            dataset = benchmarks[name]
            records = list(zip(dataset["source"], dataset["references"], dataset["hypothesis"]))
            counts[name] = [len(refs) if uses_references else 1 for _, refs, _ in records]
            for source, refs, hypothesis in records:
                for ref in refs if uses_references else [None]:
                    predictions.append(prepare(hypothesis))
                    sources.append(prepare(source))
                    if ref is not None:
                        references.append([prepare(ref)])
        # One reference per prediction: the references are aggregated per benchmark by benchmark_results.
        request = options.replace(directions=wanted, aggregation="mean")
        plan = plan_directions(scorer, predictions, references if uses_references else None, sources, request)
        requests.append(DirectionsRequest(plan, names, counts, uses_references))
    return BenchmarksPlan(requests, options)


def benchmark_results(
    plan: BenchmarksPlan, scores: Sequence[Sequence[float]]
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]]:
    """({benchmark: {direction: per-record scores}}, {benchmark: signature}) of a plan, from the scores of its
    requests' calls (one list per request, one score per pair of its call, in order): each record's references
    aggregated as the options say, or as the release does for its benchmark."""
    results: dict[str, dict[str, np.ndarray]] = {}
    for request, values in zip(plan.requests, scores):
        result = direction_results(request.plan, values)
        start = 0
        for name in request.names:
            counts = request.counts[name]
            end = start + sum(counts)
            results[name] = {}
            for direction in request.plan.options.directions or ():
                flat = np.asarray(result[direction][start:end], dtype=np.float64)
                if direction == "faithfulness":  # the same pair for every reference: its first score
                    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
                    results[name][direction] = flat[firsts]
                else:
                    results[name][direction] = aggregate(flat, counts, _aggregation(plan, name))
            start = end
    return results, benchmark_signatures(plan)


def benchmark_signatures(plan: BenchmarksPlan) -> dict[str, str]:
    """Each benchmark's signature under a plan ({benchmark: signature}), which its scores do not change."""
    signatures = {}
    for request in plan.requests:
        for name in request.names:
            options = request.plan.options.replace(aggregation=_aggregation(plan, name))
            references = request.counts[name] if request.uses_references else ()
            signatures[name] = signature(request.plan.scorer, options, references).format()
    return signatures


def _aggregation(plan: BenchmarksPlan, name: str) -> str:
    """How a benchmark's references are aggregated: as the options say, else as the release does for it."""
    return plan.options.aggregation or BENCHMARKS[name].aggregation
