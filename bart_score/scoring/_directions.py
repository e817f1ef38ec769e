"""The paper's directions and multi-reference aggregation on top of pair scoring, and the signature (a
bart_score.scoring.signature.Signature; results carry it formatted).

faithfulness: source -> prediction; precision: reference -> prediction; recall: prediction -> reference;
f_score: (precision + recall) / 2. With several references, precision and recall are aggregated over the
references (mean or max) first, and f_score is the mean of the aggregated two. With prompts, a direction's score for
one (condition, target) pair is the average over the prompts, as in the original scripts
(bart_score.scoring._pair_groups)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..baselines import rescale
from ..baselines._lookup import baseline_for
from ..baselines.files import Baseline
from ..errors import InputTypeError
from ..inputs import reference_lists, text_list
from ..long_documents.windows import WindowPlan, plan_windows, windows_label
from ..messages import Mention
from ..options import ScoringOptions
from ._pair_groups import GroupKey, Pair, PairCall, call_scores, plan_pair_groups
from .protocols import IdentifiedScorer, Scorer, ScorerIdentity
from .signature import Signature


def aggregate(values: np.ndarray, counts: Sequence[int], how: str) -> np.ndarray:
    """Collapses consecutive runs of `counts` values (one run per example) by mean or max."""
    if not len(counts):
        return np.zeros(0)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    if how == "max":
        return np.maximum.reduceat(values, starts)
    return np.add.reduceat(values, starts) / np.asarray(counts)


@dataclass(frozen=True)
class DirectionsPlan:
    """The pairs a request needs, as one engine call, and what turns their scores into its results (plan_directions
    makes it, direction_results finishes it).

    scorer: the identity the pairs and the signature are for; options: the request's, its directions and aggregation
    resolved; call: the engine call; wanted: the directions scored (f_score's precision and recall among them);
    reference_counts: each prediction's references; windows: long_source="windows"'s plan; reference_pairs:
    rescale="corpus"'s samples, scored in the same call; baseline: rescale="baseline"'s file; point_directions: the
    directions that need reference points."""

    scorer: ScorerIdentity
    options: ScoringOptions
    call: PairCall
    wanted: frozenset[str]
    reference_counts: list[int]
    windows: WindowPlan | None
    reference_pairs: rescale.ReferencePairs | None
    baseline: Baseline | None
    point_directions: list[str]


def score_directions(
    scorer: Scorer,
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]] | None = None,
    sources: Sequence[str] | None = None,
    options: ScoringOptions | None = None,
    **keywords: Any,
) -> dict[str, Any] | None:
    """The directions for each prediction, in input order, with their means and a signature: see the module's text.
    `options` (a ScoringOptions) or its fields as keywords. Every direction's pairs go to `scorer.score` in one call,
    so that texts shared across directions are planned once. None on ranks that get no results (see BARTScorer's
    results_on).

    Rescaling (see bart_score.baselines.rescale) adds ``<direction>_rescaled`` and its mean beside each raw direction,
    the ``reference_points`` used, and a ``rescale:`` field to the signature. rescale="baseline" takes the points from
    options.baseline, or from the default location for this model and settings; rescale="corpus" computes them from
    these inputs, in the same engine call, from at most corpus_points.pairs extra pairs: targets given conditions of
    other documents (or given corpus_points.unrelated_texts), and targets given themselves.

    long_source="windows" scores faithfulness against windows of the source (bart_score.long_documents.windows): the
    result adds ``faithfulness_sentences`` and ``faithfulness_windows`` (per prediction, the sentences scored and the
    distinct windows they were scored against) and a ``long:`` field to the signature. The other directions are computed
    as usual.

    In three steps: plan_directions (the pairs this request needs), one scorer.score call, direction_results (the
    results from those scores)."""
    plan = plan_directions(scorer, predictions, references, sources, options, **keywords)
    scores = call_scores(scorer, plan.call, plan.options)
    return None if scores is None else direction_results(plan, scores)


def plan_directions(
    scorer: ScorerIdentity,
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]] | None = None,
    sources: Sequence[str] | None = None,
    options: ScoringOptions | None = None,
    **keywords: Any,
) -> DirectionsPlan:
    """The pairs a score_directions request needs (same arguments), as one engine call, with what turns their scores
    into its results; every check of the request is made here, before anything is scored (a missing or mismatched
    baseline costs no model time). Nothing is scored: the scorer's identity is all it reads."""
    options = ScoringOptions.resolve(options, **keywords)
    predictions, references, sources = _checked_texts(predictions, references, sources)
    for name, texts in (("predictions", predictions), ("references", references), ("sources", sources)):
        options.check_lengths(texts or [], name)
    options = options.replace(
        directions=options.directions_for(has_references=references is not None, has_sources=sources is not None),
        aggregation=options.aggregation or "mean",  # None: the caller's own, which is mean here
    )
    assert options.directions is not None  # resolved just above
    point_directions = rescale.point_directions(options.directions)
    baseline = _checked_baseline(scorer, options, point_directions)

    wanted = _scored_directions(options.directions)
    groups = _direction_pairs(wanted, predictions, references, sources)
    plan = None
    if options.windows is not None:
        assert sources is not None  # directions_for allows long_source="windows" only with sources
        plan = plan_windows(predictions, sources, options.windows, scorer.options.device)
        groups["faithfulness"] = plan.pairs
    reference_pairs = None
    if options.rescale == "corpus":  # its samples are scored in the same engine call as the directions
        reference_pairs = _corpus_reference_pairs(
            options, predictions, sources, references, point_directions, rescale.scored_by_direction(scorer)
        )
        groups.update(reference_pairs.samples)
    return DirectionsPlan(
        scorer=scorer,
        options=options,
        call=plan_pair_groups(scorer, groups, options),
        wanted=frozenset(wanted),
        reference_counts=[len(refs) for refs in references] if references is not None else [],
        windows=plan,
        reference_pairs=reference_pairs,
        baseline=baseline,
        point_directions=point_directions,
    )


def direction_results(plan: DirectionsPlan, scores: Sequence[float]) -> dict[str, Any]:
    """A planned request's results (what score_directions returns), from the scores of its call's pairs (one per pair,
    in the call's order)."""
    options = plan.options
    assert options.directions is not None and options.aggregation is not None  # plan_directions resolved them
    averaged = plan.call.averaged(scores)
    aggregated = _aggregated_scores(averaged, plan.wanted, plan.reference_counts, plan.windows, options.aggregation)
    result = _raw_fields(aggregated, options.directions, plan.windows)
    rescale_label = None
    if options.rescale:
        points, rescale_label = _reference_points(plan.baseline, plan.reference_pairs, averaged)
        result |= _rescaled_fields(aggregated, options.directions, plan.point_directions, points)
    result["signature"] = signature(plan.scorer, options, plan.reference_counts, rescale_label).format()
    return result


def _checked_texts(
    predictions: Sequence[str],
    references: Sequence[str | Sequence[str]] | None,
    sources: Sequence[str] | None,
) -> tuple[list[str], list[list[str]] | None, list[str] | None]:
    """The inputs as lists of texts, checked in this order (which decides the error a bad call gets): predictions,
    then references and sources, one entry per prediction."""
    checked_predictions = text_list(predictions, "predictions")
    checked_references = (
        reference_lists(references, "references", len(checked_predictions)) if references is not None else None
    )
    checked_sources = text_list(sources, "sources", len(checked_predictions)) if sources is not None else None
    return checked_predictions, checked_references, checked_sources


def _checked_baseline(scorer: ScorerIdentity, options: ScoringOptions, point_directions: list[str]) -> Baseline | None:
    """rescale="baseline"'s file, found and checked before any scoring, so that a missing or mismatched baseline costs
    no model time; None for any other rescale."""
    if options.rescale != "baseline":
        return None
    if not isinstance(scorer, IdentifiedScorer):  # a baseline is looked up by model, token policy and max_length
        raise InputTypeError(
            Mention("rescale", "baseline"),
            " needs a scorer that names its model, token policy and max_length (bart_score.scoring.protocols."
            f"IdentifiedScorer); a {type(scorer).__name__} does not",
        )
    return baseline_for(scorer, options, point_directions)


def _scored_directions(directions: Sequence[str]) -> set[str]:
    """The directions to score: those asked for, and precision and recall for an f_score (their mean)."""
    wanted = set(directions)
    if "f_score" in wanted:
        wanted |= {"precision", "recall"}
    return wanted


def _direction_pairs(
    wanted: AbstractSet[str],
    predictions: list[str],
    references: list[list[str]] | None,
    sources: list[str] | None,
) -> dict[GroupKey, Sequence[Pair]]:
    """Each direction's (condition, target) pairs: faithfulness one per prediction, precision and recall one per
    reference, references flattened in order (aggregation collapses them back per prediction); an unwanted
    direction has none."""
    flat_refs = [ref for refs in references for ref in refs] if references is not None else []
    owners = [i for i, refs in enumerate(references or []) for _ in refs]
    # directions_for allows faithfulness (and long_source="windows", which scores it) only with sources.
    return {
        "faithfulness": list(zip(sources, predictions)) if "faithfulness" in wanted and sources is not None else [],
        "precision": [(ref, predictions[i]) for i, ref in zip(owners, flat_refs)] if "precision" in wanted else [],
        "recall": [(predictions[i], ref) for i, ref in zip(owners, flat_refs)] if "recall" in wanted else [],
    }


def _aggregated_scores(
    averaged: Mapping[GroupKey, np.ndarray],
    wanted: AbstractSet[str],
    ref_counts: Sequence[int],
    plan: WindowPlan | None,
    aggregation: str,
) -> dict[str, np.ndarray]:
    """One score per prediction for each wanted direction: faithfulness over its windows' pairs (with a plan),
    precision and recall over the prediction's references, and f_score as the mean of those two."""
    scores: dict[str, np.ndarray] = {}
    if "faithfulness" in wanted:
        scores["faithfulness"] = plan.aggregate(averaged["faithfulness"]) if plan else averaged["faithfulness"]
    for direction in ("precision", "recall"):
        if direction in wanted:
            scores[direction] = aggregate(averaged[direction], ref_counts, aggregation)
    if "f_score" in wanted:
        scores["f_score"] = (scores["precision"] + scores["recall"]) / 2
    return scores


def _raw_fields(scores: Mapping[str, np.ndarray], directions: Sequence[str], plan: WindowPlan | None) -> dict[str, Any]:
    """The result's fields before rescaling, in the order callers see them: each direction's scores, then each one's
    mean, then (with long_source="windows") the sentences and windows each prediction was scored on."""
    result: dict[str, Any] = {direction: scores[direction].tolist() for direction in directions}
    for direction in directions:
        result[f"{direction}_mean"] = _mean(scores[direction])
    if plan is not None:
        result["faithfulness_sentences"] = plan.sentences
        result["faithfulness_windows"] = plan.windows
    return result


def _reference_points(
    baseline: Baseline | None, reference_pairs: rescale.ReferencePairs | None, averaged: Mapping[GroupKey, np.ndarray]
) -> tuple[dict[str, rescale.ReferencePoints], str]:
    """The reference points to rescale by and the signature's label for them: a baseline's, else those of
    rescale="corpus", from its samples' scores."""
    if baseline is not None:
        return baseline.points, baseline.label
    assert reference_pairs is not None  # rescale="corpus" sampled them
    return reference_pairs.points(averaged), reference_pairs.label


def _rescaled_fields(
    scores: Mapping[str, np.ndarray],
    directions: Sequence[str],
    point_directions: list[str],
    points: Mapping[str, rescale.ReferencePoints],
) -> dict[str, Any]:
    """Each direction's rescaled scores and their mean, then the reference points used (f_score's derived from
    precision's and recall's)."""
    points = rescale.with_f_score({d: points[d] for d in point_directions})
    rescaled = rescale.rescaled_scores(scores, points)
    fields: dict[str, Any] = {}
    for direction in directions:
        fields[f"{direction}_rescaled"] = rescaled[direction].tolist()
        fields[f"{direction}_rescaled_mean"] = _mean(rescaled[direction])
    fields["reference_points"] = {d: {"unrelated": points[d].unrelated, "copy": points[d].copy} for d in directions}
    return fields


def _corpus_reference_pairs(
    options: ScoringOptions,
    predictions: list[str],
    sources: list[str] | None,
    references: list[list[str]] | None,
    point_directions: list[str],
    by_direction: bool,
) -> rescale.ReferencePairs:
    """rescale="corpus"'s reference pairs, sampled from the inputs (rows of one document share no unrelated pair);
    by_direction: see rescale.sample_reference_pairs."""
    points = options.corpus_points
    assert points is not None  # resolve() gives rescale="corpus" its default CorpusPoints
    rows = {
        "prediction": [[text] for text in predictions],
        "source": [[text] for text in sources] if sources is not None else None,
        "reference": references,
    }
    documents = (
        rescale.document_ids(len(predictions), sources, references)
        if points.unrelated_texts
        else rescale.corpus_documents(len(predictions), sources, references)
    )
    return rescale.sample_reference_pairs(
        rows,
        documents,
        point_directions,
        pairs=points.pairs,
        seed=points.seed,
        unrelated_texts=points.unrelated_texts,
        by_direction=by_direction,
    )


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else float("nan")


def signature(
    scorer: ScorerIdentity, options: ScoringOptions, ref_counts: Sequence[int] = (), rescale_label: str | None = None
) -> Signature:
    """A sacrebleu-style reproducibility signature for a result of `scorer` under `options` (its directions and
    aggregation resolved), rescaled with the reference points that rescale_label names; with long_source="windows",
    its settings."""
    assert options.directions is not None, "signature() takes options with their directions resolved"
    assert options.aggregation is not None, "signature() takes options with their aggregation resolved"
    return Signature(
        checkpoint=scorer.model_label,
        directions=options.directions,
        aggregation=options.aggregation,
        reference_counts=(min(ref_counts), max(ref_counts)) if ref_counts else None,
        prompt=options.prompt_label,
        rescale=rescale_label or None,
        long_source=windows_label(options.windows) if options.windows else None,
        scorer_fields=tuple(scorer.signature_fields()),
    )
