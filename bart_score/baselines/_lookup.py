"""Finding the baseline a scoring call needs (bart_score.baselines.files), and the task that makes a missing one.

``baseline_for`` finds the file a call rescales with (its own, or the default location's) and checks that its key
matches the scorer and options, before any scoring; ``baseline_recipe`` is the task that makes a missing or
mismatched one, as data (bart_score.messages.Recipe) that each front end words as its own command or call."""

from __future__ import annotations

from ..errors import BaselineDirectionsError, BaselineNotFoundError, BaselineSettingsError
from ..messages import FileName, Mention, Recipe
from ..options import DEFAULT_INSTRUCTIONS, DEFAULT_TEMPLATE, ScoringOptions
from ..scoring.protocols import IdentifiedScorer
from ..variants import PARA_WEIGHTS_ENV
from .files import Baseline, baseline_settings, default_baseline_path, load_baseline, mismatch_parts

# The library's functions that make a baseline, as its own words name them for a Python caller.
BASELINE_CALL = "bart_score.build_baseline and bart_score.write_baseline"


def baseline_recipe(scorer: IdentifiedScorer, options: ScoringOptions, path: str) -> Recipe:
    """The task that makes a baseline for this scorer and prompt setting at `path`: its settings in the library's
    names (the checkpoint, the prompt setting, the token policy's options, max_length, and the path to write), and,
    for paraphrase-tuned weights loaded over the checkpoint (the cnn-para variant), the variable that names them."""
    model, _, weights = scorer.model_label.partition("+")
    settings: dict[str, object] = {"checkpoint": "cnn-para" if weights else model}
    if options.prompt is not None:
        settings.update(prompt=options.prompt, prompt_side=options.prompt_side)
    settings.update(_policy_settings(scorer))
    settings.update(max_length=scorer.options.max_length, path=path)
    environment = {PARA_WEIGHTS_ENV: f"/path/to/{weights}"} if weights else {}
    return Recipe("baseline", settings, environment, call=BASELINE_CALL)


def _policy_settings(scorer: IdentifiedScorer) -> dict[str, object]:
    """The options that give a scorer's token policy (a causal template, GPTScore's, chat's), where they are not the
    defaults: chat's instruction is one text when every direction has the same, else the instruction of each."""
    options = scorer.options
    if options.chat_settings is not None:
        settings: dict[str, object] = {"chat": True}
        instructions = dict(options.chat_settings.instructions)
        if instructions != DEFAULT_INSTRUCTIONS:
            distinct = set(instructions.values())
            settings["instruction"] = distinct.pop() if len(distinct) == 1 else instructions
        if options.system is not None:
            settings["system"] = options.system
        return settings
    settings = {"compatibility": "gptscore"} if options.compatibility == "gptscore" else {}
    if options.template not in (None, DEFAULT_TEMPLATE):
        settings["template"] = options.template
    return settings


def baseline_for(scorer: IdentifiedScorer, options: ScoringOptions, directions: list[str]) -> Baseline:
    """The baseline a call rescales with, checked against its scorer and options before any scoring: options.baseline,
    else the file at the default location for these settings. directions: the point directions the call needs."""
    settings = baseline_settings(scorer, options.prompt_label)
    if isinstance(options.baseline, Baseline):
        baseline, target = options.baseline, options.baseline.path
    else:
        path = options.baseline if isinstance(options.baseline, str) else None  # a Baseline is the case above
        target = path or default_baseline_path(settings)
        try:
            baseline = load_baseline(target)
        except BaselineNotFoundError as missing:
            recipe = baseline_recipe(scorer, options, target)
            if options.baseline is not None:
                raise BaselineNotFoundError(*missing.parts, remedy=["make it with:\n    ", recipe]) from None
            chat = (
                f" in its chat format (this scorer uses the model's chat template; its token policy "
                f"{scorer.token_policy} covers the template, the instructions and the system text)"
                if scorer.options.chat_settings is not None
                else ""
            )
            raise BaselineNotFoundError(
                f"no BARTScore baseline for {scorer.model_label}{chat} with prompt {settings['prompt']!r} and ",
                Mention("max_length", settings["max_length"]),
                " at ",
                FileName(target),
                option="rescale",
                value=options.rescale,
                remedy=[
                    "make one from a few thousand texts like those you score (a file with one text per line, or a "
                    "CSV/JSONL table of sources, references and system outputs):\n    ",
                    recipe,
                    "\nor take the reference points from the texts being scored: ",
                    Mention("rescale", "corpus"),
                ],
            ) from None
    problems = baseline.mismatches(settings)
    if problems:
        raise BaselineSettingsError(
            "the baseline ",
            FileName(target),
            " was made with other settings (",
            *mismatch_parts(problems),
            ")",
            remedy=["make one for these settings:\n    ", baseline_recipe(scorer, options, target)],
        )
    lacking = [d for d in directions if d not in baseline.document["directions"]]
    if lacking:
        raise BaselineDirectionsError(
            "the baseline ",
            FileName(target),
            f" has no reference points for {', '.join(lacking)} (it has {', '.join(baseline.document['directions'])})",
            lacking=lacking,
            remedy="make it from a corpus with the texts those need",
        )
    return baseline
