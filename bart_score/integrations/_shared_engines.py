"""Engines shared within a process: ``shared_engine(options)`` gives the one engine (BARTScorer) loaded for these
settings while anything holds it, so that the metric's instances and the reward functions of a training loop that
ask for the same checkpoint and settings hold one copy of the model, not one each.

The settings are the EngineOptions as given, the checkpoint's identity as it is now (models.loading's
checkpoint_identity, with weights loaded over it) and a chat_template file's text as it is now: a folder saved again
since its engine was loaded (even in place, with its sizes and modification times set back: the identity digests the
weights' bytes, read again once a file's status changes), a template file edited since, or an engine whose holder
loaded other weights into it, is loaded anew. A served model's identity is what its server reports, which only asking
it tells: each new holder of one loads it again (a tokenizer and a few requests, no weights), and is given the shared
engine when the identity and chat template are those of its model, else the new one.

A SharedEngine holds the engine with the lock its holders score under: a fast tokenizer is set for each call (its
truncation length), which a call in another thread would see or trip over, so holders in different threads take
turns, as the calls of one holder always did. Nothing else holds an engine here: it is freed when its last holder
is."""

from __future__ import annotations

import json
import threading
import weakref
from typing import Any

from ..corpora._reading import read_bounded
from ..models.checkpoints import locate_checkpoint, weights_identity
from ..models.loading import resolve_checkpoint
from ..models.served.scorer import ServedScorer
from ..options import EngineOptions
from ..scoring.engine import BARTScorer


class SharedEngine:
    """An engine and the lock that its holders score under (see the module's text)."""

    def __init__(self, scorer: BARTScorer) -> None:
        self.scorer = scorer
        self.lock = threading.RLock()


# The engines that something holds, by their settings; an entry goes when its SharedEngine is freed.
_SHARED: weakref.WeakValueDictionary[str, SharedEngine] = weakref.WeakValueDictionary()
# Taken while an engine is looked up or loaded, so that two threads asking for one engine load it once.
_LOADING = threading.Lock()


def shared_engine(options: EngineOptions) -> SharedEngine:
    """The engine loaded for `options` that something holds, if its checkpoint is still the one it loaded; else a
    new one, loaded now (raising what BARTScorer(options) raises)."""
    key = json.dumps([(name, getattr(options, name)) for name in options.TABLE], sort_keys=True, default=_named)
    with _LOADING:
        shared = _SHARED.get(key)
        if shared is not None and _still_current(shared.scorer, options):
            return shared
        scorer = BARTScorer(options)
        if shared is not None and isinstance(shared.scorer, ServedScorer) and _same_model(scorer, shared.scorer):
            return shared
        shared = SharedEngine(scorer)
        _SHARED[key] = shared
        return shared


def _still_current(scorer: BARTScorer, options: EngineOptions) -> bool:
    """Whether an engine loaded now for `options` would be `scorer`'s model, told from the files: the same identity
    (BARTScorer's model_identity) and, with a chat_template file, the template its tokenizer was given
    (models.loading). False for a served model, which shared_engine loads again to ask its server."""
    if isinstance(scorer, ServedScorer):
        return False
    checkpoint, para_weights = resolve_checkpoint(options.checkpoint)
    identity = locate_checkpoint(checkpoint).identity()
    if para_weights is not None:
        identity = f"{identity}+{weights_identity(para_weights)}"
    if identity != scorer.model_identity:
        return False
    return options.chat_template is None or (
        read_bounded(options.chat_template).decode("utf-8", "replace") == scorer.tokenizer.chat_template
    )


def _same_model(loaded: BARTScorer, held: BARTScorer) -> bool:
    """Whether the engine just loaded has the held one's model: its identity and its tokenizer's chat template."""
    same_template = loaded.tokenizer.chat_template == held.tokenizer.chat_template
    return loaded.model_identity == held.model_identity and same_template


def _named(value: Any) -> str:
    """A setting that JSON has no form for (a torch.device), by its name."""
    return str(value)
