"""Scoring groups of (condition, target) pairs in one engine call, each pair under every prompt phrase.

The directions layer and baseline files both score this way: every group's pairs (a direction's, a reference point's
sample) go to the engine together, so that texts shared across groups are planned once, and each pair's score is the
mean over the prompt phrases, as in the original scripts."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .options import ScoringOptions

Pair = tuple[str, str]


def apply_prompt(condition: str, target: str, prompt: str | None, side: str) -> Pair:
    """The original code's strings: the encoder side appends " <prompt>,", the decoder side prepends "<prompt>, "."""
    if prompt is None:
        return condition, target
    if side == "encoder":
        return f"{condition} {prompt},", target
    return condition, f"{prompt}, {target}"


def score_pair_groups(
    scorer: Any, groups: dict[Hashable, Sequence[Pair]], options: ScoringOptions
) -> dict[Hashable, np.ndarray] | None:
    """Scores groups of (condition, target) pairs (key -> pairs) in one engine call, each pair under every prompt of
    `options`, and returns each group's scores averaged over the prompts (key -> array), or None on ranks that get no
    results. A group's key is a direction name or a reference point's sample key (bart_score.rescale)."""
    conditions, targets, spans = [], [], {}
    for key, pairs in groups.items():
        start = len(conditions)
        for condition, target in pairs:
            for phrase in options.prompts:
                prompted = apply_prompt(condition, target, phrase, options.prompt_side)
                conditions.append(prompted[0])
                targets.append(prompted[1])
        spans[key] = slice(start, len(conditions))
    languages = {}
    if getattr(scorer, "source_lang", None) is not None:  # families with language codes: sources in theirs
        languages["condition_lang"] = [None] * len(conditions)
        for key, span in spans.items():
            language = scorer.source_lang if _condition_role(key) == "source" else scorer.target_lang
            languages["condition_lang"][span] = [language] * (span.stop - span.start)
    flat_scores = scorer.score(
        conditions,
        targets,
        options.batch_size,
        max_tokens=options.max_tokens,
        show_progress=options.show_progress,
        **languages,
    )
    if flat_scores is None:
        return None
    flat_scores = np.asarray(flat_scores, dtype=np.float64)
    return {key: flat_scores[span].reshape(-1, len(options.prompts)).mean(axis=1) for key, span in spans.items()}


def _condition_role(key: Hashable) -> str:
    """Which kind of text a group's conditions are: a direction's, or a reference-point sample's (rescale keys)."""
    if isinstance(key, str):
        return {"faithfulness": "source", "precision": "reference", "recall": "prediction"}[key]
    return key[1]  # ("unrelated", condition role, target role) or ("copy", role)
