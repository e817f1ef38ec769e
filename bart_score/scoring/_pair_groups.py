"""Scoring groups of (condition, target) pairs in one engine call, each pair under every prompt phrase.

The directions layer and baseline files both score this way: every group's pairs (a direction's, a reference point's
sample) go to the engine together, so that texts shared across groups are planned once, and each pair's score is the
mean over the prompt phrases, as in the original scripts. The call is planned first (plan_pair_groups: the pairs and
their keywords, as a PairCall), then scored (call_scores), then averaged (PairCall.averaged), so that a caller can
gather the pairs of several calls before any scoring (meta-eval's grid)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..baselines.rescale import POINT_DIRECTIONS, ROLES
from .protocols import Scorer, ScorerIdentity

if TYPE_CHECKING:
    from ..options import ScoringOptions

Pair = tuple[str, str]
# A group of pairs: a direction's name, or a reference point's sample key (a tuple, see bart_score.baselines.rescale).
GroupKey = str | tuple[Any, ...]


def apply_prompt(condition: str, target: str, prompt: str | None, side: str) -> Pair:
    """The original code's strings: the encoder side appends " <prompt>,", the decoder side prepends "<prompt>, "."""
    if prompt is None:
        return condition, target
    if side == "encoder":
        return f"{condition} {prompt},", target
    return condition, f"{prompt}, {target}"


@dataclass(frozen=True)
class PairCall:
    """One engine call's pairs: every group's pairs under every prompt phrase, in order, with score()'s per-pair
    keywords (None: not needed), and where each group's pairs are in it."""

    conditions: list[str]
    targets: list[str]
    condition_lang: list[str] | None
    instruction: list[str] | None
    spans: dict[GroupKey, slice]
    phrases: int  # the prompt phrases each pair is scored under

    def averaged(self, scores: Sequence[float]) -> dict[GroupKey, np.ndarray]:
        """Each group's scores (key -> array), each pair's averaged over the prompt phrases, from the call's scores
        (one per pair of the call, in its order)."""
        values = np.asarray(scores, dtype=np.float64)
        return {key: values[span].reshape(-1, self.phrases).mean(axis=1) for key, span in self.spans.items()}


def plan_pair_groups(
    scorer: ScorerIdentity, groups: Mapping[GroupKey, Sequence[Pair]], options: ScoringOptions
) -> PairCall:
    """The one engine call that scores groups of (condition, target) pairs (key -> pairs), each pair under every prompt
    of `options`, under the scorer's language codes (mBART) or each direction's chat instruction. A group's key is a
    direction name or a reference point's sample key (bart_score.baselines.rescale)."""
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
    # score()'s per-pair keywords, from each pair's (direction, condition role): the spans follow one another
    roles = [_group_roles(key) for key, span in spans.items() for _ in range(span.start, span.stop)]
    condition_lang = instruction = None
    settings = scorer.options
    source_lang, target_lang, chat = settings.source_lang, settings.target_lang, settings.chat_settings
    if source_lang is not None and target_lang is not None:  # mBART (it has both): sources in their language
        condition_lang = [source_lang if role == "source" else target_lang for _, role in roles]
    if chat is not None:  # chat scoring: each direction's pairs under its instruction
        instruction = []
        for direction, _ in roles:
            assert direction is not None  # chat scoring samples reference points for each direction
            instruction.append(chat.instructions[direction])
    return PairCall(conditions, targets, condition_lang, instruction, spans, len(options.prompts))


def call_scores(scorer: Scorer, call: PairCall, options: ScoringOptions) -> list[float] | None:
    """The call's scores, one per pair, from one scorer.score call batched as `options` say; None on ranks that get
    no results."""
    return scorer.score(
        call.conditions,
        call.targets,
        options.batch_size,
        max_tokens=options.max_tokens,
        show_progress=options.show_progress,
        condition_lang=call.condition_lang,
        instruction=call.instruction,
    )


def score_pair_groups(
    scorer: Scorer, groups: Mapping[GroupKey, Sequence[Pair]], options: ScoringOptions
) -> dict[GroupKey, np.ndarray] | None:
    """Scores groups of (condition, target) pairs (key -> pairs) in one engine call, each pair under every prompt of
    `options`, and returns each group's scores averaged over the prompts (key -> array), or None on ranks that get no
    results: plan_pair_groups, call_scores, PairCall.averaged."""
    call = plan_pair_groups(scorer, groups, options)
    scores = call_scores(scorer, call, options)
    return None if scores is None else call.averaged(scores)


def _group_roles(key: GroupKey) -> tuple[str | None, str]:
    """(the direction a group's pairs are scored for, or None, and which kind of text its conditions are) for a
    direction's pairs, a reference-point sample (rescale keys: ("unrelated", condition role, target role) or
    ("copy", role)), or a sample scored for one direction ((direction, sample key), under chat scoring)."""
    if isinstance(key, str):
        return key, ROLES[key][0]
    if key[0] in POINT_DIRECTIONS:
        return key[0], key[1][1]
    return None, key[1]
