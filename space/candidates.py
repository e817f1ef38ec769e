"""The Compare tab's computation: candidates scored against one source and references, with each direction's
reference points (copy, unrelated) from the same engine call and the tokens for the heatmap; then the tables (0–1
and raw, the best candidate of each direction highlighted, the reference points as their last rows)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from pandas.io.formats.style import Styler

import bart_score
from bart_score.baselines.rescale import DEFAULT_PAIRS as DEFAULT_RESCALE_PAIRS
from bart_score.inputs import counted
from bart_score.options import CorpusPoints, ScoringOptions

from .batch import MISSING_SHOWN
from .form import DIRECTION_LABELS, pairs_per_text, refuse_too_much_work

REFERENCE_ROWS = {"copy": "copy", "unrelated": "unrelated"}  # each text given itself; given unrelated texts
SCALES = ("rescaled", "raw")
BEST_STYLE = "font-weight: bold; background-color: #c8f0c8"
REFERENCE_STYLE = "color: #555; font-style: italic"
BEST_MARK = " ★ best"


@dataclass
class Comparison:
    names: list
    scores: dict  # direction -> one score per candidate
    rescaled: dict  # direction -> one rescaled score per candidate (NaN where the direction has no scale)
    reference_points: dict  # direction -> {"unrelated": raw score, "copy": raw score}
    signature: str
    tokens: list  # per candidate: [(token text, log-probability), ...]
    tokens_given: str  # what the heatmap's tokens are conditioned on, in words
    special_tokens: set  # the tokenizer's special tokens, which the heatmap sets apart
    prompt: str | list | None = None  # the engine's prompt argument: None, a set name or a one-phrase list
    references: int = 0  # how many references each candidate was scored against
    aggregation: str = "mean"


# The unrelated texts of the Compare tab's reference points: every candidate shares the one source, so "unrelated"
# cannot come from other rows; these texts, on unrelated topics and of varied lengths, stand in for them.
UNRELATED_TEXTS = (
    "Preheat the oven to 200 degrees and bake the bread for forty minutes, until the crust is golden.",
    "The train to the coast leaves from platform four at ten past nine.",
    "Water boils at a lower temperature on a mountain, because the air pressure there is lower.",
    "She planted tomatoes, beans and a row of sunflowers along the garden fence.",
    "Please bring a photo ID and your booking number to the front desk.",
    "The museum's new exhibition brings together two hundred paintings from private collections across Europe, "
    "many of them never shown in public before.",
)


def check_compare_work(
    *,
    source: str,
    references: list[str],
    candidates: list[tuple[str, str]],
    directions: list[str],
    prompts: Sequence[str | None],
    max_pairs: int,
    by_direction: bool = False,
) -> None:
    """Refuses a comparison that would need more than max_pairs (condition, text) pairs: each candidate's pairs, the
    reference points' pairs (each target given itself and given each of UNRELATED_TEXTS, at most the engine's
    budget per sample) and the heatmap's, times the prompt's phrases (`prompts`: ScoringOptions.prompts; the heatmap
    is unprompted). by_direction: the model scores each direction under its own instruction (chat), so directions
    share no reference-point sample."""
    count = len(candidates)
    candidate_pairs = pairs_per_text(directions, bool(source), len(references)) * count
    wanted = set(directions) | ({"precision", "recall"} if "f_score" in directions else set())
    on_candidates = [d for d in ("faithfulness", "precision") if d in wanted]  # their samples' targets: candidates
    targets = [count] * (len(on_candidates) if by_direction else min(1, len(on_candidates)))
    targets += [len(references)] * ("recall" in wanted)
    share = max(1, DEFAULT_RESCALE_PAIRS // (2 * len(targets)))  # the engine's budget per sample (unrelated, copy)
    point_pairs = sum(min(share, len(UNRELATED_TEXTS) * n) + min(share, n) for n in targets)
    pairs = (candidate_pairs + point_pairs) * len(prompts) + count
    refuse_too_much_work(
        pairs,
        max_pairs,
        what="these candidates",
        breakdown="candidates × directions and references, + reference points, × prompts",
        advice="fewer candidates, references, directions or prompts",
    )


def compare_candidates(
    scorer, *, source, references, candidates, options: ScoringOptions | None = None, **keywords
) -> Comparison:
    """Scores each candidate against the same source and references, with the reference points of each direction
    (in the same engine call: the candidates and references given themselves, and given UNRELATED_TEXTS), and their
    tokens for the heatmap. `options` (a ScoringOptions, inputs.form_options) or its fields as keywords; the
    Compare tab always rescales with these reference points."""
    options = ScoringOptions.resolve(options, **keywords).replace(
        rescale="corpus", baseline=None, corpus_points=CorpusPoints(unrelated_texts=UNRELATED_TEXTS)
    )
    names = [name for name, _ in candidates]
    texts = [text for _, text in candidates]
    result = scorer.score_directions(
        texts,
        references=[references] * len(texts) if references else None,
        sources=[source] * len(texts) if source else None,
        options=options,
    )
    directions = options.directions_for(has_references=bool(references), has_sources=bool(source))
    # Unprompted tokens given the source (faithfulness), else given the first reference (precision): the text the
    # candidate was written from, or the nearest stand-in for it.
    condition, tokens_given = (source, "the source") if source else (references[0], "the first reference")
    language = scorer.options.source_lang if source else scorer.options.target_lang
    chat = {}  # chat scoring: under the instruction of the direction whose condition this is
    if scorer.options.chat_settings is not None:
        chat["instruction"] = scorer.options.chat_settings.instructions["faithfulness" if source else "precision"]
    return Comparison(
        names=names,
        scores={direction: result[direction] for direction in directions},
        rescaled={direction: result[f"{direction}_rescaled"] for direction in directions},
        reference_points=result["reference_points"],
        signature=result["signature"],
        tokens=scorer.score_tokens([condition] * len(texts), texts, condition_lang=language, **chat),
        tokens_given=tokens_given,
        special_tokens=set(scorer.tokenizer.all_special_tokens),
        prompt=options.prompt,
        references=len(references),
        aggregation=options.aggregation,
    )


def best_candidates(scores) -> list[int]:
    """The indices of the highest score (all of them on a tie); scores that are not numbers are never best."""
    numbers = [score for score in scores if not math.isnan(score)]
    if not numbers:
        return []
    top = max(numbers)
    return [index for index, score in enumerate(scores) if score == top]


def has_scale(comparison: Comparison, direction: str) -> bool:
    """Whether the direction's copies score above its unrelated texts, so that its 0–1 values are numbers."""
    return not all(math.isnan(value) for value in comparison.rescaled[direction])


def ranked_values(comparison: Comparison, direction: str) -> tuple[list, str]:
    """The values that rank the candidates in a direction, and their scale: the 0–1 values where the direction has a
    scale (f_score's is the mean of precision's and recall's, so it can order candidates otherwise than raw F),
    else the raw scores."""
    if has_scale(comparison, direction):
        return comparison.rescaled[direction], "rescaled"
    return comparison.scores[direction], "raw"


def winners(comparison: Comparison) -> dict[str, list[int]]:
    """direction -> the candidates that rank first in it (ranked_values; ties all, none when nothing is a number)."""
    return {direction: best_candidates(ranked_values(comparison, direction)[0]) for direction in comparison.scores}


def leading_candidate(comparison: Comparison) -> int | None:
    """The candidate first in more directions than any other, or None (no such candidate: a tie, or nothing is a
    number)."""
    firsts = winners(comparison)
    wins = [sum(index in first for first in firsts.values()) for index in range(len(comparison.names))]
    most = max(wins, default=0)
    if most == 0 or wins.count(most) > 1:
        return None
    return wins.index(most)


def scores_table(comparison: Comparison, scale: str) -> Styler:
    """Candidates x directions in one scale ("rescaled": 0 = an unrelated text, 1 = a copy; or "raw"), the best
    candidate of each direction highlighted, the leading candidate's name marked best, and two rows more: the
    direction's reference points (copy, unrelated). Values keep full precision; the page shows them rounded."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    count = len(comparison.names)
    frame = pd.DataFrame({"candidate": [*comparison.names, REFERENCE_ROWS["copy"], REFERENCE_ROWS["unrelated"]]})
    for direction, scores in comparison.scores.items():
        points = comparison.reference_points[direction]
        if scale == "raw":
            column = [*scores, points["copy"], points["unrelated"]]
        else:
            scaled = points["copy"] > points["unrelated"]
            column = [*comparison.rescaled[direction], *((1.0, 0.0) if scaled else (math.nan, math.nan))]
        frame[DIRECTION_LABELS[direction]] = column
    lead = leading_candidate(comparison)
    columns = [DIRECTION_LABELS[direction] for direction in comparison.scores]

    def highlight(column):
        styles = [""] * count + [REFERENCE_STYLE] * 2
        if column.name in columns:
            for index in best_candidates(list(column[:count])):
                styles[index] = BEST_STYLE
        return styles

    return (
        frame.style.apply(highlight)
        .format(
            lambda name: name + BEST_MARK if lead is not None and name == comparison.names[lead] else name,
            subset=["candidate"],
        )
        .format("{:.3f}" if scale == "rescaled" else "{:.4f}", subset=columns, na_rep=MISSING_SHOWN)
    )


def prompt_described(prompt) -> str | None:
    """The prompt in words, or None without one."""
    if prompt is None:
        return None
    if isinstance(prompt, str):
        return f"the {prompt!r} prompt set ({counted(len(bart_score.PROMPT_SETS[prompt]), 'phrase')}, averaged)"
    return f"the prompt phrase {prompt[0]!r}"
