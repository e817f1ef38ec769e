"""What the subcommands share: the input and model options, reading the corpus, and checking a request before any
model is loaded. Nothing here imports torch, so that --help and usage errors answer at once."""

import contextlib
import os
import re
import stat
import sys
import tempfile

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


def add_model_arguments(parser):
    model = parser.add_argument_group("model and scoring")
    model.add_argument(
        "-m", "--model", default="cnn", help="vanilla, cnn (default), cnn-para, a Hub id or a checkpoint directory"
    )
    model.add_argument(
        "-d",
        "--directions",
        help="comma-separated: faithfulness,precision,recall,f_score (default: all the inputs allow)",
    )
    model.add_argument(
        "--aggregation", choices=AGGREGATIONS, default="mean", help="over several references (default: mean)"
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
    model.add_argument(
        "-q", "--quiet", action="store_true", help="no progress or loading bars (notes about the input still show)"
    )


def corpus_from_args(args):
    if args.input and (args.sources or args.references or args.hypotheses):
        raise UsageError("give either --input or plain-text files (--sources/--references/--hypotheses), not both")
    if args.input:
        return read_table_corpus(args.input, args.source_column, args.reference_columns, args.system_columns)
    if not args.sources and not args.references:
        raise UsageError("give --sources and/or --references (or --input)")
    return read_plain_corpus(args.sources, args.references, args.hypotheses)


# Characters that would split a line or a TSV cell when a name is written out (tabs, line breaks, other controls).
_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check_written_name(text, what):
    """A name the output writes as it is (a system name, a segment id): no character that would forge rows or
    columns, and valid Unicode (a file name's undecodable bytes arrive as lone surrogates)."""
    bad = _BREAKING.search(text)
    if bad:
        raise UsageError(
            f"{what} {text!r} holds {bad[0]!r}, which would break the output's lines or columns; rename it"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise UsageError(f"{what} {text!r} holds {text[error.start]!r}, which is not valid Unicode text") from None


def checked_request(args):
    """The corpus and scoring options of a command line, every mistake reported before any model is loaded."""
    corpus = corpus_from_args(args)
    for name in corpus.systems:
        check_written_name(name, "the system name")
    options = dict(
        directions=args.directions.split(",") if args.directions else None,
        aggregation=args.aggregation,
        prompt=args.prompt_phrases or args.prompt,
        prompt_side=args.prompt_side,
    )
    resolve_options(has_references=corpus.references is not None, has_sources=corpus.sources is not None, **options)
    for flag, value in (
        ("--batch-size", args.batch_size),
        ("--max-tokens", args.max_tokens),
        ("--max-length", args.max_length),
    ):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be a positive integer, got {value}")
    if args.device is not None and not _looks_like_a_device(args.device):
        raise UsageError(f"--device {args.device!r} is not a device; use cpu, cuda or cuda:<n>")
    return corpus, options


def _looks_like_a_device(name):
    kind, _, index = name.partition(":")
    return kind in ("cpu", "cuda", "mps", "xpu") and (not index or index.isdigit())


def check_output_path(path):
    """An output file must be writable before any work is done (a usage error otherwise). It is written as a new
    file renamed over the old one, so its folder must be writable; an existing read-only file is not replaced."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    if os.path.isdir(target) or not os.path.isdir(folder) or not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {path}: not a file in an existing, writable folder")
    # os.access alone would let root through; no write permission bit at all is a file its owner made read-only.
    if os.path.exists(target) and (not os.access(target, os.W_OK) or not os.stat(target).st_mode & 0o222):
        raise UsageError(f"cannot write {path}: the file exists and is read-only")


def write_atomically(path, write):
    """Writes a file through `write(handle)` into a temporary file beside it, flushed to disk, then renamed over it:
    an error, a kill or a full disk midway leaves the previous file whole and no partial file under its name. A link
    keeps pointing where it did (its target is replaced); the file keeps the old one's permissions, or the umask's."""
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".partial")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode) if os.path.exists(target) else 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    descriptor = os.open(folder, os.O_RDONLY)  # the rename itself reaches the disk
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def load_scorer(args):
    """The engine the options ask for, or (None, exit status) after saying why it cannot be had."""
    from ..engine import BARTScorer

    if args.quiet:  # transformers and huggingface_hub draw their own bars while loading and downloading
        import huggingface_hub
        import transformers

        transformers.utils.logging.disable_progress_bar()
        huggingface_hub.utils.disable_progress_bars()

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
