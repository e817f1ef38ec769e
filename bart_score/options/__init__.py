"""What one scoring call asks for, checked once: ``ScoringOptions``; the engine's settings: ``EngineOptions``; and a
Ray cluster's: ``ClusterOptions``.

The options are resolved once, where a request enters (keywords of a library call or of the metric's compute, the
command line's arguments, the Space's form), and the checked object travels down whole: the directions layer, the
engine, the corpus and dataset scorers, the meta-evaluation and the Space all take it as it is. Every check of an
option lives here; callers turn ``InputError`` into their own answer (the command line's exit status 2, the Space's
message). This package is a leaf: it imports no feature module (nothing but the error family, the words of messages,
the checks of inputs, bounded reading and the named configurations and prompt sets), so that any module may take the
options object whole.

Each option is declared once, as a field of its class given by ``option(...)``: its name, type and default, its
check, its one text, its command-line flag (``Flag``, whose kind the field's type gives) and the Space's field or
operator setting that sets it. The text is what the library's documentation says in keywords (the class's docstring
lists them) and the command line's --help in flags, each default written once. The front ends take everything from
this table: the command line's arguments and their help, the flag names its messages use and the options it builds
from them (bart_score.cli), the metric's load and compute options (bart_score.integrations.evaluate_metric) and its
keywords' description (bartscore.py), and the Space's per-model options, long-source settings and field marks
(space/). A class checks each field in declaration order, then the fields that go together.

Checks that need the inputs (which directions the given texts allow) are ``ScoringOptions.directions_for``; checks
that need the model (the baseline's key: model, token policy, prompt setting, max_length) are made by the directions
layer before any scoring (bart_score.baselines._lookup.baseline_for). ``EngineOptions``' checks are those that need no
model; the engine checks the rest (the device's presence, max_length against the model's positions, the settings a
model family takes) and keeps the values it resolves (the device, max_tokens and max_length it chose) in its own copy,
``scorer.options``.

The modules: _table (option(), Flag, OptionSpec, CheckedOptions, options_table), _vocabulary (the words options
take, as Literal types), _checks (the checks of single options), _windows (long_source="windows"'s settings), _chat
(a causal LM's template and the chat options), and one per options class: _scoring, _engine, _cluster."""

from ._chat import (
    CONDITION_PLACEHOLDER,
    DEFAULT_INSTRUCTIONS,
    DEFAULT_TEMPLATE,
    INSTRUCTION,
    SYSTEM,
    TEMPLATE,
    ChatSettings,
    chat_settings,
    instruction_list,
    template_sides,
)
from ._cluster import (
    BATCHES_PER_ACTOR,
    BATCHES_PER_ACTOR_TARGET,
    MAX_AUTO_BATCH_ROWS,
    MAX_CLUSTER_ACTORS,
    ClusterOptions,
)
from ._engine import (
    DEFAULT_CONCURRENCY,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RETRIES,
    ENGINE_OPTION_NAMES,
    MAX_CONCURRENCY,
    MAX_REQUEST_TIMEOUT,
    MAX_THREADS,
    EngineOptions,
)
from ._scoring import (
    DEFAULT_MAX_CHARS,
    DEFAULT_PAIRS,
    DEFAULT_SEED,
    OPTION_NAMES,
    CorpusPoints,
    LoadedBaseline,
    ScoringOptions,
    too_long_error,
)
from ._table import FILE, LONG_SOURCE_SETTING, MODEL_ENTRY_SETTING, CheckedOptions, Flag, OptionSpec, described_options
from ._vocabulary import (
    AGGREGATIONS,
    COUNT_SUFFIXES,
    DIRECTIONS,
    LONG_SOURCE_MODES,
    POINT_DIRECTIONS,
    PROMPT_SIDES,
    RESCALE_MODES,
    RESULT_SUFFIXES,
)
from ._windows import (
    BM25,
    DEFAULT_MAX_SENTENCES,
    DEFAULT_RETRIEVER,
    DEFAULT_WINDOW,
    DEFAULT_WINDOWS_K,
    LONGDOCFACTSCORE,
    RETRIEVER,
    Retriever,
    WindowSettings,
    check_retriever,
    check_window,
)

# The table of every option, in the order the command line's --help lists the flags of a section.
OPTION_CLASSES: tuple[type[CheckedOptions], ...] = (ScoringOptions, CorpusPoints, EngineOptions, ClusterOptions)

__all__ = [
    "AGGREGATIONS",
    "BATCHES_PER_ACTOR",
    "BATCHES_PER_ACTOR_TARGET",
    "BM25",
    "CONDITION_PLACEHOLDER",
    "COUNT_SUFFIXES",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_INSTRUCTIONS",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_SENTENCES",
    "DEFAULT_PAIRS",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_RETRIES",
    "DEFAULT_RETRIEVER",
    "DEFAULT_SEED",
    "DEFAULT_TEMPLATE",
    "DEFAULT_WINDOW",
    "DEFAULT_WINDOWS_K",
    "DIRECTIONS",
    "ENGINE_OPTION_NAMES",
    "FILE",
    "INSTRUCTION",
    "LONGDOCFACTSCORE",
    "LONG_SOURCE_MODES",
    "LONG_SOURCE_SETTING",
    "MAX_AUTO_BATCH_ROWS",
    "MAX_CLUSTER_ACTORS",
    "MAX_CONCURRENCY",
    "MAX_REQUEST_TIMEOUT",
    "MAX_THREADS",
    "MODEL_ENTRY_SETTING",
    "OPTION_CLASSES",
    "OPTION_NAMES",
    "POINT_DIRECTIONS",
    "PROMPT_SIDES",
    "RESCALE_MODES",
    "RESULT_SUFFIXES",
    "RETRIEVER",
    "SYSTEM",
    "TEMPLATE",
    "ChatSettings",
    "CheckedOptions",
    "ClusterOptions",
    "CorpusPoints",
    "EngineOptions",
    "Flag",
    "LoadedBaseline",
    "OptionSpec",
    "Retriever",
    "ScoringOptions",
    "WindowSettings",
    "chat_settings",
    "check_retriever",
    "check_window",
    "described_options",
    "instruction_list",
    "template_sides",
    "too_long_error",
]
