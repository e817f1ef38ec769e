"""What the subcommands share: the input and model options, reading the corpus, and checking a request before any
model is loaded. Nothing here imports torch, so that --help and usage errors answer at once."""

import re
import sys

from ..baselines import load_baseline
from ..corpus import read_plain_corpus, read_table_corpus
from ..directions import AGGREGATIONS, PROMPT_SIDES, long_source_settings, resolve_options
from ..errors import BaselineError, UsageError
from ..long_source import DEFAULT_RETRIEVER, DEFAULT_WINDOW, DEFAULT_WINDOWS_K, LONG_SOURCE_MODES, LONGDOCFACTSCORE
from ..outputs import check_not_an_input, check_output_path, write_atomically  # noqa: F401 (the subcommands' use)
from ..rescale import DEFAULT_PAIRS, DEFAULT_SEED, RESCALE_MODES, corpus_documents
from ..variants import DEFAULT_CPU_MAX_TOKENS, DEFAULT_MAX_TOKENS, DTYPE_NAMES


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
    add_column_arguments(inputs, "--input")


def add_column_arguments(group, table_option):
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


def add_rescale_arguments(parser, effect):
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
        type=int,
        metavar="N",
        help=f"--rescale corpus: at most N extra pairs for the reference points (default {DEFAULT_PAIRS})",
    )
    rescaling.add_argument(
        "--rescale-seed", type=int, metavar="S", help=f"--rescale corpus: sampling seed (default {DEFAULT_SEED})"
    )


def add_model_arguments(
    parser, *, directions_default_text="all the inputs allow", aggregation_default="mean", aggregation_default_text=None
):
    model = parser.add_argument_group("model and scoring")
    model.add_argument(
        "-m",
        "--model",
        default="cnn",
        help="vanilla, cnn (default), cnn-para, mbart50, mt5, flan-t5, opt, qwen, or a Hub id or checkpoint directory "
        "of a BART, mBART, T5/mT5/Flan-T5, PEGASUS, Marian or decoder-only causal LM",
    )
    model.add_argument("--source-lang", metavar="CODE", help="mBART: the sources' language code (e.g. de_DE)")
    model.add_argument("--target-lang", metavar="CODE", help="mBART: the outputs' and references' code (e.g. en_XX)")
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
        help=f"padded tokens per batch (default {DEFAULT_MAX_TOKENS} on a GPU, {DEFAULT_CPU_MAX_TOKENS} on a CPU)",
    )
    model.add_argument(
        "--max-length", type=int, help="truncate texts to this many tokens (default 1024, or the model's positions)"
    )
    model.add_argument(
        "-q", "--quiet", action="store_true", help="no progress or loading bars (notes about the input still show)"
    )


def add_long_source_arguments(parser, *, mode=True):
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
        "--windows-k", type=int, metavar="K", help=f"windows per prediction sentence (default {DEFAULT_WINDOWS_K})"
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


def long_source_options(args, mode=None):
    """score_directions' long-source options from the flags (`mode` for commands without --long-source)."""
    mode = getattr(args, "long_source", mode)
    given = [
        flag
        for flag, value in (("--windows-k", args.windows_k), ("--window", args.window), ("--retriever", args.retriever))
        if value is not None
    ]
    if given and mode is None:
        raise UsageError(f"{' and '.join(given)} {'are' if len(given) > 1 else 'is'} for --long-source windows")
    if args.windows_k is not None and args.windows_k < 1:
        raise UsageError(f"--windows-k must be a positive integer, got {args.windows_k}")
    window = args.window if args.window is not None else DEFAULT_WINDOW
    if window != LONGDOCFACTSCORE and not window.isdigit():
        raise UsageError(f"--window must be {LONGDOCFACTSCORE} or a whole number of neighbours, got {window!r}")
    return {
        "long_source": mode,
        "windows_k": DEFAULT_WINDOWS_K if args.windows_k is None else args.windows_k,
        "window": window if window == LONGDOCFACTSCORE else int(window),
        "retriever": args.retriever or DEFAULT_RETRIEVER,
    }


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
    options = scoring_options(args)
    resolved = resolve_options(
        has_references=corpus.references is not None, has_sources=corpus.sources is not None, **options
    )
    check_engine_options(args)
    long_source = long_source_options(args)
    if long_source["long_source"] is not None:
        if args.rescale or args.baseline:
            raise UsageError("--long-source windows cannot be rescaled: window scores are on another scale")
        try:
            long_source_settings(**long_source, options=resolved)
        except ValueError as error:
            raise UsageError(str(error).replace("long_source=", "--long-source ")) from None
    options.update(rescale_options(args, resolved.prompt_label, corpus))
    options.update(long_source)
    return corpus, options


def scoring_options(args):
    return dict(
        directions=parse_directions(args.directions),
        aggregation=args.aggregation,
        prompt=args.prompt_phrases or args.prompt,
        prompt_side=args.prompt_side,
    )


def parse_directions(text):
    """-d's comma-separated directions (None when -d is not given); an empty -d, an empty item or a direction given
    twice is a usage error rather than silently meaning all directions or one."""
    if text is None:
        return None
    directions = text.split(",")
    if not any(item.strip() for item in directions):
        raise UsageError("-d/--directions is empty; leave it out to compute every direction the inputs allow")
    if any(not item.strip() for item in directions):
        raise UsageError(f"-d/--directions {text!r} has an empty item between commas")
    repeated = sorted({d for d in directions if directions.count(d) > 1})
    if repeated:
        raise UsageError(f"-d/--directions {text!r} gives {', '.join(repeated)} more than once")
    return directions


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


# What --rescale corpus on a corpus of one document can do instead (the command line has no unrelated_texts=).
CLI_ONE_DOCUMENT_REMEDY = (
    "rescale with a baseline file instead: --rescale baseline (the file `bartscore baseline` makes for this model "
    "and these settings) or --baseline FILE"
)


def rescale_options(args, prompt_label, corpus):
    """score_directions' rescaling options; a --baseline file is read and checked against the settings known
    before the model loads (the model itself is checked once it is loaded), and --rescale corpus needs segments
    from two documents or more (as the library counts them: bart_score.rescale.corpus_documents)."""
    if args.rescale == "corpus" and args.baseline:
        raise UsageError("--rescale corpus takes the reference points from the texts being scored; drop --baseline")
    corpus_only = {"--rescale-pairs": args.rescale_pairs, "--rescale-seed": args.rescale_seed}
    given = [flag for flag, value in corpus_only.items() if value is not None]
    if given and args.rescale != "corpus":
        raise UsageError(f"{' and '.join(given)} {'are' if len(given) > 1 else 'is'} for --rescale corpus only")
    if args.rescale_pairs is not None and args.rescale_pairs < 1:
        raise UsageError(f"--rescale-pairs must be a positive integer, got {args.rescale_pairs}")
    if args.rescale_seed is not None and args.rescale_seed < 0:
        raise UsageError(f"--rescale-seed must be at least 0, got {args.rescale_seed}")
    if args.baseline:
        known = {"prompt": prompt_label}
        if args.max_length is not None:  # else the model's, checked once it is loaded
            known["max_length"] = args.max_length
        problems = load_baseline(args.baseline).mismatches(known)
        if problems:
            raise UsageError(f"the baseline {args.baseline} was made with other settings: {'; '.join(problems)}")
        return {"baseline_path": args.baseline}
    if args.rescale == "corpus":
        segments = len(corpus.sources if corpus.sources is not None else corpus.references)
        try:
            corpus_documents(
                segments, corpus.sources, corpus.references, option="--rescale corpus", remedy=CLI_ONE_DOCUMENT_REMEDY
            )
        except ValueError as error:
            raise UsageError(str(error)) from None
        return {
            "rescale": "corpus",
            "rescale_pairs": DEFAULT_PAIRS if args.rescale_pairs is None else args.rescale_pairs,
            "rescale_seed": DEFAULT_SEED if args.rescale_seed is None else args.rescale_seed,
        }
    return {"rescale": args.rescale}


def _looks_like_a_device(name):
    kind, _, index = name.partition(":")
    return kind in ("cpu", "cuda", "mps", "xpu") and (not index or index.isdigit())


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
            source_lang=args.source_lang,
            target_lang=args.target_lang,
            template=args.template,
            compatibility=args.compatibility,
        ), 0
    except ValueError as error:  # e.g. --max-length beyond the model's positions
        print(f"bartscore {args.command}: error: {error}", file=sys.stderr)
        return None, 2
    except (OSError, RuntimeError) as error:
        print(f"bartscore {args.command}: {error}", file=sys.stderr)
        return None, 1


def score_all_systems(args, corpus, options):
    """The engine the options ask for, then score_corpus with them: (per_system, signature, exit status); per_system
    is None after a failure (said on stderr) and on ranks other than 0 under torchrun."""
    from ..corpus import score_corpus

    scorer, status = load_scorer(args)
    if scorer is None:
        return None, None, status
    try:
        per_system, signature = score_corpus(
            scorer, corpus, batch_size=args.batch_size, show_progress=not args.quiet, **options
        )
    except BaselineError as error:  # missing, or made for another model: the request's mistake
        print(f"bartscore {args.command}: error: {error}", file=sys.stderr)
        return None, None, 2
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
