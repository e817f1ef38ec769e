"""System comparison: bootstrap confidence intervals, paired bootstrap resampling and the paired t-test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import InputError
from .inputs import whole_number
from .messages import Mention

_RESAMPLED_VALUES = 1 << 24  # bootstrap values held at once (128 MiB of float64)
# The resampled means are kept (8 bytes per system and resample), and the work grows with resamples x segments: a
# bound keeps an absurd request (10^12) from running until the kernel kills it. Published tests use 1,000 to 10,000.
MAX_RESAMPLES = 100_000


def compare_systems(
    scores: Mapping[str, Sequence[float] | np.ndarray],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    alpha: float = 0.05,
    seed: int = 12345,
) -> dict[str, Any]:
    """Compares systems scored on the same segments (`scores`: system name -> per-segment scores).

    For each system: the mean with a bootstrap confidence interval. For each pair: the mean difference, a two-sided
    paired bootstrap p-value (the same resampled segments for both systems, as Koehn 2004 and sacrebleu), a paired
    t-test, and the winner: the better system when both tests find the difference significant at `alpha`, else None
    (JSON's null: a tie, or no test at all). Both are required because on a handful of segments the bootstrap alone
    is far too eager (two segments that agree in sign give p = 0.002); with a single segment the p-values are NaN and
    there is no winner. No correction is made for testing many pairs. Resampling is seeded, so the same inputs give
    the same figures.

    A NaN score (a direction that cannot be rescaled, say) leaves its system's mean undefined: the system's mean and
    interval are NaN, and every pair it is in has a NaN difference, NaN p-values and t statistic, and no winner.
    The same holds for a pair whose difference is undefined (+inf in both systems)."""
    with np.errstate(invalid="ignore"):  # inf - inf: a NaN the figures report, not a warning
        return _compare_systems(scores, resamples, confidence, alpha, seed)


def _compare_systems(
    scores: Mapping[str, Sequence[float] | np.ndarray], resamples: int, confidence: float, alpha: float, seed: int
) -> dict[str, Any]:
    checked = whole_number(resamples)
    if checked is None or not 1 <= checked <= MAX_RESAMPLES:
        raise InputError.must_be(
            Mention("resamples"), f"an integer from 1 to {MAX_RESAMPLES:,}", repr(resamples), value=resamples
        )
    resamples = checked
    names = list(scores)
    if len(names) < 1:
        raise InputError("compare_systems needs at least one system")
    counts = {name: len(scores[name]) for name in names}
    if len(set(counts.values())) != 1 or not counts[names[0]]:
        raise InputError(f"every system needs the same, non-zero number of segments; got {counts}")
    matrix = np.asarray([np.asarray(scores[name], dtype=np.float64) for name in names])
    segments = matrix.shape[1]
    undefined = np.isnan(matrix.mean(axis=1))  # per system: a NaN score (or +inf and -inf) leaves it undefined
    rng = np.random.default_rng(seed)
    chunk = max(1, _RESAMPLED_VALUES // matrix.size)  # resamples at a time, so memory stays flat on long corpora
    resampled_means = np.concatenate(  # (systems, resamples)
        [
            matrix[:, rng.integers(0, segments, size=(min(chunk, resamples - start), segments))].mean(axis=2)
            for start in range(0, resamples, chunk)
        ],
        axis=1,
    )
    tail = (1 - confidence) / 2 * 100
    nan = float("nan")
    systems = [
        {
            "system": name,
            "mean": nan if undefined[i] else float(matrix[i].mean()),
            "ci_low": nan if undefined[i] else float(np.percentile(resampled_means[i], tail)),
            "ci_high": nan if undefined[i] else float(np.percentile(resampled_means[i], 100 - tail)),
        }
        for i, name in enumerate(names)
    ]
    pairs = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            deltas = resampled_means[i] - resampled_means[j]
            delta = nan if undefined[i] or undefined[j] else float(matrix[i].mean() - matrix[j].mean())
            if np.isnan(delta) or np.isnan(deltas).any():  # NaN deltas count as neither side: no p-value at all
                delta = bootstrap_p = t_statistic = t_p = nan
            else:
                not_better = min(int((deltas <= 0).sum()), int((deltas >= 0).sum()))
                # One segment resamples to itself: no evidence either way.
                bootstrap_p = min(1.0, 2 * (not_better + 1) / (resamples + 1)) if segments > 1 else nan
                t_statistic, t_p = paired_t_test(matrix[i], matrix[j])
            significant = bootstrap_p < alpha and t_p < alpha and delta != 0  # False for NaN
            winner = (names[i] if delta > 0 else names[j]) if significant else None
            pairs.append(
                {
                    "system_a": names[i],
                    "system_b": names[j],
                    "delta": delta,
                    "bootstrap_p": bootstrap_p,
                    "t_statistic": t_statistic,
                    "t_test_p": t_p,
                    "winner": winner,
                }
            )
    return {"systems": systems, "pairs": pairs, "resamples": resamples, "confidence": confidence, "alpha": alpha}


def compare_directions(
    per_system: Mapping[str, Mapping[str, Sequence[float] | np.ndarray]], **options: Any
) -> dict[str, dict[str, Any]]:
    """compare_systems for each direction of score_corpus's {system: {direction: scores}}; options as there."""
    directions = next(iter(per_system.values()))
    return {
        direction: compare_systems({name: scores[direction] for name, scores in per_system.items()}, **options)
        for direction in directions
    }


def paired_t_test(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Two-sided paired t-test of mean(a - b) = 0: (t statistic, p-value); both are NaN with fewer than two segments
    or when a difference is NaN (a NaN score, or +inf in both).

    Differences that are all equal have no spread: identical systems give (0, 1), a constant non-zero difference
    (+-inf, 0), where scipy would give NaN."""
    from scipy import stats

    differences = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if len(differences) < 2 or np.isnan(differences).any():
        return float("nan"), float("nan")
    if np.all(differences == differences[0]):
        mean = differences[0]
        return (0.0, 1.0) if mean == 0 else (float(np.copysign(np.inf, mean)), 0.0)
    result = stats.ttest_rel(a, b)
    return float(result.statistic), float(result.pvalue)
