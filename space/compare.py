"""The Compare tab's computation: candidates scored against one source and references, with each direction's
reference points (copy, unrelated) from the same engine call and the tokens for the heatmap; then the table (best
candidate highlighted, reference points as its last rows) and the bar chart's rows."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from bart_score.options import CorpusPoints
from bart_score.rescale import DEFAULT_PAIRS as DEFAULT_RESCALE_PAIRS

from .batch import MISSING_SHOWN
from .inputs import pairs_per_text, prompt_count, refuse_too_much_work


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
REFERENCE_ROWS = {"copy": "copy (each text given itself)", "unrelated": "unrelated (given unrelated texts)"}


def check_compare_work(
    *,
    source: str,
    references: list[str],
    candidates: list[tuple[str, str]],
    directions: list[str],
    prompt: str | list[str] | None,
    max_pairs: int,
    by_direction: bool = False,
) -> None:
    """Refuses a comparison that would need more than max_pairs (condition, text) pairs: each candidate's pairs, the
    reference points' pairs (each target given itself and given each of UNRELATED_TEXTS, at most the engine's
    budget per sample) and the heatmap's, times the prompt's phrases (the heatmap is unprompted). by_direction: the
    model scores each direction under its own instruction (chat), so directions share no reference-point sample."""
    count = len(candidates)
    candidate_pairs = pairs_per_text(directions, bool(source), len(references)) * count
    wanted = set(directions) | ({"precision", "recall"} if "f_score" in directions else set())
    on_candidates = [d for d in ("faithfulness", "precision") if d in wanted]  # their samples' targets: candidates
    targets = [count] * (len(on_candidates) if by_direction else min(1, len(on_candidates)))
    targets += [len(references)] * ("recall" in wanted)
    share = max(1, DEFAULT_RESCALE_PAIRS // (2 * len(targets)))  # the engine's budget per sample (unrelated, copy)
    point_pairs = sum(min(share, len(UNRELATED_TEXTS) * n) + min(share, n) for n in targets)
    pairs = (candidate_pairs + point_pairs) * prompt_count(prompt) + count
    refuse_too_much_work(
        pairs,
        max_pairs,
        what="these candidates",
        counted="candidates × directions and references, + reference points, × prompts",
        advice="fewer candidates, references, directions or prompts",
    )


def compare_candidates(
    scorer, *, source, references, candidates, directions, aggregation="mean", prompt=None, prompt_side="encoder"
):
    """Scores each candidate against the same source and references, with the reference points of each direction
    (in the same engine call: the candidates and references given themselves, and given UNRELATED_TEXTS), and their
    tokens for the heatmap."""
    names = [name for name, _ in candidates]
    texts = [text for _, text in candidates]
    result = scorer.score_directions(
        texts,
        references=[references] * len(texts) if references else None,
        sources=[source] * len(texts) if source else None,
        directions=directions,
        aggregation=aggregation,
        prompt=prompt,
        prompt_side=prompt_side,
        rescale="corpus",
        corpus_points=CorpusPoints(unrelated_texts=UNRELATED_TEXTS),
    )
    # Unprompted tokens given the source (faithfulness), else given the first reference (precision): the text the
    # candidate was written from, or the nearest stand-in for it.
    condition, tokens_given = (source, "the source") if source else (references[0], "the first reference")
    language = scorer.source_lang if source else scorer.target_lang
    chat = {}  # chat scoring: under the instruction of the direction whose condition this is
    if scorer.instructions:
        chat["instruction"] = scorer.instructions["faithfulness" if source else "precision"]
    return Comparison(
        names=names,
        scores={direction: result[direction] for direction in directions},
        rescaled={direction: result[f"{direction}_rescaled"] for direction in directions},
        reference_points=result["reference_points"],
        signature=result["signature"],
        tokens=scorer.score_tokens([condition] * len(texts), texts, condition_lang=language, **chat),
        tokens_given=tokens_given,
        special_tokens=set(scorer.tokenizer.all_special_tokens),
    )


def best_candidates(scores):
    """The indices of the highest score (all of them on a tie); scores that are not numbers are never best."""
    numbers = [score for score in scores if not math.isnan(score)]
    if not numbers:
        return []
    top = max(numbers)
    return [index for index, score in enumerate(scores) if score == top]


def rescaled_column(direction):
    return f"{direction} 0–1"


def comparison_table(comparison):
    """Candidates x directions, each raw column followed by its rescaled one, the best candidate of each direction
    highlighted and listed in the "best in" column, and two rows more: the direction's reference points."""
    count = len(comparison.names)
    frame = pd.DataFrame({"candidate": [*comparison.names, REFERENCE_ROWS["copy"], REFERENCE_ROWS["unrelated"]]})
    best_in = [[] for _ in comparison.names]
    for direction, scores in comparison.scores.items():
        points = comparison.reference_points[direction]
        frame[direction] = [*scores, points["copy"], points["unrelated"]]
        scale = [1.0, 0.0] if points["copy"] > points["unrelated"] else [math.nan, math.nan]
        frame[rescaled_column(direction)] = [*comparison.rescaled[direction], *scale]
        for index in best_candidates(scores):
            best_in[index].append(direction)
    frame["best in"] = ["★ " + ", ".join(directions) if directions else "" for directions in best_in] + ["", ""]
    reference_style = "color: #666; font-style: italic"

    def highlight(column):
        styles = [""] * count + [reference_style] * 2
        if column.name in comparison.scores:
            for index in best_candidates(list(column[:count])):
                styles[index] = "font-weight: bold; background-color: #c8f0c8"
        return styles

    rescaled = [rescaled_column(direction) for direction in comparison.scores]
    return (
        frame.style.apply(highlight)
        .format("{:.4f}", subset=list(comparison.scores), na_rep=MISSING_SHOWN)
        .format("{:.3f}", subset=rescaled, na_rep=MISSING_SHOWN)
    )


def comparison_chart(comparison):
    """The bar plot's rows: one bar per direction and candidate, grouped by direction, of the rescaled score (the raw
    one shown on hover). A direction without a scale (its copies do not score above unrelated texts) has no bars."""
    rows = [
        {"bar": f"{direction} · {name}", "candidate": name, "direction": direction, "rescaled": value, "score": score}
        for direction, scores in comparison.scores.items()
        for name, score, value in zip(comparison.names, scores, comparison.rescaled[direction])
        if not math.isnan(value)
    ]
    return pd.DataFrame(rows, columns=["bar", "candidate", "direction", "rescaled", "score"])


def chart_y_limits(chart):
    """From 0 (an unrelated text) to 1 (a copy), widened to whole tenths to hold every bar: bars start at 0."""
    values = [*chart["rescaled"], 0.0, 1.0]
    return [math.floor(min(values) * 10) / 10, math.ceil(max(values) * 10) / 10]
