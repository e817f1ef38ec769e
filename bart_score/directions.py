"""The paper's directions, prompts and multi-reference aggregation on top of pair scoring, and the signature.

faithfulness: source -> prediction; precision: reference -> prediction; recall: prediction -> reference;
f_score: (precision + recall) / 2. With several references, precision and recall are aggregated over the
references (mean or max) first, and f_score is the mean of the aggregated two. With prompts, a direction's score for
one (condition, target) pair is the average over the prompts, as in the original scripts."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import numpy as np

from . import baselines
from . import rescale as rescale_module
from .errors import InputError
from .inputs import check_text, reference_lists, text_list
from .long_source import (
    DEFAULT_RETRIEVER,
    DEFAULT_WINDOW,
    DEFAULT_WINDOWS_K,
    LONG_SOURCE_MODES,
    WindowSettings,
    plan_windows,
)
from .prompts import PROMPT_SETS

DIRECTIONS = ("faithfulness", "precision", "recall", "f_score")
AGGREGATIONS = ("mean", "max")
PROMPT_SIDES = ("encoder", "decoder")
# Per-prediction results besides the directions' scores: rescaled scores, and what long_source="windows" scored.
RESULT_SUFFIXES = ("", "_rescaled", "_sentences", "_windows")


@dataclass(frozen=True)
class ScoringOptions:
    """The resolved, checked options of one directions call (prompt_label is the signature's prompt field)."""

    directions: tuple
    aggregation: str
    prompts: tuple  # (None,) when no prompt is used
    prompt_label: str
    prompt_side: str


def resolve_options(
    *, has_references, has_sources, directions=None, aggregation="mean", prompt=None, prompt_side="encoder"
):
    """Checks the scoring options against the inputs given, before any work is done."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    if prompt_side not in PROMPT_SIDES:
        raise ValueError(f"prompt_side must be one of {PROMPT_SIDES}, got {prompt_side!r}")
    if not has_references and not has_sources:
        raise ValueError("BARTScore needs sources=, references= or both, besides predictions")

    if directions is None:
        wanted = [d for d in DIRECTIONS if (has_sources if d == "faithfulness" else has_references)]
    else:
        requested = [directions] if isinstance(directions, str) else text_list(directions, "directions")
        if not requested:
            raise ValueError("directions is empty; leave it out to compute every direction the inputs allow")
        for index, direction in enumerate(requested):
            if direction not in DIRECTIONS:
                raise ValueError(f"directions[{index}] is {direction!r}; choose from {DIRECTIONS}")
            if direction == "faithfulness" and not has_sources:
                raise ValueError("direction 'faithfulness' (source -> prediction) needs sources=, which was not given")
            if direction != "faithfulness" and not has_references:
                raise ValueError(f"direction {direction!r} needs references=, which were not given")
            if direction in requested[:index]:
                raise ValueError(f"directions[{index}] is {direction!r} again; give each direction once")
        wanted = [d for d in DIRECTIONS if d in requested]

    prompts, prompt_label = resolve_prompts(prompt)
    if prompt is not None:
        prompt_label += f"@{prompt_side}"
    return ScoringOptions(tuple(wanted), aggregation, prompts, prompt_label, prompt_side)


def resolve_prompts(prompt):
    """A lowercase identifier names a paper set; any other string is one phrase; a list is a set of phrases."""
    if prompt is None:
        return (None,), "none"
    if isinstance(prompt, str):
        if re.fullmatch(r"[a-z][a-z0-9_-]*", prompt):
            if prompt not in PROMPT_SETS:
                raise ValueError(
                    f"unknown prompt set {prompt!r}; the sets are {tuple(PROMPT_SETS)}. "
                    f"To use it as a prompt phrase, pass it in a list: prompt=[{prompt!r}] (on the command line: "
                    f"--prompt-phrases {prompt})"
                )
            return PROMPT_SETS[prompt], f"{prompt}({len(PROMPT_SETS[prompt])})"
        phrases = [check_text(prompt, "prompt")]
    else:
        phrases = text_list(prompt, "prompt")
        if not phrases:
            raise ValueError("prompt is an empty list; pass None for no prompt")
    for index, phrase in enumerate(phrases):
        if not phrase.strip():
            raise ValueError(f"prompt[{index}] is blank")
    digest = hashlib.sha1("\n".join(phrases).encode("utf-8")).hexdigest()[:8]
    return tuple(phrases), f"custom-{digest}({len(phrases)})"


def apply_prompt(condition, target, prompt, side):
    """The original code's strings: the encoder side appends " <prompt>,", the decoder side prepends "<prompt>, "."""
    if prompt is None:
        return condition, target
    if side == "encoder":
        return f"{condition} {prompt},", target
    return condition, f"{prompt}, {target}"


def aggregate(values, counts, how):
    """Collapses consecutive runs of `counts` values (one run per example) by mean or max."""
    if not len(counts):
        return np.zeros(0)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    if how == "max":
        return np.maximum.reduceat(values, starts)
    return np.add.reduceat(values, starts) / np.asarray(counts)


def score_directions(
    scorer,
    predictions,
    references=None,
    sources=None,
    *,
    directions=None,
    aggregation="mean",
    prompt=None,
    prompt_side="encoder",
    rescale=None,
    rescale_with_baseline=False,
    baseline_path=None,
    rescale_pairs=rescale_module.DEFAULT_PAIRS,
    rescale_seed=rescale_module.DEFAULT_SEED,
    unrelated_texts=None,
    long_source=None,
    windows_k=DEFAULT_WINDOWS_K,
    window=DEFAULT_WINDOW,
    retriever=DEFAULT_RETRIEVER,
    batch_size=None,
    max_tokens=None,
    show_progress=False,
):
    """The directions for each prediction, in input order, with their means and a signature: see the module's text.
    Every direction's pairs go to `scorer.score` in one call, so that texts shared across directions are planned
    once. None on ranks that get no results (see BARTScorer's results_on).

    Rescaling (see bart_score.rescale) adds ``<direction>_rescaled`` and its mean beside each raw direction, the
    ``reference_points`` used, and a ``rescale:`` field to the signature. rescale="baseline" (or bert_score's
    rescale_with_baseline=True) takes the points from baseline_path, or from the default location for this model and
    settings; rescale="corpus" computes them from these inputs, in the same engine call, from at most rescale_pairs
    extra pairs (seeded by rescale_seed): targets given conditions of other documents (or given unrelated_texts),
    and targets given themselves.

    long_source="windows" scores faithfulness against windows of the source (bart_score.long_source): windows_k
    windows per prediction sentence, the window rule `window`, the `retriever`; the result adds
    ``faithfulness_sentences`` and ``faithfulness_windows`` (per prediction, the sentences scored and the distinct
    windows they were scored against). The other directions are computed as usual."""
    predictions = text_list(predictions, "predictions")
    if references is not None:
        references = reference_lists(references, "references", len(predictions))
    if sources is not None:
        sources = text_list(sources, "sources", len(predictions))
    options = resolve_options(
        has_references=references is not None,
        has_sources=sources is not None,
        directions=directions,
        aggregation=aggregation,
        prompt=prompt,
        prompt_side=prompt_side,
    )
    rescaling = rescale_module.resolve_rescaling(
        rescale,
        rescale_with_baseline=rescale_with_baseline,
        baseline_path=baseline_path,
        rescale_pairs=rescale_pairs,
        rescale_seed=rescale_seed,
        unrelated_texts=unrelated_texts,
    )
    windows = long_source_settings(long_source, windows_k, window, retriever, options, rescaling)
    point_directions = rescale_module.point_directions(options.directions)
    baseline = None
    if rescaling and rescaling.mode == "baseline":  # found and checked before any scoring
        baseline = baselines.baseline_for(scorer, options, prompt, point_directions, rescaling.baseline_path)

    wanted = set(options.directions)
    if "f_score" in wanted:
        wanted |= {"precision", "recall"}
    ref_counts = [len(refs) for refs in references] if references is not None else []
    owners = [i for i, n in enumerate(ref_counts) for _ in range(n)]
    flat_refs = [ref for refs in references for ref in refs] if references is not None else []
    groups = {
        "faithfulness": list(zip(sources, predictions)) if "faithfulness" in wanted else [],
        "precision": [(ref, predictions[i]) for i, ref in zip(owners, flat_refs)] if "precision" in wanted else [],
        "recall": [(predictions[i], ref) for i, ref in zip(owners, flat_refs)] if "recall" in wanted else [],
    }
    plan = None
    if windows is not None:
        plan = plan_windows(predictions, sources, windows, getattr(scorer, "device", None))
        groups["faithfulness"] = plan.pairs
    reference_pairs = None
    if rescaling and rescaling.mode == "corpus":
        rows = {
            "prediction": [[text] for text in predictions],
            "source": [[text] for text in sources] if sources is not None else None,
            "reference": references,
        }
        documents = (
            rescale_module.document_ids(len(predictions), sources, references)
            if rescaling.unrelated_texts
            else rescale_module.corpus_documents(len(predictions), sources, references)
        )
        reference_pairs = rescale_module.sample_reference_pairs(
            rows,
            documents,
            point_directions,
            pairs=rescaling.pairs,
            seed=rescaling.seed,
            unrelated_texts=rescaling.unrelated_texts,
        )
        groups.update(reference_pairs.samples)
    averaged = score_pair_groups(
        scorer, groups, options, batch_size=batch_size, max_tokens=max_tokens, show_progress=show_progress
    )
    if averaged is None:
        return None

    scores = {}
    if "faithfulness" in wanted:
        scores["faithfulness"] = plan.aggregate(averaged["faithfulness"]) if plan else averaged["faithfulness"]
    for direction in ("precision", "recall"):
        if direction in wanted:
            scores[direction] = aggregate(averaged[direction], ref_counts, options.aggregation)
    if "f_score" in wanted:
        scores["f_score"] = (scores["precision"] + scores["recall"]) / 2

    result = {direction: scores[direction].tolist() for direction in options.directions}
    for direction in options.directions:
        result[f"{direction}_mean"] = _mean(scores[direction])
    if plan is not None:
        result["faithfulness_sentences"] = plan.sentences
        result["faithfulness_windows"] = plan.windows
    rescale_label = None
    if rescaling:
        points = baseline.points if baseline else reference_pairs.points(averaged)
        points = rescale_module.with_f_score({d: points[d] for d in point_directions})
        rescaled = rescale_module.rescaled_scores(scores, points)
        for direction in options.directions:
            result[f"{direction}_rescaled"] = rescaled[direction].tolist()
            result[f"{direction}_rescaled_mean"] = _mean(rescaled[direction])
        result["reference_points"] = {
            d: {"unrelated": points[d].unrelated, "copy": points[d].copy} for d in options.directions
        }
        rescale_label = baseline.label if baseline else reference_pairs.label
    result["signature"] = signature(scorer, options, ref_counts, rescale_label, windows)
    return result


def long_source_settings(
    long_source: str | None,
    windows_k: int,
    window: str | int,
    retriever: object,
    options: ScoringOptions,
    rescaling: object = None,
) -> WindowSettings | None:
    """The checked WindowSettings of long_source="windows", or None for the ordinary (truncated) source."""
    if long_source is None:
        return None
    if long_source not in LONG_SOURCE_MODES:
        raise InputError(f"long_source must be None or one of {LONG_SOURCE_MODES}, got {long_source!r}")
    settings = WindowSettings(windows_k, window, retriever)
    if "faithfulness" not in options.directions:
        raise InputError(
            f"long_source={long_source!r} changes how the source conditions faithfulness (source -> prediction), and "
            f"this call computes {', '.join(options.directions)} without it; ask for faithfulness (with sources=)"
        )
    if rescaling:
        raise InputError(
            f"long_source={long_source!r} cannot be rescaled: the reference points are whole-text scores, on "
            f"another scale than window scores; leave rescaling out"
        )
    return settings


def _mean(values):
    return float(values.mean()) if len(values) else float("nan")


def score_pair_groups(scorer, groups, options, *, batch_size=None, max_tokens=None, show_progress=False):
    """Scores groups of (condition, target) pairs (key -> pairs) in one engine call, each pair under every prompt of
    `options`, and returns each group's scores averaged over the prompts (key -> array), or None on ranks that get no
    results."""
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
        conditions, targets, batch_size, max_tokens=max_tokens, show_progress=show_progress, **languages
    )
    if flat_scores is None:
        return None
    flat_scores = np.asarray(flat_scores, dtype=np.float64)
    return {key: flat_scores[span].reshape(-1, len(options.prompts)).mean(axis=1) for key, span in spans.items()}


def _condition_role(key):
    """Which kind of text a group's conditions are: a direction's, or a reference-point sample's (rescale keys)."""
    if isinstance(key, str):
        return {"faithfulness": "source", "precision": "reference", "recall": "prediction"}[key]
    return key[1]  # ("unrelated", condition role, target role) or ("copy", role)


def signature(scorer, options, ref_counts=(), rescale_label=None, windows=None):
    """A sacrebleu-style reproducibility string for a result of `scorer` under `options` (rescaled with the reference
    points that rescale_label names; faithfulness over source windows with the WindowSettings `windows`)."""
    low, high = (min(ref_counts), max(ref_counts)) if ref_counts else (0, 0)
    nrefs = "-" if not ref_counts else str(low) if low == high else f"{low}-{high}"
    return "|".join(
        [
            f"ckpt:{scorer.model_label}",
            f"dirs:{'+'.join(options.directions)}",
            f"agg:{options.aggregation}",
            f"nrefs:{nrefs}",
            f"prompt:{options.prompt_label}",
            *([f"rescale:{rescale_label}"] if rescale_label else []),
            *([f"long:{windows.label}"] if windows else []),
            *scorer.signature_fields(),
        ]
    )
