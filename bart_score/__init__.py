"""BARTScore (Yuan, Neubig & Liu, NeurIPS 2021): evaluating generated text as text generation.

``from bart_score import BARTScorer`` is a drop-in for the original class. The package's modules, one concern each
(a package's modules in brackets; a leading underscore marks a module that is not public
API):

    errors           the one family of errors bart_score raises, and the one of warnings it gives
    messages         what an error or warning says, as data each front end words its own way (Mention, Recipe)
    inputs           checks of what callers pass in, and the words their messages share
    version          the package's version, in a module of its own
    options/         the table of options, each declared once (default, check, doc line, flag, Space field), a leaf
                     that imports no feature: ScoringOptions, what one scoring call asks for, checked once and passed
                     down whole; EngineOptions, the engine's settings, likewise; ClusterOptions, how a run on a Ray
                     cluster is spread [_table, _vocabulary, _checks, _windows, _chat, _scoring, _engine, _cluster]
    variants         the named configurations ("vanilla", "cnn", "cnn-para", ...) and engine defaults
    stats            bootstrap confidence intervals, paired bootstrap and paired t-test
    scoring/         the core: the engine (BARTScorer) and its plan, the directions over it, what results carry
                     [_plan, engine, protocols, _pair_groups, _directions, signature, prompts, score_cache, _progress]
    models/          model families, checkpoints, served models [base, seq2seq, causal, chat, _chat_render, gguf,
                     checkpoints, loading, conversion, served/]
    corpora/         corpora and the files read and written [corpus, table_files, dataset_scoring, _reading, _outputs]
    long_documents/  faithfulness over windows of long sources (LongDocFACTScore) [windows, retrievers]
    baselines/       reference points and rescaling; baseline files made from a corpus, found for a call [rescale,
                     files, build, _lookup]
    scaling/         one call across torch.distributed ranks; a table across a Ray cluster [_distributed, cluster,
                     _cluster_input, _cluster_ray, _cluster_pool, _cluster_output]
    integrations/    bart_score inside other libraries [evaluate_metric, rewards, _shared_engines]
    meta_eval/       the meta-evaluation [_definitions, benchmarks, _layouts, scoring, protocol,
                     _correlation_table, published, _split, _selection_grid, _selection_statistics, _selection_report]
    cli/             CLI [_arguments, _requests, _wording, score, compare, baseline, meta_eval, meta_eval_select,
                     _meta_eval_common, convert, ray_cluster]
    __main__         ``python -m bart_score``: the command line

Names are imported from their modules on first use, so that importing the package (and the command line's help)
does not load torch. METRIC_PATH is the evaluate metric's module, bartscore.py, which is installed beside this package
(as it stands beside it in the checkout): ``evaluate.load(bart_score.METRIC_PATH, "cnn")`` loads the metric from any
folder."""

import importlib
import os
from typing import TYPE_CHECKING, Any

from .version import __version__

METRIC_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bartscore.py")

_EXPORTS = {
    "BARTScoreError": "errors",
    "InputError": "errors",
    "InputTypeError": "errors",
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
    "OutputFileError": "errors",
    "ScoringError": "errors",
    "BARTScoreWarning": "errors",
    "TokenizationWarning": "errors",
    "RescaleWarning": "errors",
    "FewerReferencePairsWarning": "errors",
    "LongSourceWarning": "errors",
    "CacheWarning": "errors",
    "ServerWarning": "errors",
    "BARTScorer": "scoring.engine",
    "resolve_checkpoint": "models.loading",
    "locate_checkpoint": "models.checkpoints",
    "convert_gguf": "models.conversion",
    "VARIANTS": "variants",
    "DEFAULT_CHECKPOINT": "variants",
    "PARA_WEIGHTS_ENV": "variants",
    "ScoringOptions": "options",
    "EngineOptions": "options",
    "CorpusPoints": "options",
    "DIRECTIONS": "options",
    "AGGREGATIONS": "options",
    "PROMPT_SIDES": "options",
    "RESCALE_MODES": "options",
    "PROMPT_SETS": "scoring.prompts",
    "LONG_SOURCE_MODES": "options",
    "WindowSettings": "options",
    "split_sentences": "long_documents.windows",
    "load_retriever": "long_documents.retrievers",
    "Corpus": "corpora.corpus",
    "read_plain_corpus": "corpora.corpus",
    "read_table_corpus": "corpora.table_files",
    "TableLimits": "corpora.table_files",
    "score_corpus": "corpora.corpus",
    "score_dataset": "corpora.dataset_scoring",
    "score_on_ray": "scaling.cluster",
    "BARTScoreReward": "integrations.rewards",
    "ClusterRun": "scaling.cluster",
    "ClusterOptions": "options",
    "check_corpus_request": "corpora.corpus",
    "compare_systems": "stats",
    "compare_directions": "stats",
    "paired_t_test": "stats",
    "build_baseline": "baselines.build",
    "load_baseline": "baselines.files",
    "write_baseline": "baselines.files",
    "BENCHMARKS": "meta_eval.benchmarks",
    "load_benchmark": "meta_eval.benchmarks",
    "score_benchmarks": "meta_eval.scoring",
    "ResumableScorer": "scoring.score_cache",
    "main": "cli",
}
__all__ = ["METRIC_PATH", "__version__", *_EXPORTS]

if TYPE_CHECKING:  # the lazy exports' own types, for type checkers (imported on first use at run time)
    from .baselines.build import build_baseline as build_baseline
    from .baselines.files import load_baseline as load_baseline
    from .baselines.files import write_baseline as write_baseline
    from .cli import main as main
    from .corpora.corpus import Corpus as Corpus
    from .corpora.corpus import check_corpus_request as check_corpus_request
    from .corpora.corpus import read_plain_corpus as read_plain_corpus
    from .corpora.corpus import score_corpus as score_corpus
    from .corpora.dataset_scoring import score_dataset as score_dataset
    from .corpora.table_files import TableLimits as TableLimits
    from .corpora.table_files import read_table_corpus as read_table_corpus
    from .errors import BARTScoreError as BARTScoreError
    from .errors import BARTScoreWarning as BARTScoreWarning
    from .errors import BaselineDirectionsError as BaselineDirectionsError
    from .errors import BaselineError as BaselineError
    from .errors import BaselineNotFoundError as BaselineNotFoundError
    from .errors import BaselineSettingsError as BaselineSettingsError
    from .errors import BenchmarkDataError as BenchmarkDataError
    from .errors import CacheFileError as CacheFileError
    from .errors import CacheWarning as CacheWarning
    from .errors import CheckpointLoadError as CheckpointLoadError
    from .errors import CheckpointNotFoundError as CheckpointNotFoundError
    from .errors import CustomCodeError as CustomCodeError
    from .errors import FewerReferencePairsWarning as FewerReferencePairsWarning
    from .errors import InputError as InputError
    from .errors import InputTypeError as InputTypeError
    from .errors import LongSourceWarning as LongSourceWarning
    from .errors import MissingExtraError as MissingExtraError
    from .errors import OutputFileError as OutputFileError
    from .errors import RescaleWarning as RescaleWarning
    from .errors import ScoringError as ScoringError
    from .errors import ServerWarning as ServerWarning
    from .errors import TokenizationWarning as TokenizationWarning
    from .errors import UnsupportedModelError as UnsupportedModelError
    from .integrations.rewards import BARTScoreReward as BARTScoreReward
    from .long_documents.retrievers import load_retriever as load_retriever
    from .long_documents.windows import split_sentences as split_sentences
    from .meta_eval.benchmarks import BENCHMARKS as BENCHMARKS
    from .meta_eval.benchmarks import load_benchmark as load_benchmark
    from .meta_eval.scoring import score_benchmarks as score_benchmarks
    from .models.checkpoints import locate_checkpoint as locate_checkpoint
    from .models.conversion import convert_gguf as convert_gguf
    from .models.loading import resolve_checkpoint as resolve_checkpoint
    from .options import AGGREGATIONS as AGGREGATIONS
    from .options import DIRECTIONS as DIRECTIONS
    from .options import LONG_SOURCE_MODES as LONG_SOURCE_MODES
    from .options import PROMPT_SIDES as PROMPT_SIDES
    from .options import RESCALE_MODES as RESCALE_MODES
    from .options import ClusterOptions as ClusterOptions
    from .options import CorpusPoints as CorpusPoints
    from .options import EngineOptions as EngineOptions
    from .options import ScoringOptions as ScoringOptions
    from .options import WindowSettings as WindowSettings
    from .scaling.cluster import ClusterRun as ClusterRun
    from .scaling.cluster import score_on_ray as score_on_ray
    from .scoring.engine import BARTScorer as BARTScorer
    from .scoring.prompts import PROMPT_SETS as PROMPT_SETS
    from .scoring.score_cache import ResumableScorer as ResumableScorer
    from .stats import compare_directions as compare_directions
    from .stats import compare_systems as compare_systems
    from .stats import paired_t_test as paired_t_test
    from .variants import DEFAULT_CHECKPOINT as DEFAULT_CHECKPOINT
    from .variants import PARA_WEIGHTS_ENV as PARA_WEIGHTS_ENV
    from .variants import VARIANTS as VARIANTS


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'bart_score' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)


def __dir__() -> list[str]:
    return __all__
