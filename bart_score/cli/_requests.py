"""Parsed arguments into the library's requests: reading the corpus, the ScoringOptions and EngineOptions of a
command line (built by walking the table of options over the parsed arguments, which are read and never written:
given_options), every mistake found before any model is loaded, the checked request of score and compare
(CorpusRequest), and loading the scorer and scoring every system (through the score cache, if one is given). Nothing
here imports torch before a model is loaded, so that usage errors answer at once (and a server that does not answer,
check_server_answers)."""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..baselines.files import baselines_agreeing, default_baseline_folder, load_baseline, mismatch_parts
from ..corpora._outputs import check_distinct_outputs, check_not_an_input, check_output_path
from ..corpora._reading import check_input_file
from ..corpora.corpus import Corpus, check_corpus_request, read_plain_corpus
from ..corpora.table_files import read_table_corpus
from ..errors import BARTScoreError, CacheFileError, CheckpointNotFoundError, InputError
from ..long_documents.windows import over_limit, over_limit_error
from ..models.served._transport import names_a_server
from ..options import (
    DEFAULT_CONCURRENCY,
    DEFAULT_REQUEST_TIMEOUT,
    CheckedOptions,
    CorpusPoints,
    EngineOptions,
    ScoringOptions,
    too_long_error,
)
from ..scoring.score_cache import DEFAULT_CHUNK_PAIRS, check_cache_file
from ._arguments import LONG_SOURCE_MODE, LONG_SOURCE_SECTION, section_options
from ._wording import FLAGS, Failed

if TYPE_CHECKING:
    from ..scoring.engine import BARTScorer
    from ..scoring.protocols import Scorer


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


def given_options(args: argparse.Namespace, options_class: type[CheckedOptions]) -> dict[str, Any]:
    """The options of `options_class` that the command line gives: each option whose flag this subcommand offers and
    was given (not None), as the option takes it (Flag.read); an option made of parts (corpus_points), a mapping of
    the parts given. The parsed arguments are read, never written."""
    given: dict[str, Any] = {}
    for name, spec in options_class.TABLE.items():
        for flag in spec.flags:
            value = getattr(args, flag.dest, None)
            if value is not None:
                given[name] = value if flag.read is None else flag.read(value)
        parts = given_options(args, spec.parts) if spec.parts is not None else {}
        if parts:
            given[name] = parts
    return given


def options_from_args(args: argparse.Namespace, **overrides: Any) -> ScoringOptions:
    """The scoring options of a command line, checked by the library (an InputError about an option is said with its
    flag: bart_score.cli._wording); overrides: options a subcommand sets itself. Flags that only a mode uses are refused
    without it: --rescale-pairs and --rescale-seed without --rescale corpus, the window options without --long-source
    windows."""
    given = given_options(args, ScoringOptions)
    points = [FLAGS[f"{CorpusPoints.PREFIX}{name}"] for name in given.get("corpus_points", {})]
    if given.get("rescale") != "corpus":
        _refuse_without_their_mode(points, "--rescale corpus only")
    long_source = section_options(LONG_SOURCE_SECTION)
    windows = [flags[0].said for name, flags in long_source if name in given and name != LONG_SOURCE_MODE]
    if overrides.get(LONG_SOURCE_MODE, given.get(LONG_SOURCE_MODE)) is None:
        _refuse_without_their_mode(windows, "--long-source windows")
    return ScoringOptions(**{**given, **overrides})


def _refuse_without_their_mode(flags: list[str], mode: str) -> None:
    if flags:
        raise InputError(f"{' and '.join(flags)} {'are' if len(flags) > 1 else 'is'} for {mode}")


# What --rescale corpus on a corpus of one document can do instead (the command line has no unrelated texts).
CLI_ONE_DOCUMENT_REMEDY = (
    "rescale with a baseline file instead: --rescale baseline (the file `bartscore baseline` makes for this model "
    "and these settings) or --baseline FILE"
)


@dataclass(frozen=True)
class CorpusRequest:
    """What score and compare ask for, checked before any model is loaded: the corpus, its scoring options and the
    engine's settings; command: the subcommand as its messages name it ("bartscore score"); cache: the score cache
    (None: none), appended every save_every pairs."""

    command: str
    corpus: Corpus
    options: ScoringOptions
    engine: EngineOptions
    cache: str | None
    save_every: int


def checked_request(args: argparse.Namespace) -> CorpusRequest:
    """The corpus, scoring options and engine settings of a command line, every mistake reported before any model is
    loaded."""
    check_input_files([(option, path) for option, path in input_files(args) if option != "--baseline"])
    corpus = corpus_from_args(args)
    for name in corpus.systems:
        check_written_name(name, "the system name")
    options = options_from_args(args)
    engine = engine_options(args)
    if isinstance(options.baseline, str):  # read, and checked against the settings known before the model loads
        known: dict[str, Any] = {"prompt": options.prompt_label}
        if engine.max_length is not None:  # else the model's, checked once it is loaded
            known["max_length"] = engine.max_length
        if os.path.lexists(options.baseline):  # a missing one is load_baseline's to report
            check_input_files([("--baseline", options.baseline)])
        problems = load_baseline(options.baseline).mismatches(known)
        if problems:
            raise InputError(
                f"the baseline {options.baseline} was made with other settings: ", *mismatch_parts(problems)
            )
    elif options.rescale == "baseline":
        check_default_baselines_exist(engine, options)
    directions = check_corpus_request(corpus, options, remedy=CLI_ONE_DOCUMENT_REMEDY)
    check_text_lengths(corpus, options)
    if options.windows is not None and "faithfulness" in directions and corpus.sources is not None:
        check_sentence_counts(corpus, options.windows.max_sentences)
    if args.cache is not None:
        check_cache_path(args.cache, input_files(args), [("-o", getattr(args, "output", "-"))])
    save_every = checked_save_every(args.save_every, engine)
    check_server_answers(engine)
    return CorpusRequest(f"bartscore {args.command}", corpus, options, engine, args.cache, save_every)


def check_cache_path(cache: str, inputs: list[tuple[str, str | None]], outputs: list[tuple[str, str]]) -> None:
    """--cache, checked before any model loads as an output is (writable, none of the `inputs`, none of the other
    `outputs`, each (option, file), "-" being stdout), and as a cache: a file that is no cache of ours, or a damaged
    one, is refused."""
    if cache == "":
        raise InputError("--cache is empty; give a file name, or leave it out")
    check_output_path(cache, "--cache", make_folders=True)
    check_not_an_input(cache, inputs, "--cache")
    check_distinct_outputs([(option, path) for option, path in outputs if path != "-"] + [("--cache", cache)])
    try:
        check_cache_file(cache)
    except CacheFileError as error:
        raise InputError("--cache: ", *error.parts, remedy=error.remedy) from None


def checked_save_every(save_every: int | None, engine: EngineOptions) -> int:
    """--save-every, a positive whole number; without it, DEFAULT_CHUNK_PAIRS, or for a checkpoint that names a server
    the requests it keeps in flight (--concurrency): a server takes seconds a pair, and a run stopped then loses at
    most the answers under way."""
    if save_every is not None:
        if save_every < 1:
            raise InputError(f"--save-every must be a positive integer, got {save_every}")
        return save_every
    if names_a_server(engine.checkpoint):
        return engine.concurrency or DEFAULT_CONCURRENCY
    return DEFAULT_CHUNK_PAIRS


def _corpus_texts(corpus: Corpus) -> dict[str, list[str]]:
    """The texts of a corpus by what the messages call their segments: "the source of segment", "system 'a',
    segment"."""
    texts = {"the source of segment": corpus.sources or []}
    texts.update({f"system {name!r}, segment": outputs for name, outputs in corpus.systems.items()})
    return texts


def check_text_lengths(corpus: Corpus, options: ScoringOptions) -> None:
    """A source, reference or system output of more than --max-chars characters, refused before the model loads (the
    library refuses it too, before it is split or tokenized)."""
    texts = _corpus_texts(corpus)
    texts.update({"a reference of segment": [max(refs, key=len) for refs in corpus.references or []]})
    for what, column in texts.items():
        for index, text in enumerate(column):
            if len(text) > options.max_chars:
                raise too_long_error(f"{what} {index + 1}", len(text), options.max_chars)


def check_sentence_counts(corpus: Corpus, limit: int) -> None:
    """--long-source windows: a source or system output of more than --max-sentences sentences, refused before the
    model loads (the library refuses it too, once the model is loaded; within splitting_once, which main opens, it
    takes the split made here)."""
    seen = set()
    for what, column in _corpus_texts(corpus).items():
        for index, text in enumerate(column):
            if text in seen:
                continue
            seen.add(text)
            stopped = over_limit(text, limit)
            if stopped is not None:
                raise over_limit_error(stopped, limit, f"{what} {index + 1}")


def check_default_baselines_exist(engine: EngineOptions, options: ScoringOptions) -> None:
    """--rescale without --baseline, where the default folder holds no baseline file for this model and the settings
    known before it loads (known_baseline_settings): missing, which is told without loading the model (which
    file it is, among those that agree, is told once it loads)."""
    folder = default_baseline_folder()
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    remedy = (
        f"make one from a few thousand texts like those you score (bartscore baseline -m {engine.checkpoint} --corpus "
        f"TEXTS.txt, with the same prompt, --max-length and chat options), give one with --baseline FILE, or take the "
        f"reference points from the texts being scored: --rescale corpus"
    )
    if not any(name.endswith(".json") for name in names):
        raise InputError(
            f"--rescale needs the baseline of this model and these settings, and {folder} holds no baseline file: "
            f"{remedy}"
        )
    known = known_baseline_settings(engine, options)
    if known is None or baselines_agreeing(folder, known, chat=engine.chat):
        return
    settings = [f"the model {known['model']}", f"the prompt setting {known['prompt']!r}"]
    if "max_length" in known:
        settings.append(f"--max-length {known['max_length']}")
    settings.append("chat scoring (--chat)" if engine.chat else "scoring without --chat")
    raise InputError(
        f"--rescale needs the baseline of this model and these settings, and none of the baseline files in {folder} "
        f"is for {', '.join(settings[:-1])} and {settings[-1]}: {remedy}"
    )


def known_baseline_settings(engine: EngineOptions, options: ScoringOptions) -> dict[str, Any] | None:
    """The settings of a baseline's key that are known before the model loads: the model's identity (read from its
    files, not its weights), the prompt setting, and --max-length where it is given; None when the checkpoint cannot
    be told yet (its loading will say why)."""
    from ..models.checkpoints import locate_checkpoint, weights_identity
    from ..models.loading import resolve_checkpoint

    try:
        checkpoint, weights = resolve_checkpoint(engine.checkpoint)
        located = locate_checkpoint(checkpoint)
        identity = located.identity()
    except BARTScoreError:
        return None
    if not located.local and "@" not in identity:  # a Hub id not downloaded yet: its commit is not known
        return None
    if weights is not None:
        identity = f"{identity}+{weights_identity(weights)}"
    known: dict[str, Any] = {"model": identity, "prompt": options.prompt_label}
    if engine.max_length is not None:
        known["max_length"] = engine.max_length
    return known


def engine_options(args: argparse.Namespace, **overrides: Any) -> EngineOptions:
    """The engine's settings of a command line, checked by the library before any model is loaded (sizes, a device
    name, chat options that do not go together, ...); results on rank 0 only (the command line writes them there).
    overrides: settings a subcommand gives itself (meta-eval's checkpoint, one of several -m)."""
    return EngineOptions(**{**given_options(args, EngineOptions), "results_on": "rank0", **overrides})


def check_server_answers(engine: EngineOptions) -> None:
    """A checkpoint that names an inference server: the server asked once whether it answers at all, before torch and
    transformers are imported (half a minute on a busy machine), so that a wrong URL is said at once; loading the
    model asks the rest. Its address's warnings (plain http:// to another machine) are left to the load, which
    gives them in the command line's words. (meta-eval asks at the load: a checkpoint it cannot load leaves the
    other metrics' table to write.)"""
    from ..models.served._transport import Connection, api_key, server_address

    if not names_a_server(engine.checkpoint):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        address = server_address(engine.checkpoint)
    timeout = engine.request_timeout or DEFAULT_REQUEST_TIMEOUT
    problem = Connection(address, key=api_key(), timeout=timeout, retries=0).reached()
    if problem is not None:  # as the load would say it (bart_score.models.served._server.connect_server)
        raise CheckpointNotFoundError(
            f"no server answers at {address.url} ({problem})",
            option="checkpoint",
            remedy="start the server, or give the URL it listens on",
        )


# The environment variables that set torch's CPU threads for a process, which --threads' default leaves to them.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def default_threads() -> int | None:
    """--threads' default: None (torch's own setting) where THREAD_VARIABLES set it; else the cores this process may
    use less the machine's load average (the other work there), at least 1. Torch's own default is every core, and
    its threads wait for one another spinning: on two cores shared with other jobs, issue 46's GGUF file scored 0.64
    pairs/s with it and 2.81 with OMP_NUM_THREADS=1 (bench/bench_threads.py measures the choices side by side)."""
    if any(os.environ.get(name) for name in THREAD_VARIABLES):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this system
        load = 0.0
    return max(1, min(cores, round(cores - load)))


def load_scorer(engine: EngineOptions, *, quiet: bool) -> BARTScorer:
    """The engine the settings ask for, with default_threads where --threads is not given (quiet: without the bars
    transformers and huggingface_hub draw while loading and downloading). A failure to load that is not of
    bart_score's errors (such as running out of GPU memory) is a Failed."""
    from ..scoring.engine import BARTScorer

    if engine.threads is None:
        engine = engine.replace(threads=default_threads())
    if quiet:
        import huggingface_hub
        import transformers

        transformers.utils.logging.disable_progress_bar()
        huggingface_hub.utils.disable_progress_bars()
    try:
        return BARTScorer(engine)
    except BARTScoreError:
        raise
    except (RuntimeError, ValueError) as error:
        raise Failed(error) from error


def score_all_systems(request: CorpusRequest) -> tuple[dict[str, dict[str, Any]] | None, str | None]:
    """The engine the request asks for, then score_corpus with its options, through the score cache if the request
    has one: (per_system, signature); per_system is None on ranks other than 0 under torchrun. A failure while
    scoring is a Failed ("scoring failed"); with a cache, one that also says that the pairs scored are kept in it
    (stopped_while_scoring), and a run that ends says how many pairs were scored and how many taken from it."""
    from ..corpora.corpus import score_corpus
    from ..scoring.score_cache import ResumableScorer

    engine = load_scorer(request.engine, quiet=not request.options.show_progress)
    resumable = (
        None if request.cache is None else ResumableScorer(engine, request.cache, chunk_pairs=request.save_every)
    )
    scorer: Scorer = engine if resumable is None else resumable
    try:
        per_system, signature = score_corpus(scorer, request.corpus, request.options)
    except (OSError, RuntimeError, ValueError, KeyboardInterrupt) as error:  # a usage error among them is said as one
        if resumable is not None:
            raise stopped_while_scoring(error, resumable.scored_pairs, resumable.path) from error
        if isinstance(error, KeyboardInterrupt):
            raise
        raise Failed(error, "scoring failed") from error
    if per_system is not None and resumable is not None:
        print(
            f"{request.command}: {resumable.scored_pairs} pair(s) scored, {resumable.cached_pairs} taken from "
            f"{resumable.path}",
            file=sys.stderr,
        )
    if per_system is not None and request.corpus.blank_references:
        print(
            f"{request.command}: note: {request.corpus.blank_references} blank reference line(s) or cell(s) are not "
            f"references and were skipped",
            file=sys.stderr,
        )
    return per_system, signature


def is_rank_0() -> bool:
    """Whether this process reports and keeps the cache: rank 0 under torchrun, or the only process."""
    import torch

    return not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0


def stopped_while_scoring(error: BaseException, scored_pairs: int, cache: str) -> BaseException:
    """What to raise for a run stopped by `error` while scoring through a score cache (Ctrl-C among them): a Failed
    that says, after the error, that the pairs scored before it are kept in the cache for a rerun (said by rank 0
    alone, which keeps the cache); a cache file that cannot be used keeps nothing, and is raised as it is."""
    if isinstance(error, CacheFileError):
        return error
    kept = f"the {scored_pairs} pair(s) scored before are kept in {cache}; run the same command again to resume"
    return Failed(error, "scoring failed", notes=[kept], quiet=not is_rank_0())
