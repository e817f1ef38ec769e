"""Parsed arguments into the library's requests: reading the corpus, the ScoringOptions and EngineOptions of a
command line, every mistake found before any model is loaded, errors said with the flags that cause them
(said_with_flag), and loading the scorer and scoring every system. Nothing here imports torch before a model is
loaded, so that usage errors answer at once."""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from ..baselines.files import default_baseline_folder, load_baseline
from ..corpus import Corpus, check_corpus_request, read_plain_corpus
from ..errors import BaselineError, InputError, MissingExtraError
from ..long_source import over_limit
from ..options import CorpusPoints, EngineOptions, ScoringOptions
from ..reading import check_input_file
from ..rescale import DEFAULT_PAIRS, DEFAULT_SEED
from ..tables import read_table_corpus

if TYPE_CHECKING:
    from ..engine import BARTScorer


def long_source_arguments(args: argparse.Namespace, mode: str | None = None) -> dict:
    """ScoringOptions' long-source fields from the flags that were given (`mode` for a command without
    --long-source); the flags' values are checked by ScoringOptions."""
    mode = getattr(args, "long_source", mode)
    settings = {"windows_k": getattr(args, "windows_k", None), "window": getattr(args, "window", None)}
    settings["retriever"] = getattr(args, "retriever", None)
    settings["max_sentences"] = getattr(args, "max_sentences", None)
    given = [FLAGS[name] for name, value in settings.items() if value is not None]
    if given and mode is None:
        raise InputError(f"{' and '.join(given)} {'are' if len(given) > 1 else 'is'} for --long-source windows")
    return {"long_source": mode, **{name: value for name, value in settings.items() if value is not None}}


def input_files(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """(option, file) for every file a scoring command reads."""
    return [
        ("--sources", args.sources),
        *(("--references", path) for path in args.references),
        *(("--hypotheses", path) for path in args.hypotheses),
        ("--input", args.input),
        ("--baseline", getattr(args, "baseline", None)),
    ]


def check_input_files(files: list[tuple[str, str | None]]) -> None:
    """Every file input ((option, file) pairs; None: not given) readable within bounds, before any is read: a missing
    file, a folder, a device (/dev/zero) or a file over the size limit is a usage error naming its option."""
    for option, path in files:
        if path is not None:
            check_input_file(path, f"{option} {path}", error=InputError)


def corpus_from_args(args: argparse.Namespace) -> Corpus:
    if args.input and (args.sources or args.references or args.hypotheses):
        raise InputError("give either --input or plain-text files (--sources/--references/--hypotheses), not both")
    if args.input:
        return read_table_corpus(args.input, args.source_column, args.reference_columns, args.system_columns)
    if not args.sources and not args.references:
        raise InputError("give --sources and/or --references (or --input)")
    return read_plain_corpus(args.sources, args.references, args.hypotheses)


# Characters that would split a line or a TSV cell when a name is written out (tabs, line breaks, other controls).
_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check_written_name(text: str, what: str) -> None:
    """A name the output writes as it is (a system name, a segment id): no character that would forge rows or
    columns, and valid Unicode (a file name's undecodable bytes arrive as lone surrogates)."""
    bad = _BREAKING.search(text)
    if bad:
        raise InputError(
            f"{what} {text!r} holds {bad[0]!r}, which would break the output's lines or columns; rename it"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(f"{what} {text!r} holds {text[error.start]!r}, which is not valid Unicode text") from None


# The library's names of the scoring and model options, as the command line's flags name them in messages.
FLAGS = {
    "hypotheses": "-t/--hypotheses",
    "chat": "--chat",
    "instruction": "--instruction",
    "system": "--system",
    "template": "--template",
    "compatibility": "--compatibility",
    "corpus_points.pairs": "--rescale-pairs",
    "corpus_points.seed": "--rescale-seed",
    "directions": "-d/--directions",
    "aggregation": "--aggregation",
    "prompt_side": "--prompt-side",
    "prompt": "-p/--prompt",
    "rescale": "--rescale",
    "baseline": "--baseline",
    "long_source": "--long-source",
    "windows_k": "--windows-k",
    "window": "--window",
    "retriever": "--retriever",
    "max_sentences": "--max-sentences",
    "batch_size": "--batch-size",
    "max_tokens": "--max-tokens",
    "max_length": "--max-length",
    "device": "--device",
    "dtype": "--dtype",
    "source_lang": "--source-lang",
    "target_lang": "--target-lang",
}


def said_with_flag(error: BaseException) -> str:
    """An error's message as the command line says it. A library error about an option names it (`option`), and its
    message begins with the option's name ("max_length must be ...") or writes it as a keyword ("long_source='windows'
    cannot ...", "...: rescale='corpus'"): the command line says that option's flag instead ("--max-length must be
    ...", "--long-source windows cannot ...", "...: --rescale corpus"), or, for a message that does neither, puts the
    flag before it. No other word of the message is touched."""
    message = str(error)
    option = getattr(error, "option", None)
    if option not in FLAGS:
        return message
    keyword = re.compile(rf"(?<![\w.]){re.escape(option)}=('([^']*)'|[\w.-]+)")
    if keyword.search(message):
        return keyword.sub(lambda match: f"{FLAGS[option]} {match[2] if match[2] is not None else match[1]}", message)
    rest = message.removeprefix(option)
    if rest != message and rest[:1] in ("", " ", ":", ",", ";"):
        return FLAGS[option] + rest
    return f"{FLAGS[option]}: {message}"


def options_from_args(args: argparse.Namespace, **overrides: object) -> ScoringOptions:
    """The scoring options of a command line, checked by the library (an InputError about an option is said with its
    flag: said_with_flag); overrides: options a subcommand sets itself."""
    rescaling = getattr(args, "rescale", None)
    pairs, seed = getattr(args, "rescale_pairs", None), getattr(args, "rescale_seed", None)
    corpus_points = None
    if pairs is not None or seed is not None:
        if rescaling != "corpus":
            flags = (("--rescale-pairs", pairs), ("--rescale-seed", seed))
            given = [flag for flag, value in flags if value is not None]
            raise InputError(f"{' and '.join(given)} {'are' if len(given) > 1 else 'is'} for --rescale corpus only")
        corpus_points = CorpusPoints(
            pairs=DEFAULT_PAIRS if pairs is None else pairs, seed=DEFAULT_SEED if seed is None else seed
        )
    options = {
        "directions": parse_directions(args.directions),
        "aggregation": args.aggregation,
        "prompt": args.prompt_phrases or args.prompt,
        "prompt_side": args.prompt_side,
        "rescale": rescaling,
        "baseline": getattr(args, "baseline", None),
        "corpus_points": corpus_points,
        **long_source_arguments(args, overrides.get("long_source")),  # type: ignore[arg-type]  # a mode or None
        "batch_size": args.batch_size,
        "max_tokens": args.max_tokens,
        "show_progress": not args.quiet,
    }
    return ScoringOptions(**{**options, **overrides})


# What --rescale corpus on a corpus of one document can do instead (the command line has no unrelated texts).
CLI_ONE_DOCUMENT_REMEDY = (
    "rescale with a baseline file instead: --rescale baseline (the file `bartscore baseline` makes for this model "
    "and these settings) or --baseline FILE"
)


def checked_request(args: argparse.Namespace) -> tuple[Corpus, ScoringOptions]:
    """The corpus and scoring options of a command line, every mistake reported before any model is loaded."""
    check_input_files([(option, path) for option, path in input_files(args) if option != "--baseline"])
    corpus = corpus_from_args(args)
    for name in corpus.systems:
        check_written_name(name, "the system name")
    options = options_from_args(args)
    check_engine_options(args)
    if options.baseline is not None:  # read, and checked against the settings known before the model loads
        known = {"prompt": options.prompt_label}
        if args.max_length is not None:  # else the model's, checked once it is loaded
            known["max_length"] = args.max_length
        if args.baseline is not None and os.path.lexists(args.baseline):  # a missing one is load_baseline's to report
            check_input_files([("--baseline", args.baseline)])
        # options_from_args gives options.baseline the --baseline path, a str, never a Baseline
        problems = load_baseline(options.baseline).mismatches(known)  # type: ignore[arg-type]
        if problems:
            raise InputError(f"the baseline {args.baseline} was made with other settings: {'; '.join(problems)}")
    elif options.rescale == "baseline":
        check_default_baselines_exist(args)
    directions = check_corpus_request(corpus, options, remedy=CLI_ONE_DOCUMENT_REMEDY)
    if options.windows is not None and "faithfulness" in directions and corpus.sources is not None:
        check_sentence_counts(corpus, options.windows.max_sentences)
    return corpus, options


def check_sentence_counts(corpus: Corpus, limit: int) -> None:
    """--long-source windows: a source or system output of more than --max-sentences sentences, refused before the
    model loads (the library refuses it too, once the model is loaded)."""
    texts = {"the source of segment": corpus.sources or []}
    texts.update({f"system {name!r}, segment": outputs for name, outputs in corpus.systems.items()})
    seen = set()
    for what, column in texts.items():
        for index, text in enumerate(column):
            if text in seen:
                continue
            seen.add(text)
            counted = over_limit(text, limit)
            if counted is not None:
                raise InputError(
                    f"{what} {index + 1} has more than {limit} sentences ({counted} counted when splitting stopped); "
                    f"--long-source windows takes at most --max-sentences {limit} per text: raise it, or shorten or "
                    f"divide the text"
                )


def check_default_baselines_exist(args: argparse.Namespace) -> None:
    """--rescale without --baseline, where the default folder holds no baseline file at all: missing for any model,
    which is told without the model (which file of a folder that has some is this model's is told once it loads)."""
    folder = default_baseline_folder()
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    if not any(name.endswith(".json") for name in names):
        raise InputError(
            f"--rescale needs the baseline of this model and these settings, and {folder} holds no baseline file: "
            f"make one from a few thousand texts like those you score (bartscore baseline -m {args.model} --corpus "
            f"TEXTS.txt, with the same prompt, --max-length and chat options), give one with --baseline FILE, or "
            f"take the reference points from the texts being scored: --rescale corpus"
        )


def parse_directions(text: str | None) -> list[str] | None:
    """-d's comma-separated directions as a list for ScoringOptions, which checks them (None when -d is not given; an
    empty -d is an empty list, which it refuses rather than taking it to mean every direction)."""
    if text is None:
        return None
    return text.split(",") if text else []


def engine_options(args: argparse.Namespace) -> EngineOptions:
    """The engine's settings of a command line, checked by the library before any model is loaded."""
    return EngineOptions(
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
        chat=args.chat,
        instruction=args.instruction,
        system=args.system,
    )


def check_engine_options(args: argparse.Namespace) -> None:
    """The model options' values that argparse cannot check (positive sizes, then every check EngineOptions makes:
    a device name, chat options that do not go together, ...)."""
    for flag, value in (
        ("--batch-size", args.batch_size),
        ("--max-tokens", args.max_tokens),
        ("--max-length", args.max_length),
    ):
        if value is not None and value < 1:
            raise InputError(f"{flag} must be a positive integer, got {value}")
    engine_options(args)


def load_scorer(args: argparse.Namespace) -> tuple[BARTScorer | None, int]:
    """The engine the options ask for, or (None, exit status) after saying why it cannot be had."""
    from ..engine import BARTScorer

    if args.quiet:  # transformers and huggingface_hub draw their own bars while loading and downloading
        import huggingface_hub
        import transformers

        transformers.utils.logging.disable_progress_bar()
        huggingface_hub.utils.disable_progress_bars()

    try:
        return BARTScorer(engine_options(args)), 0
    except ValueError as error:  # e.g. --max-length beyond the model's positions
        print(f"bartscore {args.command}: error: {said_with_flag(error)}", file=sys.stderr)
        return None, 2
    except (OSError, RuntimeError, MissingExtraError) as error:
        print(f"bartscore {args.command}: {error}", file=sys.stderr)
        return None, 1


def score_all_systems(
    args: argparse.Namespace, corpus: Corpus, options: ScoringOptions
) -> tuple[dict[str, dict[str, Any]] | None, str | None, int]:
    """The engine the options ask for, then score_corpus with them: (per_system, signature, exit status); per_system
    is None after a failure (said on stderr) and on ranks other than 0 under torchrun."""
    from ..corpus import score_corpus

    scorer, status = load_scorer(args)
    if scorer is None:
        return None, None, status
    try:
        per_system, signature = score_corpus(scorer, corpus, options)
    except (BaselineError, InputError) as error:  # missing, made for another model, a text the options refuse
        print(f"bartscore {args.command}: error: {said_with_flag(error)}", file=sys.stderr)
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
