"""The menu's models as the page describes them, found without loading any weights: the kind of model each is (so
that labels say "BART" only for BART) and whether a saved baseline was made with it (so that "the saved baseline"
is offered only where one exists). Nothing here imports Gradio."""

from __future__ import annotations

import os

import huggingface_hub

import bart_score
from bart_score.baselines import files as baseline_files
from bart_score.corpora._reading import read_json
from bart_score.errors import InputError
from bart_score.models.checkpoints import weights_identity
from bart_score.models.loading import checkpoint_identity
from bart_score.models.served._transport import names_a_server

# Families by their config's model_type, as the page names them; any other model is "model".
FAMILY_NAMES = {"bart": "BART", "mbart": "mBART", "t5": "T5", "mt5": "mT5", "pegasus": "Pegasus", "marian": "Marian"}
MOST_BASELINE_FILES_READ = 500  # a folder with more is not searched further (its first files by name are)


def model_kind(checkpoint: str) -> str:
    """ "BART", "T5", ... for a sequence-to-sequence family the engine knows, "causal language model" for a decoder
    model (a served model is one), "model" when its configuration cannot be read here."""
    if names_a_server(checkpoint):
        return "causal language model"
    config = _config(checkpoint)
    if config is None:
        return "model"
    model_type = str(config.get("model_type", ""))
    if model_type in FAMILY_NAMES:
        return FAMILY_NAMES[model_type]
    if config.get("is_encoder_decoder"):
        return "model"
    return "causal language model"


def _config(checkpoint: str) -> dict | None:
    """The checkpoint's config.json: from its folder, or the Hugging Face cache; None when neither has it."""
    try:
        location, _ = bart_score.resolve_checkpoint(checkpoint)
    except OSError:  # cnn-para without its weights file
        return None
    path = os.path.join(location, "config.json") if os.path.isdir(location) else None
    if path is None and not os.path.isabs(location):
        try:
            cached = huggingface_hub.try_to_load_from_cache(location, "config.json")
        except Exception:  # not a valid repository id
            cached = None
        path = cached if isinstance(cached, str) else None
    if path is None:
        return None
    try:
        config = read_json(path)
    except InputError:  # unreadable, not JSON, too deep or too large: no menu entry from it
        return None
    return config if isinstance(config, dict) else None


def has_saved_baseline(checkpoint: str) -> bool:
    """Whether the baseline folder holds a baseline file made with this model (under any prompt or length setting;
    scoring checks the settings)."""
    try:
        location, weights = bart_score.resolve_checkpoint(checkpoint)
        identity = checkpoint_identity(location)
    except OSError:
        return False
    if weights:
        identity += f"+{weights_identity(weights)}"
    folder = baseline_files.default_baseline_folder()
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(".json"))
    except OSError:
        return False
    for name in names[:MOST_BASELINE_FILES_READ]:
        try:
            document = read_json(os.path.join(folder, name), limit=baseline_files.MAX_BASELINE_BYTES)
        except InputError:
            continue
        settings = document.get("settings") if isinstance(document, dict) else None
        if isinstance(settings, dict) and settings.get("model") == identity:
            return True
    return False
