"""Finding the baseline a scoring call needs (bart_score.baselines.files), and the command that makes a missing one.

``baseline_for`` finds the file a call rescales with (its own, or the default location's) and checks that its key
matches the scorer and options, before any scoring; ``baseline_command`` is the ``bartscore baseline`` command line
that makes a missing or mismatched one."""

from __future__ import annotations

import shlex

from ..errors import BaselineDirectionsError, BaselineNotFoundError, BaselineSettingsError
from ..options import ScoringOptions
from ..prompts import PROMPT_SETS
from ..scorer import IdentifiedScorer
from ..templates import DEFAULT_INSTRUCTIONS, DEFAULT_TEMPLATE
from .files import Baseline, baseline_settings, default_baseline_path, load_baseline


def baseline_command(scorer: IdentifiedScorer, options: ScoringOptions, path: str) -> str:
    """The `bartscore baseline` command line that makes a baseline for this scorer and prompt setting at `path`."""
    model, _, weights = scorer.model_label.partition("+")
    words = ["bartscore", "baseline", "-m", model, "--corpus", "TEXTS.txt"]
    environment = ""
    if weights:  # paraphrase-tuned weights loaded over the checkpoint: the cnn-para variant
        words[3] = "cnn-para"
        environment = f"BARTSCORE_PARA_WEIGHTS=/path/to/{weights} "
    prompt = options.prompt
    if isinstance(prompt, str) and prompt in PROMPT_SETS:
        words += ["-p", prompt, "--prompt-side", options.prompt_side]
    elif prompt is not None:
        phrases = [prompt] if isinstance(prompt, str) else list(prompt)
        words += ["--prompt-phrases", *phrases, "--prompt-side", options.prompt_side]
    words += _policy_words(scorer)
    if scorer.max_length != 1024:
        words += ["--max-length", str(scorer.max_length)]
    words += ["-o", path]
    return environment + " ".join(map(_shell_word, words))


def _shell_word(word: str) -> str:
    """A word as bash reads it back, on one line: a word with line breaks or tabs in $'...' quotes."""
    if not any(character in word for character in "\n\r\t"):
        return shlex.quote(word)
    escaped = word.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + "'"


def _policy_words(scorer: IdentifiedScorer) -> list[str]:
    """The command-line options that give a scorer's token policy (a causal template, GPTScore's, chat's)."""
    options = scorer.options
    if scorer.instructions is not None:  # chat
        words = ["--chat"]
        instructions = dict(scorer.instructions)
        distinct = set(instructions.values())
        if instructions != DEFAULT_INSTRUCTIONS and len(distinct) == 1:
            words += ["--instruction", *distinct]
        elif instructions != DEFAULT_INSTRUCTIONS:
            words += ["--instruction", "<one for every direction: the command line has no per-direction instructions>"]
        return words + (["--system", options.system] if options.system is not None else [])
    words = ["--compatibility", "gptscore"] if options.compatibility == "gptscore" else []
    template = options.template
    return words + (["--template", template] if template not in (None, DEFAULT_TEMPLATE) else [])


def baseline_for(scorer: IdentifiedScorer, options: ScoringOptions, directions: list[str]) -> Baseline:
    """The baseline a call rescales with, checked against its scorer and options before any scoring: options.baseline,
    else the file at the default location for these settings. directions: the point directions the call needs."""
    settings = baseline_settings(scorer, options.prompt_label)
    if isinstance(options.baseline, Baseline):
        baseline, target = options.baseline, options.baseline.path
    else:
        target = options.baseline or default_baseline_path(settings)
        try:
            baseline = load_baseline(target)
        except BaselineNotFoundError as missing:
            if options.baseline is not None:
                raise BaselineNotFoundError(
                    f"{missing}; make it with:\n    {baseline_command(scorer, options, target)}"
                ) from None
            chat = scorer.instructions is not None
            raise BaselineNotFoundError(
                f"no BARTScore baseline for {scorer.model_label}"
                + (
                    f" in its chat format (this scorer uses the model's chat template; its token policy "
                    f"{scorer.token_policy} covers the template, the instructions and the system text)"
                    if chat
                    else ""
                )
                + f" with prompt {settings['prompt']!r} and max_length {settings['max_length']} at {target}. Make one "
                f"from a few thousand texts like those you score (a file with one text per line, or a CSV/JSONL as "
                f"`bartscore score` reads):\n"
                f"    {baseline_command(scorer, options, target)}\n"
                f"or take the reference points from the texts being scored: rescale='corpus'",
                option="rescale",
            ) from None
    problems = baseline.mismatches(settings)
    if problems:
        raise BaselineSettingsError(
            f"the baseline {target} was made with other settings ({'; '.join(problems)}). Make one for these "
            f"settings:\n    {baseline_command(scorer, options, target)}"
        )
    lacking = [d for d in directions if d not in baseline.document["directions"]]
    if lacking:
        raise BaselineDirectionsError(
            f"the baseline {target} has no reference points for {', '.join(lacking)} (it has "
            f"{', '.join(baseline.document['directions'])}); make it from a corpus with the texts those need",
            lacking=lacking,
        )
    return baseline
