"""What the subcommands share: the input and model options, reading the corpus, and checking a request before any
model is loaded. Nothing here imports torch, so that --help and usage errors answer at once."""

import os
import sys

from ..corpus import UsageError, read_plain_corpus, read_table_corpus
from ..directions import AGGREGATIONS, PROMPT_SIDES, resolve_options
from ..variants import DEFAULT_MAX_TOKENS, DTYPE_NAMES


def add_input_arguments(parser):
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
    inputs.add_argument("--source-column", help="source column of --input (default: source, if there is one)")
    inputs.add_argument(
        "--reference-columns",
        nargs="+",
        metavar="COLUMN",
        help="reference columns of --input (default: reference, references, reference_<n>)",
    )
    inputs.add_argument(
        "--system-columns", nargs="+", metavar="COLUMN", help="system columns of --input (default: every other column)"
    )


def add_model_arguments(
    parser, *, directions_default_text="all the inputs allow", aggregation_default="mean", aggregation_default_text=None
):
    model = parser.add_argument_group("model and scoring")
    model.add_argument(
        "-m", "--model", default="cnn", help="vanilla, cnn (default), cnn-para, a Hub id or a checkpoint directory"
    )
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
    model.add_argument("--device", help="cuda, cuda:1, cpu, ... (default: CUDA when available)")
    model.add_argument("--dtype", choices=DTYPE_NAMES, default="float32", help="(default: float32)")
    model.add_argument("--batch-size", type=int, help="at most this many pairs per batch")
    model.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        help=f"padded tokens per batch (default {DEFAULT_MAX_TOKENS})",
    )
    model.add_argument("--max-length", type=int, default=1024, help="truncate texts to this many tokens")
    model.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def corpus_from_args(args):
    if args.input and (args.sources or args.references or args.hypotheses):
        raise UsageError("give either --input or plain-text files (--sources/--references/--hypotheses), not both")
    if args.input:
        return read_table_corpus(args.input, args.source_column, args.reference_columns, args.system_columns)
    if not args.sources and not args.references:
        raise UsageError("give --sources and/or --references (or --input)")
    return read_plain_corpus(args.sources, args.references, args.hypotheses)


def checked_request(args):
    """The corpus and scoring options of a command line, every mistake reported before any model is loaded."""
    corpus = corpus_from_args(args)
    options = dict(
        directions=args.directions.split(",") if args.directions else None,
        aggregation=args.aggregation,
        prompt=args.prompt_phrases or args.prompt,
        prompt_side=args.prompt_side,
    )
    resolve_options(has_references=corpus.references is not None, has_sources=corpus.sources is not None, **options)
    check_engine_options(args)
    return corpus, options


def check_engine_options(args):
    """The model options' values that argparse cannot check (positive sizes, a device name)."""
    for flag, value in (
        ("--batch-size", args.batch_size),
        ("--max-tokens", args.max_tokens),
        ("--max-length", args.max_length),
    ):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be a positive integer, got {value}")
    if args.device is not None and not _looks_like_a_device(args.device):
        raise UsageError(f"--device {args.device!r} is not a device; use cpu, cuda or cuda:<n>")


def _looks_like_a_device(name):
    kind, _, index = name.partition(":")
    return kind in ("cpu", "cuda", "mps", "xpu") and (not index or index.isdigit())


def check_output_path(path):
    """An output file must be writable before any work is done (a usage error otherwise)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise UsageError(f"cannot write {path}: not a file in an existing, writable folder")


def load_scorer(args):
    """The engine the options ask for, or (None, exit status) after saying why it cannot be had."""
    from ..engine import BARTScorer

    try:
        return BARTScorer(
            device=args.device,
            max_length=args.max_length,
            checkpoint=args.model,
            dtype=args.dtype,
            max_tokens=args.max_tokens,
            results_on="rank0",
        ), 0
    except ValueError as error:  # e.g. --max-length beyond the model's positions
        print(f"bartscore {args.command}: error: {error}", file=sys.stderr)
        return None, 2
    except (OSError, RuntimeError) as error:
        print(f"bartscore {args.command}: {error}", file=sys.stderr)
        return None, 1


def score_all_systems(args, scorer, corpus, options):
    """score_corpus with the command line's options: (per_system, signature, exit status)."""
    from ..corpus import score_corpus

    try:
        per_system, signature = score_corpus(
            scorer, corpus, batch_size=args.batch_size, show_progress=not args.quiet, **options
        )
    except (OSError, RuntimeError, ValueError) as error:
        print(f"bartscore {args.command}: scoring failed: {error}", file=sys.stderr)
        return None, None, 1
    if per_system is not None and corpus.blank_references:
        print(
            f"bartscore {args.command}: note: {corpus.blank_references} blank reference line(s) or cell(s) are not "
            f"references and were skipped",
            file=sys.stderr,
        )
    return per_system, signature, 0
