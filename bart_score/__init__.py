"""BARTScore (Yuan, Neubig & Liu, NeurIPS 2021): evaluating generated text as text generation.

``from bart_score import BARTScorer`` is a drop-in for the original class. The package's modules, one concern each:

    errors          the one family of errors bart_score raises
    options         ScoringOptions: what one scoring call asks for, checked once and passed down whole
    engine          BARTScorer: planning, batches, encoder reuse, log-probabilities, out-of-memory retries
    models/         model families (their token policies) and checkpoints: finding, loading, identity
    variants        the named configurations ("vanilla", "cnn", "cnn-para", ...) and engine defaults
    inputs          checks of what callers pass in
    pair_groups     groups of pairs scored in one engine call under every prompt phrase
    directions      faithfulness, precision, recall, f_score; multi-reference aggregation; the signature
    long_source     faithfulness over windows of long sources (LongDocFACTScore); sentence splitting
    retrievers      the source sentences most like a prediction sentence: sentence embeddings or BM25
    prompts         the paper's prompt sets
    distributed     splitting one call across torch.distributed ranks
    corpus          plain-text and table readers, score_corpus, score_dataset
    stats           bootstrap confidence intervals, paired bootstrap and paired t-test
    rescale         reference points (unrelated text, copy) and the linear map; sampling them from a corpus
    baseline_files  the baseline file: its key, reading, checking and writing, where it is kept
    baselines       making a baseline, and finding the one a call needs
    outputs         output files: checked first, written atomically, valid JSON, safe in spreadsheets
    score_cache     resumable scoring: a scorer wrapper backed by an append-only cache file
    meta_eval/      the paper's meta-evaluation: the release's human judgments (benchmarks), scoring them (scoring),
                    the release's correlation protocol and significance test (protocol), tables beside the paper's
                    numbers (table, published)
    cli/            the ``bartscore`` command, one module per subcommand

Names are imported from their modules on first use, so that importing the package (and the command line's help)
does not load torch."""

import importlib

from .version import __version__

_EXPORTS = {
    "BARTScoreError": "errors",
    "InputError": "errors",
    "InputTypeError": "errors",
    "UsageError": "errors",
    "UnsupportedModelError": "errors",
    "CustomCodeError": "errors",
    "CheckpointNotFoundError": "errors",
    "CheckpointLoadError": "errors",
    "MissingExtraError": "errors",
    "BaselineError": "errors",
    "BaselineNotFoundError": "errors",
    "BaselineSettingsError": "errors",
    "BaselineDirectionsError": "errors",
    "BenchmarkDataError": "errors",
    "CacheFileError": "errors",
    "ScoringError": "errors",
    "BARTScorer": "engine",
    "resolve_checkpoint": "models",
    "locate_checkpoint": "models",
    "VARIANTS": "variants",
    "DEFAULT_CHECKPOINT": "variants",
    "PARA_WEIGHTS_ENV": "variants",
    "ScoringOptions": "options",
    "CorpusPoints": "options",
    "DIRECTIONS": "options",
    "AGGREGATIONS": "options",
    "PROMPT_SIDES": "options",
    "RESCALE_MODES": "options",
    "PROMPT_SETS": "prompts",
    "LONG_SOURCE_MODES": "long_source",
    "WindowSettings": "long_source",
    "split_sentences": "long_source",
    "load_retriever": "retrievers",
    "Corpus": "corpus",
    "read_plain_corpus": "corpus",
    "read_table_corpus": "corpus",
    "TableLimits": "corpus",
    "score_corpus": "corpus",
    "score_dataset": "corpus",
    "check_corpus_request": "corpus",
    "compare_systems": "stats",
    "compare_directions": "stats",
    "paired_t_test": "stats",
    "build_baseline": "baselines",
    "load_baseline": "baseline_files",
    "write_baseline": "baseline_files",
    "BENCHMARKS": "meta_eval.benchmarks",
    "load_benchmark": "meta_eval.benchmarks",
    "score_benchmarks": "meta_eval.scoring",
    "ResumableScorer": "score_cache",
    "main": "cli",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'bart_score' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)


def __dir__():
    return __all__
