"""`bartscore compare`: means with bootstrap confidence intervals, and paired significance tests between systems."""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..corpora._outputs import json_text
from ..errors import InputError
from ..options import COUNT_SUFFIXES
from ._arguments import add_cache_arguments, add_long_source_arguments, add_rescale_arguments, decimal, integer
from ._requests import CorpusRequest, checked_request, score_all_systems


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], parents: list[argparse.ArgumentParser]
) -> None:
    parser = commands.add_parser("compare", parents=parents, help="significance tests between two or more systems")
    parser.add_argument("--resamples", type=integer, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--alpha", type=decimal, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--seed", type=integer, default=12345, help="bootstrap seed (default 12345)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    add_long_source_arguments(parser)
    add_cache_arguments(parser, "without it, nothing is kept")
    add_rescale_arguments(
        parser,
        "each <direction>_rescaled section has the same winners and p-values as the raw one, on a scale that says "
        "where the means fall.",
    )
    parser.set_defaults(check=check, run=run)


@dataclass(frozen=True)
class CompareRequest:
    """What `bartscore compare` asks for, checked: the corpus and its settings, the bootstrap's resamples, significance
    level and seed, and whether the comparison is printed as JSON."""

    scoring: CorpusRequest
    resamples: int
    alpha: float
    seed: int
    json: bool


def check(args: argparse.Namespace) -> CompareRequest:
    scoring = checked_request(args)
    if len(scoring.corpus.systems) < 2:
        raise InputError(f"compare needs two or more systems; got {list(scoring.corpus.systems)}")
    from ..stats import MAX_RESAMPLES

    if not 1 <= args.resamples <= MAX_RESAMPLES or not 0 < args.alpha < 1 or args.seed < 0:
        raise InputError(
            f"--resamples must be from 1 to {MAX_RESAMPLES:,}, --alpha between 0 and 1 and --seed at least 0"
        )
    return CompareRequest(scoring, args.resamples, args.alpha, args.seed, args.json)


def run(request: CompareRequest) -> None:
    from ..stats import compare_directions

    per_system, signature = score_all_systems(request.scoring)
    if per_system is None:  # a rank other than 0 under torchrun (rank 0 reports)
        return
    segments = len(next(iter(request.scoring.corpus.systems.values())))
    per_system = {  # the counts of --long-source windows are no scores to compare
        name: {d: v for d, v in scores.items() if not d.endswith(COUNT_SUFFIXES)} for name, scores in per_system.items()
    }
    comparisons = compare_directions(per_system, resamples=request.resamples, alpha=request.alpha, seed=request.seed)
    if request.json:
        print(json_text({"signature": signature, "segments": segments, "directions": comparisons}, indent=2))
    else:
        print("\n".join(comparison_lines(comparisons, segments, signature)))


def comparison_lines(comparisons: Mapping[str, Mapping[str, Any]], segments: int, signature: str | None) -> list[str]:
    lines = []
    for direction, comparison in comparisons.items():
        lines.append(
            f"== {direction}: mean with {comparison['confidence']:.0%} bootstrap CI "
            f"({comparison['resamples']} resamples of {segments} segments)"
        )
        width = max(6, *(len(s["system"]) for s in comparison["systems"]))
        for system in sorted(comparison["systems"], key=lambda s: (math.isnan(s["mean"]), -s["mean"])):
            lines.append(
                f"  {system['system']:<{width}}  {system['mean']:9.4f}  "
                f"[{system['ci_low']:.4f}, {system['ci_high']:.4f}]"
            )
        lines.append(
            f"  {'A':<{width}}  {'B':<{width}}  {'A - B':>9}  {'bootstrap p':>11}  {'t-test p':>9}  winner "
            f"(both p < {comparison['alpha']})"
        )
        for pair in comparison["pairs"]:
            lines.append(
                f"  {pair['system_a']:<{width}}  {pair['system_b']:<{width}}  {pair['delta']:+9.4f}  "
                f"{pair['bootstrap_p']:11.4f}  {pair['t_test_p']:9.4f}  {pair['winner'] or _no_winner(pair)}"
            )
        wins = {
            s["system"]: sum(p["winner"] == s["system"] for p in comparison["pairs"]) for s in comparison["systems"]
        }
        undefined = [s["system"] for s in comparison["systems"] if math.isnan(s["mean"])]
        if undefined:
            lines.append(
                f"  note: {', '.join(undefined)} {'have' if len(undefined) > 1 else 'has'} NaN scores in {direction}, "
                f"so no mean, interval or test is defined for {'them' if len(undefined) > 1 else 'it'}"
            )
        lines.append(
            "  wins: " + ", ".join(f"{name} {count}" for name, count in sorted(wins.items(), key=lambda item: -item[1]))
        )
    lines.append(f"signature: {signature}")
    return lines


def _no_winner(pair: Mapping[str, Any]) -> str:
    """'tie' when the tests found no difference; 'none' when there is no difference to test (NaN scores)."""
    return "none (NaN)" if math.isnan(pair["delta"]) else "tie"
