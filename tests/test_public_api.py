"""The public API outlives the re-layout of the package (issue 44): every name `bart_score` exported before its
modules moved into subpackages is still exported, and importing it gives the same kind of object."""

import importlib
import inspect

import pytest

# bart_score.__all__ at 4229128, the last commit before the modules moved.
EXPORTED_BEFORE_THE_LAYOUT = [
    "AGGREGATIONS",
    "BARTScoreError",
    "BARTScoreWarning",
    "BARTScorer",
    "BENCHMARKS",
    "BaselineDirectionsError",
    "BaselineError",
    "BaselineNotFoundError",
    "BaselineSettingsError",
    "BenchmarkDataError",
    "CacheFileError",
    "CacheWarning",
    "CheckpointLoadError",
    "CheckpointNotFoundError",
    "ClusterOptions",
    "ClusterRun",
    "Corpus",
    "CorpusPoints",
    "CustomCodeError",
    "DEFAULT_CHECKPOINT",
    "DIRECTIONS",
    "EngineOptions",
    "FewerReferencePairsWarning",
    "InputError",
    "InputTypeError",
    "LONG_SOURCE_MODES",
    "LongSourceWarning",
    "METRIC_PATH",
    "MissingExtraError",
    "OutputFileError",
    "PARA_WEIGHTS_ENV",
    "PROMPT_SETS",
    "PROMPT_SIDES",
    "RESCALE_MODES",
    "RescaleWarning",
    "ResumableScorer",
    "ScoringError",
    "ScoringOptions",
    "ServerWarning",
    "TableLimits",
    "TokenizationWarning",
    "UnsupportedModelError",
    "VARIANTS",
    "WindowSettings",
    "__version__",
    "build_baseline",
    "check_corpus_request",
    "compare_directions",
    "compare_systems",
    "convert_gguf",
    "load_baseline",
    "load_benchmark",
    "load_retriever",
    "locate_checkpoint",
    "main",
    "paired_t_test",
    "read_plain_corpus",
    "read_table_corpus",
    "resolve_checkpoint",
    "score_benchmarks",
    "score_corpus",
    "score_dataset",
    "score_on_ray",
    "split_sentences",
    "write_baseline",
]


def test_every_name_exported_before_is_exported_still():
    bart_score = importlib.import_module("bart_score")
    assert set(EXPORTED_BEFORE_THE_LAYOUT) <= set(bart_score.__all__)
    assert set(bart_score.__all__) <= set(dir(bart_score))


@pytest.mark.parametrize("name", EXPORTED_BEFORE_THE_LAYOUT)
def test_each_name_imports_from_the_package(name):
    exported = getattr(importlib.import_module("bart_score"), name)
    namespace = {}
    exec(f"from bart_score import {name} as imported", namespace)
    assert namespace["imported"] is exported
    if inspect.isclass(exported) or inspect.isfunction(exported):
        assert exported.__module__.startswith("bart_score.")
