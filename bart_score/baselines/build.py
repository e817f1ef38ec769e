"""Making a baseline (bart_score.baselines.files) from a corpus.

``plan_baseline`` checks a request and plans its pairs before any model is used; ``build_baseline`` samples the
reference pairs of a corpus and scores them in one engine call."""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..corpora._outputs import finite_or_null
from ..corpora._reading import file_sha256
from ..errors import InputError
from ..inputs import text_list
from ..messages import Mention
from ..options import ScoringOptions
from ..scoring._pair_groups import score_pair_groups
from ..scoring.protocols import IdentifiedScorer
from ..version import __version__
from .files import ABOUT, BASELINE_FORMAT, BASELINE_FORMAT_VERSION, baseline_id, baseline_settings
from .rescale import (
    DEFAULT_PAIRS,
    DEFAULT_SEED,
    POINT_DIRECTIONS,
    ROLES,
    corpus_documents,
    document_ids,
    point_directions,
    sample_reference_pairs,
    scored_by_direction,
    warn_if_degenerate,
)

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
# Target-length buckets (words) of a baseline's breakdown: short texts score lower, copies included.
WORD_BUCKETS = ((0, 0), (1, 5), (6, 10), (11, 20), (21, 40), (41, 80), (81, 160), (161, None))
BASELINE_REMEDY = "make it from a corpus with rows of different sources and references"


@dataclass(frozen=True)
class BaselinePlan:
    """What a baseline is made from, checked before any model is used: the rows of texts by role, their documents,
    each direction's (condition role, target role), the point directions, and the corpus as the file records it."""

    rows: dict[str, list[list[str]] | None]
    documents: list[int]
    roles: dict[str, tuple[str, str]]
    directions: list[str]
    described: dict[str, Any]


def plan_baseline(texts: list[str] | None, corpus: Any, options: ScoringOptions) -> BaselinePlan:
    """Checks a baseline request (plain texts or a Corpus, one of them, and the options) and plans its pairs."""
    if options.rescale is not None:
        raise InputError(
            Mention("rescale", options.rescale),
            " does not apply to a baseline, which holds raw reference points",
            remedy=["build it without ", Mention("rescale")],
        )
    if options.aggregation != "mean":
        raise InputError(
            Mention("aggregation"),
            f" does not apply to a baseline (got {options.aggregation!r}): each of its pairs has one reference",
            value=options.aggregation,
        )
    if (texts is None) == (corpus is None):
        raise InputError("build_baseline takes ", Mention("texts"), " or ", Mention("corpus"), ", one of them")
    if texts is not None:
        texts = text_list(texts, "texts")
        options.check_lengths(texts, "texts")
        if len(set(texts)) < 2:
            raise InputError("unrelated pairs need at least two different texts")
        return BaselinePlan(
            rows={"text": [[text] for text in texts]},
            documents=document_ids(len(texts), sources=texts),  # a text repeated on several lines is one document
            roles=dict.fromkeys(POINT_DIRECTIONS, ("text", "text")),
            directions=point_directions(options.directions_for(has_references=True, has_sources=True)),
            described={"kind": "plain text", "texts": len(texts), "distinct texts": len(set(texts))},
        )
    names = list(corpus.systems)
    segments = len(corpus.systems[names[0]])
    columns = [("predictions", outputs) for outputs in corpus.systems.values()]
    for name, column in [*columns, ("references", corpus.references or []), ("sources", corpus.sources or [])]:
        options.check_lengths(column, name)
    directions = options.directions_for(
        has_references=corpus.references is not None, has_sources=corpus.sources is not None
    )
    corpus_documents(
        segments, corpus.sources, corpus.references, what="a baseline", option=None, remedy=BASELINE_REMEDY
    )
    sources = corpus.sources * len(names) if corpus.sources is not None else None
    references = corpus.references * len(names) if corpus.references is not None else None
    return BaselinePlan(
        rows={
            "prediction": [[text] for name in names for text in corpus.systems[name]],
            "source": [[text] for text in sources] if sources is not None else None,
            "reference": references,
        },
        documents=document_ids(segments * len(names), sources, references),
        roles=ROLES,
        directions=point_directions(directions),
        described={"kind": "table", "rows": segments, "systems": names},
    )


def build_baseline(
    scorer: IdentifiedScorer,
    texts: list[str] | None = None,
    corpus: Any = None,
    *,
    corpus_file: str,
    pairs: int = DEFAULT_PAIRS,
    seed: int = DEFAULT_SEED,
    options: ScoringOptions | None = None,
    **keywords: Any,
) -> dict[str, Any] | None:
    """A baseline document (see ABOUT) from plain texts (`texts`, one per line of the file: every direction's pairs
    are pairs of these texts) or a Corpus of systems with sources and/or references (each direction from the roles
    its texts play). corpus_file: the file they were read from (its sha256 is recorded); pairs, seed: the sampling.
    options (or its fields as keywords): the directions, prompt setting and batching; a baseline is not itself
    rescaled, and its pairs have one reference each. All reference pairs go to the engine in one call. None on ranks
    that get no results."""
    options = ScoringOptions.resolve(options, **keywords)
    plan = plan_baseline(texts, corpus, options)
    reference_pairs = sample_reference_pairs(
        plan.rows,
        plan.documents,
        plan.directions,
        roles=plan.roles,
        pairs=pairs,
        seed=seed,
        by_direction=scored_by_direction(scorer),
    )
    sample_scores = score_pair_groups(scorer, reference_pairs.samples, options)
    if sample_scores is None:
        return None
    for direction, point in reference_pairs.points(sample_scores).items():
        if not point.ordered:
            raise InputError(
                f"no baseline written: for {direction}, a copy scores {point.copy:.4f} on average and an unrelated "
                f"text {point.unrelated:.4f}, so this model does not tell a copy from an unrelated text and a scale "
                f"between the two would mean nothing"
            )
        warn_if_degenerate(direction, point, "the baseline", stacklevel=2)
    stats = {
        key: _describe(sample_scores[key], [target for _, target in reference_pairs.samples[key]])
        for key in reference_pairs.samples
    }
    document = {
        "format": BASELINE_FORMAT,
        "format_version": BASELINE_FORMAT_VERSION,
        "about": ABOUT,
        "settings": baseline_settings(scorer, options.prompt_label),
        "made_with": {
            "bart_score": __version__,
            "transformers": importlib.metadata.version("transformers"),
            "engine": scorer.signature_fields(),
        },
        "corpus": {"file": os.path.basename(corpus_file), "sha256": file_sha256(corpus_file), **plan.described},
        # pairs: as asked; pairs_scored: as done (fewer when the corpus gives fewer distinct pairs)
        "sampling": {"pairs": pairs, "pairs_scored": sum(map(len, reference_pairs.samples.values())), "seed": seed},
        "directions": {
            direction: {"unrelated": stats[unrelated], "copy": stats[copy]}
            for direction, (unrelated, copy) in reference_pairs.points_of.items()
        },
    }
    document = finite_or_null(document)  # JSON has no NaN (its id is the digest of what is written)
    document["id"] = baseline_id(document)
    return document


def _describe(scores: Sequence[float] | np.ndarray, targets: Sequence[str]) -> dict[str, Any]:
    """A sample's figures: mean, std, quantiles, pairs, and means by the target's length in words."""
    scores = np.asarray(scores, dtype=np.float64)
    words = np.array([len(target.split()) for target in targets])
    buckets = []
    for low, high in WORD_BUCKETS:
        inside = (words >= low) & (words <= high if high is not None else True)
        if inside.any():
            label = f"{low}+" if high is None else str(low) if low == high else f"{low}-{high}"
            buckets.append({"words": label, "pairs": int(inside.sum()), "mean": float(scores[inside].mean())})
    return {
        "mean": float(scores.mean()),
        "std": float(scores.std(ddof=1)) if len(scores) > 1 else None,
        "quantiles": {f"{q:g}": float(value) for q, value in zip(QUANTILES, np.quantile(scores, QUANTILES))},
        "pairs": len(scores),
        "by_target_words": buckets,
    }
