"""The operator's settings, read from the environment when the app is built (app.py's docstring lists them), and
the menu's models: checked when the app starts, loaded on first use and kept, one engine per model name; a served
model's server, which may start after the app, is asked again on each request until it answers."""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field

import bart_score
from bart_score.errors import BARTScoreError, InputError
from bart_score.inputs import ascii_integer, device_name
from bart_score.messages import shown
from bart_score.models.served._transport import names_a_server
from bart_score.options import LONG_SOURCE_SETTING, MODEL_ENTRY_SETTING, EngineOptions, ScoringOptions

from .clients import TRUSTED_PROXIES_SETTING, Network, trusted_proxies
from .form import FieldError
from .guards import load_failure, model_problems, not_available, remembered_failure, served_failure

DEFAULT_MAX_CHARS = 5000
DEFAULT_MAX_ROWS = 1000
DEFAULT_MAX_PAIRS = 20_000
# The options the operator's settings may give, from the table of options (bart_score.options): per model, the
# BARTScorer options of a BARTSCORE_APP_MODELS entry (chat=true scores a causal LM in its chat format, with
# instruction= and system=); for the Batch tab, the long-source options of BARTSCORE_APP_LONG_SOURCE after its mode.
MODEL_OPTIONS = {name: spec for name, spec in EngineOptions.TABLE.items() if spec.setting == MODEL_ENTRY_SETTING}
# A served model's requests in the Space, unless its menu entry says otherwise: the scoring slot that every visitor
# shares is held while a request waits on its server, so a server that hangs holds it for at most about a minute (two
# attempts of 30 s) rather than the library's 4 of 120 s.
SERVED_MODEL_BOUNDS = {"request_timeout": 30.0, "request_retries": 1}
LONG_SOURCE_OPTIONS = {
    name: spec
    for name, spec in ScoringOptions.TABLE.items()
    if spec.setting == LONG_SOURCE_SETTING and name != "long_source"
}


@dataclass(frozen=True)
class Settings:
    models: dict  # the allowlist: name shown in the browser -> BARTScorer arguments (checkpoint and options)
    default_model: str
    device: str | None
    max_chars: int
    max_rows: int
    max_pairs: int
    long_source: dict = field(default_factory=dict)  # score_directions' long-source options for the Batch tab
    trusted_proxies: tuple[Network, ...] = ()  # the proxies whose X-Forwarded-For names the client (clients.py)


def settings_from_env(environ=os.environ):
    """The operator's settings; a malformed value stops the app at start, where the operator sees it."""
    models = {"vanilla": {"checkpoint": "vanilla"}, "cnn": {"checkpoint": "cnn"}}
    para_weights = environ.get(bart_score.PARA_WEIGHTS_ENV, "")
    if para_weights and os.path.isfile(para_weights):
        models["cnn-para"] = {"checkpoint": "cnn-para"}
    for entry in filter(None, (part.strip() for part in environ.get("BARTSCORE_APP_MODELS", "").split(","))):
        name, options = _model_entry(entry)
        models[name] = options
    default_model = environ.get("BARTSCORE_APP_DEFAULT_MODEL", "cnn")
    if default_model not in models:
        raise InputError(
            f"BARTSCORE_APP_DEFAULT_MODEL is {shown(default_model)}, which is not one of the models {list(models)}"
        )
    return Settings(
        models=models,
        default_model=default_model,
        device=_device(environ.get("BARTSCORE_APP_DEVICE") or None),
        max_chars=_positive_int(environ, "BARTSCORE_APP_MAX_CHARS", DEFAULT_MAX_CHARS),
        max_rows=_positive_int(environ, "BARTSCORE_APP_MAX_ROWS", DEFAULT_MAX_ROWS),
        max_pairs=_positive_int(environ, "BARTSCORE_APP_MAX_PAIRS", DEFAULT_MAX_PAIRS),
        long_source=_long_source(environ.get("BARTSCORE_APP_LONG_SOURCE", "")),
        trusted_proxies=trusted_proxies(environ.get(TRUSTED_PROXIES_SETTING, "")),
    )


def _long_source(value):
    """BARTSCORE_APP_LONG_SOURCE: "windows", optionally with ";windows_k=K", ";window=RULE", ";retriever=NAME",
    ";max_sentences=N" (LONG_SOURCE_OPTIONS; checked here, so that a mistake stops the app at start)."""
    if not value.strip():
        return {}
    mode, *parts = (part.strip() for part in value.split(";"))
    options = {"long_source": mode}
    for part in parts:
        key, separator, setting = (piece.strip() for piece in part.partition("="))
        if not separator or key not in LONG_SOURCE_OPTIONS:
            forms = ", ".join(f"{name}={spec.flags[0].metavar}" for name, spec in LONG_SOURCE_OPTIONS.items())
            raise InputError(f"BARTSCORE_APP_LONG_SOURCE {shown(value)}: {shown(part)} is not one of {forms}")
        # a number read from its text as the command line reads it; ScoringOptions checks every value
        options[key] = LONG_SOURCE_OPTIONS[key].flags[0].number(setting)
    if mode not in bart_score.LONG_SOURCE_MODES:
        raise InputError(
            f"BARTSCORE_APP_LONG_SOURCE must start with one of {bart_score.LONG_SOURCE_MODES}, got {mode!r}"
        )
    try:  # the library's check, with its defaults for the keys not given
        bart_score.ScoringOptions(**options)
    except ValueError as error:
        raise InputError(f"BARTSCORE_APP_LONG_SOURCE {shown(value)}: {error}") from None
    return options


def _model_entry(entry):
    """'name=checkpoint' with optional ';option=value' parts (MODEL_OPTIONS; an option the command line gives as a
    switch, chat, takes true or false); checked here as EngineOptions, so that a menu entry whose options do not go
    together stops the app at start."""
    head, *parts = entry.split(";")
    name, separator, checkpoint = (part.strip() for part in head.partition("="))
    if not separator or not name or not checkpoint:
        raise InputError(
            f"BARTSCORE_APP_MODELS entry {shown(entry)} is not of the form name=checkpoint[;option=value...]"
        )
    options = {"checkpoint": checkpoint}
    for part in parts:
        key, separator, value = part.partition("=")
        key = key.strip()
        if not separator or key not in MODEL_OPTIONS:
            raise InputError(
                f"BARTSCORE_APP_MODELS entry {shown(entry)}: {shown(part)} is not one of option=value with the "
                f"options {', '.join(MODEL_OPTIONS)}"
            )
        options[key] = value
    for key in [key for key in options if key in MODEL_OPTIONS and MODEL_OPTIONS[key].flags[0].kind == "switch"]:
        flag = options[key].strip().lower()
        if flag not in ("true", "false"):
            raise InputError(
                f"BARTSCORE_APP_MODELS entry {shown(entry)}: {key} must be true or false, got {shown(flag)}"
            )
        options[key] = flag == "true"
    for key in [key for key in options if key in MODEL_OPTIONS]:
        # a number as the command line reads it (threads, request_timeout); the option's check says the rest
        options[key] = MODEL_OPTIONS[key].flags[0].number(options[key])
    if names_a_server(checkpoint):  # a visitor's request holds the scoring slot while its server answers
        for key, value in SERVED_MODEL_BOUNDS.items():
            options.setdefault(key, value)
    try:  # the engine's checks that need no model (the chat options' among them), at start
        bart_score.EngineOptions(**options)
    except ValueError as error:
        raise InputError(f"BARTSCORE_APP_MODELS entry {shown(entry)}: {error}") from None
    return name, options


def _positive_int(environ, name, default):
    value = environ.get(name, "")
    if not value:
        return default
    number = ascii_integer(value)
    if number is None or number < 1:
        raise InputError(f"{name} must be a positive integer, got {shown(value)}")
    return number


def _device(value):
    """BARTSCORE_APP_DEVICE, checked at start (the engine would refuse it only when a model loads)."""
    if value is not None:
        try:
            device_name(value)
        except ValueError as error:
            raise InputError(f"BARTSCORE_APP_DEVICE: {error}") from None
    return value


_scorers = {}  # (BARTScorer options, device) -> the loaded engine
_unavailable = {}  # (BARTScorer options, device) -> the browser's message, for models that cannot be loaded here
_scorers_lock = threading.Lock()


def _scorer_key(settings, model):
    return tuple(sorted(settings.models[model].items())), settings.device


def check_models(settings):
    """Marks the menu's models that cannot be loaded on this server (found at start, without loading weights), so
    that choosing one fails at once; returns their names."""
    problems = model_problems({name: options["checkpoint"] for name, options in settings.models.items()})
    for name in problems:
        _unavailable[_scorer_key(settings, name)] = not_available(name)
    return set(problems)


def menu_scorer(settings, model):
    """The engine for a model name on the allowlist, loaded on first use and kept (loading costs more than scoring).
    A model that cannot be loaded is reported by its menu name, never by a server path."""
    if not isinstance(model, str) or model not in settings.models:
        raise FieldError(f"Unknown model {model!r}; choose one of {', '.join(settings.models)}", "model")
    options = settings.models[model]
    key = _scorer_key(settings, model)
    with _scorers_lock:
        if key not in _scorers:
            if key in _unavailable:
                raise FieldError(_unavailable[key], "model")
            try:
                _scorers[key] = bart_score.BARTScorer(bart_score.EngineOptions(device=settings.device, **options))
            except Exception as error:
                if names_a_server(options["checkpoint"]):  # it may answer later
                    raise FieldError(served_failure(model, options["checkpoint"], error), "model") from None
                message = load_failure(model, options["checkpoint"], error)
                if remembered_failure(error):
                    _unavailable[key] = message
                raise FieldError(message, "model") from None
        return _scorers[key]


@contextlib.contextmanager
def served_failures(settings, model):
    """Scoring with a menu model: a served model's failure (its server down, or answering wrongly: any of the
    library's errors but a mistake of the input) is told by the menu name (guards.served_failure), never with the
    server's URL, which the library's messages give."""
    checkpoint = settings.models[model]["checkpoint"]
    try:
        yield
    except BARTScoreError as error:
        if isinstance(error, InputError) or not names_a_server(checkpoint):
            raise
        raise FieldError(served_failure(model, checkpoint, error), "model") from None
