"""Scores people can read: two reference points per direction, and the linear map between them.

A raw BARTScore is a mean token log-probability, so it only means something next to other scores. Two reference
points give it a scale, for each direction (faithfulness, precision, recall):

    unrelated   the mean score of a target given a text it has nothing to do with (a condition from another row or
                document, or one of a fixed set of unrelated texts)
    copy        the mean score of a target given itself

    rescaled = (score - unrelated) / (copy - unrelated)

0 is "no better than an unrelated text", 1 is "as likely as a copy". The map is one increasing linear function per
direction and set of reference points, so it never changes a ranking, a correlation with human judgements or a
paired test's verdict. Rescaled f_score is the mean of rescaled precision and rescaled recall (a copy 1, an unrelated
text 0); it is linear in those two, so it ranks as raw f_score exactly when their ranges (copy - unrelated) are
equal. Its points, shown beside it, are the means of precision's and recall's.

The reference points come from a baseline file (``bartscore baseline``, see bart_score.baselines) or from the corpus
being scored (``rescale="corpus"``: cross-row pairs and the targets given themselves, scored in the same engine call
as the corpus; comparable only within that corpus). A baseline is valid for one model, token policy, prompt setting
and max_length: its key."""

from __future__ import annotations

import hashlib
import json
import warnings
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import FewerReferencePairsWarning, InputError, RescaleWarning
from ..messages import NOT_GIVEN, Mention, Part
from ..options import DEFAULT_PAIRS, DEFAULT_SEED, POINT_DIRECTIONS
from ..scoring.protocols import ScorerIdentity

# A scale whose copy and unrelated points differ by less than this fraction of the larger one's size (raw scores
# are negative log-probabilities per token) stretches every other score into large rescaled numbers: a copy at -2.99
# and an unrelated text at -3.00 put a score of -5 at -200. Such points are warned of where they are made and used.
DEGENERATE_SPREAD = 0.05
# The role of each direction's condition and target in a row.
ROLES = {
    "faithfulness": ("source", "prediction"),
    "precision": ("reference", "prediction"),
    "recall": ("prediction", "reference"),
}


# ---------------------------------------------------------------------------------------------------------------------
# The linear map


@dataclass(frozen=True)
class ReferencePoints:
    unrelated: float
    copy: float

    @property
    def ordered(self) -> bool:
        """Whether a copy scores above an unrelated text; only then does the scale mean anything."""
        return self.copy > self.unrelated

    @property
    def degenerate(self) -> bool:
        """Ordered, but so close together (see DEGENERATE_SPREAD) that the scale stretches scores far beyond 0..1."""
        size = max(abs(self.copy), abs(self.unrelated))
        return self.ordered and self.copy - self.unrelated < DEGENERATE_SPREAD * size

    def rescale(self, scores: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """(score - unrelated) / (copy - unrelated), as float64; NaN when the points are not ordered."""
        scores = np.asarray(scores, dtype=np.float64)
        if not self.ordered:
            return np.full(scores.shape, np.nan)
        return (scores - self.unrelated) / (self.copy - self.unrelated)


def warn_if_degenerate(direction: str, point: ReferencePoints, where: str, stacklevel: int = 2) -> None:
    """Warns that `point` (a direction's ReferencePoints; `where`: "the baseline", ...) is degenerate."""
    if point.degenerate:
        gap = point.copy - point.unrelated
        warnings.warn(
            RescaleWarning(
                f"BARTScore: {where}'s {direction} reference points barely differ (a copy scores {point.copy:.4f} on "
                f"average, an unrelated text {point.unrelated:.4f}: {gap:.4g} apart, under {DEGENERATE_SPREAD:.0%} of "
                f"their size), so each unit of raw score is {1 / gap:.3g} rescaled units and rescaled scores fall far "
                f"outside 0..1",
                remedy="make the reference points from more varied texts",
            ),
            stacklevel=stacklevel + 1,
        )


def point_directions(directions: Sequence[str]) -> list[str]:
    """The directions whose reference points `directions` need (f_score needs precision's and recall's)."""
    return [
        d for d in POINT_DIRECTIONS if d in directions or (d in ("precision", "recall") and "f_score" in directions)
    ]


def with_f_score(points: Mapping[str, ReferencePoints]) -> dict[str, ReferencePoints]:
    """Adds f_score's points (the means of precision's and recall's) when both are there."""
    points = dict(points)
    if "precision" in points and "recall" in points:
        precision, recall = points["precision"], points["recall"]
        points["f_score"] = ReferencePoints(
            (precision.unrelated + recall.unrelated) / 2, (precision.copy + recall.copy) / 2
        )
    return points


def rescaled_scores(
    scores: Mapping[str, npt.ArrayLike], points: Mapping[str, ReferencePoints]
) -> dict[str, npt.NDArray[np.float64]]:
    """{direction: rescaled scores} for each direction of `scores` (direction -> raw scores). A direction whose copy
    does not score above its unrelated texts has no scale: its rescaled scores are NaN, with a warning. f_score's are
    the mean of rescaled precision and rescaled recall (which `scores` must then hold too), so that a copy gets 1 and
    an unrelated text 0 in every direction; f_score's own points (the means of precision's and recall's) are those
    of a copy and an unrelated text, and its scale is linear in precision and recall, not in raw f_score."""
    rescaled = {}
    for direction, values in scores.items():
        if direction == "f_score":
            continue
        point = points[direction]
        if not point.ordered:
            warnings.warn(
                RescaleWarning(
                    f"BARTScore: {direction} cannot be rescaled: a copy scores {point.copy:.4f} on average and an "
                    f"unrelated text {point.unrelated:.4f}, so this model does not tell a copy from an unrelated text "
                    f"here; its rescaled scores are NaN"
                ),
                stacklevel=6,  # the caller of BARTScorer.score_directions (through direction_results)
            )
        warn_if_degenerate(direction, point, "the rescaling", stacklevel=6)
        rescaled[direction] = point.rescale(values)
    if "f_score" in scores:
        rescaled["f_score"] = (rescaled["precision"] + rescaled["recall"]) / 2
    return rescaled


# ---------------------------------------------------------------------------------------------------------------------
# Sampling reference pairs


@dataclass
class ReferencePairs:
    """The (condition, target) pairs of each reference point's sample, and the samples each direction uses."""

    samples: dict  # sample key -> [(condition, target), ...]
    points_of: dict  # direction -> (unrelated sample key, copy sample key)
    label: str  # the signature's rescale field

    def points(
        self, sample_scores: Mapping[Any, Sequence[float] | npt.NDArray[np.float64]]
    ) -> dict[str, ReferencePoints]:
        """{direction: ReferencePoints} from the scores of each sample (sample key -> one score per pair)."""
        return {
            direction: ReferencePoints(float(np.mean(sample_scores[unrelated])), float(np.mean(sample_scores[copy])))
            for direction, (unrelated, copy) in self.points_of.items()
        }


def document_ids(
    count: int, sources: Sequence[str] | None = None, references: Sequence[Sequence[str]] | None = None
) -> list[int]:
    """One id per row; rows that share a source or any reference belong to one document (connected components)."""
    parent = list(range(count))

    def root(row: int) -> int:
        while parent[row] != row:
            parent[row] = parent[parent[row]]
            row = parent[row]
        return row

    first_row: dict[object, int] = {}
    for row in range(count):
        keys = [("source", sources[row])] if sources is not None else []
        keys += [("reference", ref) for ref in references[row]] if references is not None else []
        for key in keys:
            other = first_row.setdefault(key, row)
            parent[root(row)] = root(other)
    return [root(row) for row in range(count)]


# What a library caller whose rows are all one document can do instead.
LIBRARY_REMEDY: tuple[Part, ...] = (
    "pass unrelated texts of your own as ",
    Mention("corpus_points.unrelated_texts"),
    " or rescale with a baseline file (",
    Mention("rescale", "baseline"),
    ")",
)
RESCALE_CORPUS = Mention("rescale", "corpus")


def one_document_error(
    rows: int,
    *,
    what: Part = RESCALE_CORPUS,
    option: str | None = "rescale",
    remedy: Sequence[Part] | Part = LIBRARY_REMEDY,
) -> InputError:
    """The error for `rows` rows (as the caller gave them) that are all one document, so no unrelated pair exists:
    `what` needs the pairs (the option `option`, Mentioned, or a baseline), `remedy` says what to do."""
    rows_are = "the 1 row is" if rows == 1 else f"all {rows} rows are"
    return InputError(
        what,
        f" needs unrelated pairs, from different documents, but {rows_are} one document (rows that share a source or "
        f"a reference are one document)",
        option=option,
        value="corpus" if what == RESCALE_CORPUS else NOT_GIVEN,
        remedy=remedy,
    )


def corpus_documents(
    count: int,
    sources: Sequence[str] | None = None,
    references: Sequence[Sequence[str]] | None = None,
    *,
    what: Part = RESCALE_CORPUS,
    option: str | None = "rescale",
    remedy: Sequence[Part] | Part = LIBRARY_REMEDY,
) -> list[int]:
    """document_ids of `count` rows, refusing rows that are all one document: rescale='corpus' draws its unrelated
    pairs from different documents. Callers that repeat rows (one copy per system) pass the rows as given: repeated
    rows share their source and references, so they never add a document."""
    documents = document_ids(count, sources, references)
    if count and len(set(documents)) < 2:
        raise one_document_error(count, what=what, option=option, remedy=remedy)
    return documents


def scored_by_direction(scorer: ScorerIdentity) -> bool:
    """Whether `scorer` scores each direction under an instruction of its own (chat scoring), so that its reference
    points need samples scored for each direction (sample_reference_pairs' by_direction)."""
    return scorer.options.chat_settings is not None


def sample_reference_pairs(
    rows: dict,
    documents: list,
    directions: Sequence[str],
    *,
    roles: dict = ROLES,
    pairs: int = DEFAULT_PAIRS,
    seed: int = DEFAULT_SEED,
    unrelated_texts: Sequence[str] | None = None,
    by_direction: bool = False,
) -> ReferencePairs:
    """The reference pairs of `directions` (of POINT_DIRECTIONS) for a corpus.

    rows: role -> one list of texts per row; documents: one id per row (see document_ids); roles: direction ->
    (condition role, target role). Unrelated: a condition and a target of rows from different documents (or, with
    unrelated_texts, each of those texts as the condition); copy: a target given itself. Directions that share a
    sample (faithfulness and precision share their copies) share its pairs. The `pairs` budget is split equally among
    the samples, at least one pair each; a sample whose pairs all fit is taken whole (its mean is then exact), a larger
    one is drawn at random (seeded): unrelated pairs uniformly, with replacement, copies without.

    by_direction: for a scorer that scores each direction its own way (chat scoring's instructions), every direction
    gets its samples under keys of its own, (direction, sample key): directions that would share a sample score its
    pairs each under their own instruction, and the budget is split among these samples."""
    points_of: dict[str, tuple[Any, ...]] = {}  # direction -> its sample keys (unrelated, copy)
    for direction in directions:
        condition_role, target_role = roles[direction]
        unrelated = ("unrelated", "fixed texts" if unrelated_texts else condition_role, target_role)
        points_of[direction] = (unrelated, ("copy", target_role))
    if not len(documents):
        raise InputError("rescaling needs texts to take reference points from; there are none")
    if not unrelated_texts and len(set(documents)) < 2:  # callers that repeat rows check first (corpus_documents)
        raise one_document_error(len(documents))
    keys = list(dict.fromkeys(key for both in points_of.values() for key in both))
    share = max(1, pairs // (2 * len(points_of) if by_direction else len(keys)))  # the budget over what is scored
    items = {}  # role -> its distinct (text, document) items

    def items_of(role: str) -> list[tuple[str, int]]:
        if role not in items:
            items[role] = _distinct_items(rows[role], documents)
        return items[role]

    samples = {}
    for key in keys:
        rng = np.random.default_rng([seed, zlib.crc32(repr(key).encode("utf-8"))])
        targets = items_of(key[-1])
        if key[0] == "copy":
            texts = list(dict.fromkeys(text for text, _ in targets))
            chosen = _subset(len(texts), share, rng)
            samples[key] = [(texts[i], texts[i]) for i in chosen]
        elif unrelated_texts:
            texts = list(dict.fromkeys(text for text, _ in targets))
            chosen = _subset(len(unrelated_texts) * len(texts), share, rng)
            samples[key] = [(unrelated_texts[i // len(texts)], texts[i % len(texts)]) for i in chosen]
        else:
            samples[key] = _unrelated_pairs(items_of(key[1]), targets, share, rng)
    scored = sum(len(sample) for sample in samples.values())
    if scored < pairs:
        warnings.warn(
            FewerReferencePairsWarning(
                f"BARTScore: {pairs} reference pairs were asked for, but the texts give only {scored} distinct "
                f"ones (copies and unrelated pairs); all {scored} were scored, and are what the reference points are "
                f"made of"
            ),
            stacklevel=3,
        )
    digest = hashlib.sha256(
        json.dumps([pairs, seed, [[list(key), samples[key]] for key in keys]], ensure_ascii=False).encode("utf-8")
    ).hexdigest()[:12]
    if by_direction:
        samples = {(direction, key): samples[key] for direction, both in points_of.items() for key in both}
        points_of = {direction: tuple((direction, key) for key in both) for direction, both in points_of.items()}
    return ReferencePairs(samples, points_of, f"corpus-{digest}")


def _distinct_items(texts_per_row: Sequence[Sequence[str]], documents: Sequence[int]) -> list[tuple[str, int]]:
    """(text, document) of every text in the role, each once, in order of first appearance."""
    return list(dict.fromkeys((text, document) for texts, document in zip(texts_per_row, documents) for text in texts))


def _subset(count: int, share: int, rng: np.random.Generator) -> Sequence[int]:
    """All of range(count) when it fits in `share`, else `share` of them drawn without replacement (in order)."""
    if count <= share:
        return range(count)
    return np.sort(rng.choice(count, size=share, replace=False)).tolist()


def _unrelated_pairs(
    conditions: Sequence[tuple[str, int]],
    targets: Sequence[tuple[str, int]],
    share: int,
    rng: np.random.Generator,
) -> list[tuple[str, str]]:
    """Pairs of a condition item and a target item from different documents (there are some: every row has texts in
    every role, and there are two documents or more): all of them when they fit in `share`, else `share` drawn
    uniformly (with replacement) among all such pairs."""
    order = sorted(range(len(conditions)), key=lambda i: conditions[i][1])  # conditions grouped by document
    condition_docs = np.array([conditions[i][1] for i in order])
    first: dict[object, int] = {}
    for position, doc in enumerate(condition_docs.tolist()):
        first.setdefault(doc, position)
    counts = {doc: int(n) for doc, n in zip(*np.unique(condition_docs, return_counts=True))}
    others = np.array([len(conditions) - counts.get(doc, 0) for _, doc in targets])  # valid conditions per target
    population = int(others.sum())

    def condition_at(target: int, k: int) -> str:  # the k-th condition outside the target's document

        doc = targets[target][1]
        start = first.get(doc, len(conditions))
        position = k if k < start else k + counts.get(doc, 0)
        return conditions[order[position]][0]

    if population <= share:
        return [(condition_at(t, k), targets[t][0]) for t in range(len(targets)) for k in range(others[t])]
    chosen = rng.choice(len(targets), size=share, p=others / population)
    offsets = (rng.random(share) * others[chosen]).astype(np.int64)
    return [(condition_at(int(t), int(k)), targets[t][0]) for t, k in zip(chosen, offsets)]
