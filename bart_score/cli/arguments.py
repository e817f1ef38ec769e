"""The subcommands' argparse arguments: the inputs, a table's columns, rescaling, the model and scoring options and the
long-source options, and the type of every integer flag. Nothing here imports torch, so that --help answers at
once."""

from __future__ import annotations

import argparse

from ..inputs import ascii_integer
from ..long_source import (
    DEFAULT_MAX_SENTENCES,
    DEFAULT_RETRIEVER,
    DEFAULT_WINDOW,
    DEFAULT_WINDOWS_K,
    LONG_SOURCE_MODES,
    LONGDOCFACTSCORE,
)
from ..options import AGGREGATIONS, PROMPT_SIDES, RESCALE_MODES
from ..rescale import DEFAULT_PAIRS, DEFAULT_SEED
from ..variants import DEFAULT_CPU_MAX_TOKENS, DEFAULT_MAX_TOKENS, DTYPE_NAMES


def integer(text: str) -> int:
    """The type of every integer flag: ASCII digits only, as int() alone would also take "٣" (as 3), "1_000" and
    white space around the digits."""
    number = ascii_integer(text)
    if number is None:
        raise argparse.ArgumentTypeError(f"expected a whole number in ASCII digits (0-9), got {text!r}")
    return number


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    inputs = parser.add_argument_group("inputs (plain-text files with one segment per line, or one --input table)")
    inputs.add_argument("-s", "--sources", metavar="FILE", help="source texts")
    inputs.add_argument(
        "-r",
        "--references",
        metavar="FILE",
        nargs="+",
        default=[],
        help="reference files (several give several references per segment)",
    )
    inputs.add_argument(
        "-t",
        "--hypotheses",
        metavar="FILE",
        nargs="+",
        default=[],
        help="one file per system; the file name names the system",
    )
    inputs.add_argument("-i", "--input", metavar="FILE", help="a .jsonl or .csv file with one row per segment")
    add_column_arguments(inputs, "--input")


def add_column_arguments(group: argparse._ArgumentGroup, table_option: str) -> None:
    group.add_argument("--source-column", help=f"source column of {table_option} (default: source, if there is one)")
    group.add_argument(
        "--reference-columns",
        nargs="+",
        metavar="COLUMN",
        help=f"reference columns of {table_option} (default: reference, references, reference_<n>)",
    )
    group.add_argument(
        "--system-columns",
        nargs="+",
        metavar="COLUMN",
        help=f"system columns of {table_option} (default: every other column)",
    )


def add_rescale_arguments(parser: argparse.ArgumentParser, effect: str) -> None:
    """--rescale and --baseline; `effect` says what rescaled scores change in this subcommand's output."""
    rescaling = parser.add_argument_group(
        "rescaled scores (0 = an unrelated text, 1 = a copy; raw scores stay beside them)",
        f"A linear map per direction, so it never changes a ranking: {effect}",
    )
    rescaling.add_argument(
        "--rescale",
        nargs="?",
        const="baseline",
        choices=RESCALE_MODES,
        help="add rescaled scores: 'baseline' (the default when no value is given) uses the baseline file made by "
        "`bartscore baseline` for this model and these settings; 'corpus' takes the reference points from the texts "
        "being scored (comparable only within them)",
    )
    rescaling.add_argument("--baseline", metavar="FILE", help="rescale with this baseline file (implies --rescale)")
    rescaling.add_argument(
        "--rescale-pairs",
        type=integer,
        metavar="N",
        help=f"--rescale corpus: at most N extra pairs for the reference points (default {DEFAULT_PAIRS})",
    )
    rescaling.add_argument(
        "--rescale-seed", type=integer, metavar="S", help=f"--rescale corpus: sampling seed (default {DEFAULT_SEED})"
    )


def add_model_arguments(
    parser: argparse.ArgumentParser,
    *,
    directions_default_text: str = "all the inputs allow",
    aggregation_default: str | None = "mean",
    aggregation_default_text: str | None = None,
    several_models: str | None = None,
) -> None:
    """The model and scoring options; several_models: what giving -m more than once does (None: -m is given once,
    a later one replacing an earlier one, as argparse does; else args.model is the list given, or None)."""
    model = parser.add_argument_group("model and scoring")
    _add_checkpoint_arguments(model, several_models)
    _add_causal_lm_arguments(model)
    _add_scoring_arguments(model, directions_default_text, aggregation_default, aggregation_default_text)
    _add_run_arguments(model)


def _add_checkpoint_arguments(model: argparse._ArgumentGroup, several_models: str | None) -> None:
    """-m and the language codes an mBART checkpoint needs."""
    model.add_argument(
        "-m",
        "--model",
        **({"action": "append", "default": None} if several_models else {"default": "cnn"}),
        help="vanilla, cnn (default), cnn-para, mbart50, mt5, flan-t5, opt, qwen, a Hub id, a checkpoint directory "
        "of a BART, mBART, T5/mT5/Flan-T5, PEGASUS, Marian or decoder-only causal LM, or a GGUF file (needs "
        'pip install "bartscore[gguf]")' + (f"; {several_models}" if several_models else ""),
    )
    model.add_argument("--source-lang", metavar="CODE", help="mBART: the sources' language code (e.g. de_DE)")
    model.add_argument("--target-lang", metavar="CODE", help="mBART: the outputs' and references' code (e.g. en_XX)")


def _add_causal_lm_arguments(model: argparse._ArgumentGroup) -> None:
    """How a causal LM is prompted: a template, GPTScore's compatibility, or its chat format."""
    model.add_argument(
        "--template",
        help="causal LMs: the prefix built from a condition, holding {condition} once (default: '{condition}\\n'; "
        "in bash write a newline as $'...\\n')",
    )
    model.add_argument(
        "--compatibility",
        choices=("gptscore",),
        help="causal LMs: score exactly as GPTScore does (its prompt_text goes into --template after {condition})",
    )
    model.add_argument(
        "--chat",
        action="store_true",
        help="causal LMs with a chat template (instruction-tuned): score in their chat format, the condition in a "
        "user turn (--instruction) and the scored text as the assistant's reply, closed by the template's "
        "end-of-turn token",
    )
    model.add_argument(
        "--instruction",
        metavar="TEXT",
        help="with --chat: the user turn, holding {condition} once, for every direction (default: each direction's "
        "own: 'Summarize the following text.' for faithfulness, 'Paraphrase the following text.' for precision and "
        "recall, then a blank line and {condition})",
    )
    model.add_argument(
        "--system", metavar="TEXT", help="with --chat: a system turn first (default: the chat template's own, if any)"
    )


def _add_scoring_arguments(
    model: argparse._ArgumentGroup,
    directions_default_text: str,
    aggregation_default: str | None,
    aggregation_default_text: str | None,
) -> None:
    """What is scored: the directions, the aggregation over references and the prompt."""
    model.add_argument(
        "-d",
        "--directions",
        help=f"comma-separated: faithfulness,precision,recall,f_score (default: {directions_default_text})",
    )
    model.add_argument(
        "--aggregation",
        choices=AGGREGATIONS,
        default=aggregation_default,
        help=f"over several references (default: {aggregation_default_text or aggregation_default})",
    )
    prompts = model.add_mutually_exclusive_group()
    prompts.add_argument("-p", "--prompt", help="a prompt set (summary, paraphrase, mt) or one prompt phrase")
    prompts.add_argument(
        "--prompt-phrases",
        nargs="+",
        metavar="PHRASE",
        help="your own prompt phrases (the score is their average), even one-word ones",
    )
    model.add_argument("--prompt-side", choices=PROMPT_SIDES, default="encoder", help="(default: encoder)")


def _add_run_arguments(model: argparse._ArgumentGroup) -> None:
    """Where and how the model runs: the device, precision, batch and length limits, and the progress bars."""
    model.add_argument("--device", help="cuda, cuda:1, cpu, ... (default: CUDA when available)")
    model.add_argument("--dtype", choices=DTYPE_NAMES, default="float32", help="(default: float32)")
    model.add_argument("--batch-size", type=integer, help="at most this many pairs per batch")
    model.add_argument(
        "--max-tokens",
        type=integer,
        help=f"padded tokens per batch (default {DEFAULT_MAX_TOKENS} on a GPU, {DEFAULT_CPU_MAX_TOKENS} on a CPU)",
    )
    model.add_argument(
        "--max-length", type=integer, help="truncate texts to this many tokens (default 1024, or the model's positions)"
    )
    model.add_argument(
        "-q", "--quiet", action="store_true", help="no progress or loading bars (notes about the input still show)"
    )


def add_long_source_arguments(parser: argparse.ArgumentParser, *, mode: bool = True) -> None:
    """The long-source options; `mode`: whether --long-source itself is offered (meta-eval computes the windows row
    of the long-document benchmarks on its own)."""
    group = parser.add_argument_group(
        "long sources (faithfulness sentence by sentence, each given the best of a few windows of the source)"
    )
    if mode:
        group.add_argument(
            "--long-source",
            choices=LONG_SOURCE_MODES,
            help="windows: score each prediction sentence given the source windows most like it (LongDocFACTScore); "
            "default: the source as one condition, truncated to --max-length",
        )
    group.add_argument(
        "--windows-k", type=integer, metavar="K", help=f"windows per prediction sentence (default {DEFAULT_WINDOWS_K})"
    )
    group.add_argument(
        "--window",
        metavar="RULE",
        help=f"{LONGDOCFACTSCORE} (the sentence and the one before it, as LongDocFACTScore) or N (the sentence and N "
        f"neighbours on each side) (default {DEFAULT_WINDOW})",
    )
    group.add_argument(
        "--retriever",
        metavar="NAME",
        help=f"bm25 (lexical), or a sentence-embedding encoder checkpoint (default {DEFAULT_RETRIEVER})",
    )
    group.add_argument(
        "--max-sentences",
        type=integer,
        metavar="N",
        help=f"refuse a text (prediction or source) of more than N sentences (default {DEFAULT_MAX_SENTENCES})",
    )
