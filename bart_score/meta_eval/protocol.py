"""The meta-evaluation protocol of the BARTScore release (its analysis.py at commit 248f511), on scipy.stats.

How a metric's scores meet the human scores, by the protocol a benchmark uses:

    summary_level      SummEval, REALSumm, NeR18 (SUMStat.evaluate_summary): for each document, the correlation between
                       the human and the metric scores of its systems; documents where either is constant are skipped;
                       the mean over the remaining documents. Spearman and Kendall's tau-b as the release; Pearson
                       computed the same way (the release does not report it).
    pairwise_accuracy  Rank19 (SUMStat.get_fact_acc): the share of documents whose correct summary the metric scores
                       strictly higher than the incorrect one.
    pearson            QAGS (SUMStat.get_fact_pearson): Pearson over all summaries.
    spearman           data-to-text (D2TStat.evaluate_text): Spearman and Kendall's tau-b over all texts.
    kendall_like       WMT19 DARR (WMTStat.kendall): (concordant - discordant) / pairs, a pair being concordant when the
                       better translation scores strictly higher; a tie counts as discordant.
    kendall            LongDocFACTScore's benchmarks (its utils/correlations.py, kendal_tau_matrix): Kendall's tau-b
                       (scipy.stats.kendalltau) over all summaries of all systems together.

Significance (the release's sig_test_two): 1000 rounds; each reshuffles the same document list (Python's random, seed
666, documents in the order of the release's file) and keeps its first 80%. Metric A wins a round when its measure on
those documents is strictly higher than B's; A is significantly better when it wins more than 950 rounds, worse when it
wins fewer than 50. On summary_level benchmarks a round compares Spearman over the documents where neither metric nor
the human score is constant; on kendall benchmarks, Kendall's tau-b over the records of the round's documents. One
deliberate difference: the release's data-to-text test (D2TStat.sig_test_two) never
empties its lists between rounds, so its round k is scored on rounds 1..k together; here each round has its own
documents, as in the release's other tests."""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from ..errors import InputError
from ..messages import Mention

PROTOCOLS = ("summary_level", "pairwise_accuracy", "pearson", "spearman", "kendall_like", "kendall")
# The measure each protocol reports first (the paper's), then the others it computes.
MEASURES = {
    "summary_level": ("spearman", "kendall", "pearson"),
    "pairwise_accuracy": ("accuracy",),
    "pearson": ("pearson",),
    "spearman": ("spearman", "kendall"),
    "kendall_like": ("kendall_like",),
    "kendall": ("kendall",),
}
ROUNDS, SUBSET_FRACTION, SEED = 1000, 0.8, 666
# Per-record values: human or metric scores.
Values = Sequence[float] | np.ndarray
WIN_THRESHOLD = 950  # of ROUNDS: more wins than this is significantly better, fewer than ROUNDS - this worse


def _documents(doc_ids: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    """Document id -> positions of its records, documents in order of first appearance."""
    documents: dict[Hashable, list[int]] = {}
    for position, doc_id in enumerate(doc_ids):
        documents.setdefault(doc_id, []).append(position)
    return documents


def _checked(doc_ids: Sequence[Hashable], human: Values, scores: Values) -> tuple[np.ndarray, np.ndarray]:
    human = np.asarray(human, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    for name, values in (("human", human), ("scores", scores)):
        if len(values) != len(doc_ids):
            raise InputError.entries_differ(Mention(name), len(values), Mention("doc_ids"), len(doc_ids))
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise InputError(
                Mention(name, index=int(bad[0])), f" is {values[bad[0]]}; every score must be a finite number"
            )
    return human, scores


def _pairs(doc_ids: Sequence[Hashable], human: np.ndarray) -> np.ndarray:
    """For documents that judge two records (Rank19, WMT19): positions of (preferred, other) records per document."""
    pairs = []
    for doc_id, positions in _documents(doc_ids).items():
        if len(positions) != 2 or human[positions[0]] == human[positions[1]]:
            raise InputError(
                f"document {doc_id!r} needs exactly two records with different human scores (the preferred one and "
                f"the other); it has {len(positions)} with human scores {[float(human[p]) for p in positions]}"
            )
        first, second = positions
        pairs.append((first, second) if human[first] > human[second] else (second, first))
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2)


def _unknown_protocol(protocol: object) -> InputError:
    return InputError(
        Mention("protocol"), f" must be one of {PROTOCOLS}, got {protocol!r}", option="protocol", value=protocol
    )


def _is_constant(values: np.ndarray) -> bool:
    return len(set(values.tolist())) == 1


def correlate(protocol: str, doc_ids: Sequence[Hashable], human: Values, scores: Values) -> dict[str, float]:
    """The protocol's measures of one metric against one human judgment, with the number of documents used."""
    if protocol not in PROTOCOLS:
        raise _unknown_protocol(protocol)
    human, scores = _checked(doc_ids, human, scores)
    if protocol == "summary_level":
        per_document = []
        for positions in _documents(doc_ids).values():
            truth, predicted = human[positions], scores[positions]
            if _is_constant(truth) or _is_constant(predicted):
                continue
            per_document.append(
                (
                    stats.spearmanr(truth, predicted)[0],
                    stats.kendalltau(truth, predicted)[0],
                    stats.pearsonr(truth, predicted)[0],
                )
            )
        if not per_document:
            return {"spearman": float("nan"), "kendall": float("nan"), "pearson": float("nan"), "documents": 0}
        means = np.mean(np.asarray(per_document), axis=0)
        return {"spearman": means[0], "kendall": means[1], "pearson": means[2], "documents": len(per_document)}
    if protocol in ("pairwise_accuracy", "kendall_like"):
        pairs = _pairs(doc_ids, human)
        concordant = int(np.sum(scores[pairs[:, 0]] > scores[pairs[:, 1]]))
        documents = len(pairs)
        if protocol == "pairwise_accuracy":
            return {"accuracy": concordant / documents, "documents": documents}
        return {"kendall_like": (concordant - (documents - concordant)) / documents, "documents": documents}
    documents = len(_documents(doc_ids))
    if protocol == "kendall":
        return {"kendall": stats.kendalltau(human, scores)[0], "documents": documents}
    if protocol == "pearson":
        return {"pearson": stats.pearsonr(human, scores)[0], "documents": documents}
    return {
        "spearman": stats.spearmanr(human, scores)[0],
        "kendall": stats.kendalltau(human, scores)[0],
        "documents": documents,
    }


def bootstrap_subsets(
    doc_ids: Sequence[Hashable], *, rounds: int = ROUNDS, fraction: float = SUBSET_FRACTION, seed: int = SEED
) -> np.ndarray:
    """The release's document subsets: (rounds, kept) positions into the list of distinct documents (first-appearance
    order), drawn by reshuffling that one list with Python's random seeded with `seed`, as sig_test_two does."""
    order = list(range(len(_documents(doc_ids))))
    draw = random.Random(seed)
    kept = int(fraction * len(order))
    subsets = np.empty((rounds, kept), dtype=np.int64)
    for round_ in range(rounds):
        draw.shuffle(order)
        subsets[round_] = order[:kept]
    return subsets


class _SubsetMeasures:
    """Each metric's measure on every bootstrap subset, computed once and shared by all the pairs it is tested in."""

    def __init__(self, protocol: str, doc_ids: Sequence[Hashable], human: Values, subsets: np.ndarray) -> None:
        self.protocol = protocol
        self.doc_ids = doc_ids
        self.human = np.asarray(human, dtype=np.float64)
        self.subsets = subsets
        documents = list(_documents(doc_ids).values())
        if protocol == "summary_level":
            self.documents = documents
            self.human_constant = np.array([_is_constant(self.human[p]) for p in documents])
        elif protocol in ("pairwise_accuracy", "kendall_like"):
            self.pairs = _pairs(doc_ids, self.human)
        elif protocol == "kendall":
            self.records = [np.concatenate([documents[d] for d in subset]) for subset in subsets]
        else:
            if any(len(positions) != 1 for positions in documents):
                raise InputError(f"the {protocol!r} protocol's significance test needs one record per document")
            self.records = np.asarray([positions[0] for positions in documents])[subsets]

    def per_metric(self, scores: Values) -> Any:  # an array, or (Spearman, constancy) arrays for summary_level
        """What a metric contributes to its rounds: per-document Spearman and constancy (summary_level), or the
        measure on each subset."""
        _, scores = _checked(self.doc_ids, self.human, scores)
        if self.protocol == "summary_level":
            spearman = np.full(len(self.documents), np.nan)
            constant = np.zeros(len(self.documents), dtype=bool)
            for index, positions in enumerate(self.documents):
                constant[index] = _is_constant(scores[positions])
                if not (constant[index] or self.human_constant[index]):
                    spearman[index] = stats.spearmanr(self.human[positions], scores[positions])[0]
            return spearman, constant
        if self.protocol in ("pairwise_accuracy", "kendall_like"):
            # Both measures order the same way as the count of correctly ordered pairs (subsets are equally large).
            concordant = scores[self.pairs[:, 0]] > scores[self.pairs[:, 1]]
            return concordant[self.subsets].sum(axis=1)
        correlation = {"pearson": stats.pearsonr, "kendall": stats.kendalltau}.get(self.protocol, stats.spearmanr)
        return np.array([correlation(self.human[rows], scores[rows])[0] for rows in self.records])

    def wins(self, first: Any, second: Any) -> int:  # two metrics' per_metric
        """Rounds in which the first metric's measure is strictly higher than the second's."""
        if self.protocol != "summary_level":
            return int(np.sum(first > second))
        (spearman_a, constant_a), (spearman_b, constant_b) = first, second
        usable = ~(constant_a | constant_b | self.human_constant)[self.subsets]
        count = usable.sum(axis=1)
        with np.errstate(invalid="ignore"):  # a subset with no usable document has no mean (NaN never wins)
            mean_a = np.where(usable, spearman_a[self.subsets], 0.0).sum(axis=1) / count
            mean_b = np.where(usable, spearman_b[self.subsets], 0.0).sum(axis=1) / count
        return int(np.sum(mean_a > mean_b))


def significance(
    protocol: str,
    doc_ids: Sequence[Hashable],
    human: Values,
    metrics: Mapping[str, Values],
    *,
    rounds: int = ROUNDS,
    fraction: float = SUBSET_FRACTION,
    seed: int = SEED,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The release's pairwise significance test between every two metrics (`metrics`: name -> per-record scores).

    Returns (tests, best): one dict per pair (a, b, wins of a out of rounds, outcome 1 if a is significantly better,
    -1 if b is, 0 if neither), and the metrics no other metric beats significantly (the release's "Best metrics")."""
    if protocol not in PROTOCOLS:
        raise _unknown_protocol(protocol)
    names = list(metrics)
    subsets = bootstrap_subsets(doc_ids, rounds=rounds, fraction=fraction, seed=seed)
    measures = _SubsetMeasures(protocol, doc_ids, human, subsets)
    contributions = {name: measures.per_metric(metrics[name]) for name in names}
    high = WIN_THRESHOLD * rounds // ROUNDS
    low = rounds - high
    tests, beaten = [], set()
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            wins = measures.wins(contributions[first], contributions[second])
            outcome = 1 if wins > high else -1 if wins < low else 0
            tests.append({"a": first, "b": second, "wins": wins, "rounds": rounds, "outcome": outcome})
            if outcome:
                beaten.add(second if outcome == 1 else first)
    return tests, [name for name in names if name not in beaten]
