"""Scoring groups of (condition, target) pairs in one engine call, each pair under every prompt phrase.

The directions layer and baseline files both score this way: every group's pairs (a direction's, a reference point's
sample) go to the engine together, so that texts shared across groups are planned once, and each pair's score is the
mean over the prompt phrases, as in the original scripts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .rescale import POINT_DIRECTIONS, ROLES

if TYPE_CHECKING:
    from .options import ScoringOptions

Pair = tuple[str, str]
# A group of pairs: a direction's name, or a reference point's sample key (a tuple, see bart_score.rescale).
GroupKey = str | tuple[Any, ...]


def apply_prompt(condition: str, target: str, prompt: str | None, side: str) -> Pair:
    """The original code's strings: the encoder side appends " <prompt>,", the decoder side prepends "<prompt>, "."""
    if prompt is None:
        return condition, target
    if side == "encoder":
        return f"{condition} {prompt},", target
    return condition, f"{prompt}, {target}"


def score_pair_groups(
    scorer: Any, groups: Mapping[GroupKey, Sequence[Pair]], options: ScoringOptions
) -> dict[GroupKey, np.ndarray] | None:
    """Scores groups of (condition, target) pairs (key -> pairs) in one engine call, each pair under every prompt of
    `options`, and returns each group's scores averaged over the prompts (key -> array), or None on ranks that get no
    results. A group's key is a direction name or a reference point's sample key (bart_score.rescale)."""
    conditions: list[str] = []
    targets: list[str] = []
    spans: dict[GroupKey, slice] = {}
    for key, pairs in groups.items():
        start = len(conditions)
        for condition, target in pairs:
            for phrase in options.prompts:
                prompted = apply_prompt(condition, target, phrase, options.prompt_side)
                conditions.append(prompted[0])
                targets.append(prompted[1])
        spans[key] = slice(start, len(conditions))
    per_pair: dict[str, list[str | None]] = {}  # score()'s per-pair keywords
    if getattr(scorer, "source_lang", None) is not None:  # families with language codes: sources in theirs
        per_pair["condition_lang"] = [None] * len(conditions)
        for key, span in spans.items():
            language = scorer.source_lang if _group_roles(key)[1] == "source" else scorer.target_lang
            per_pair["condition_lang"][span] = [language] * (span.stop - span.start)
    if getattr(scorer, "instructions", None) is not None:  # chat scoring: each direction's pairs under its instruction
        per_pair["instruction"] = [None] * len(conditions)
        for key, span in spans.items():
            instruction = scorer.instructions[_group_roles(key)[0]]
            per_pair["instruction"][span] = [instruction] * (span.stop - span.start)
    flat_scores = scorer.score(
        conditions,
        targets,
        options.batch_size,
        max_tokens=options.max_tokens,
        show_progress=options.show_progress,
        **per_pair,
    )
    if flat_scores is None:
        return None
    flat_scores = np.asarray(flat_scores, dtype=np.float64)
    return {key: flat_scores[span].reshape(-1, len(options.prompts)).mean(axis=1) for key, span in spans.items()}


def _group_roles(key: GroupKey) -> tuple[str | None, str]:
    """(the direction a group's pairs are scored for, or None, and which kind of text its conditions are) for a
    direction's pairs, a reference-point sample (rescale keys: ("unrelated", condition role, target role) or
    ("copy", role)), or a sample scored for one direction ((direction, sample key), under chat scoring)."""
    if isinstance(key, str):
        return key, ROLES[key][0]
    if key[0] in POINT_DIRECTIONS:
        return key[0], key[1][1]
    return None, key[1]
