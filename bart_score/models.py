"""Checkpoints: variant names, Hub ids and local directories, and how they are found and loaded."""

import os

import huggingface_hub
import torch
from transformers import AutoConfig, AutoTokenizer, BartForConditionalGeneration

from .variants import PARA_WEIGHTS_ENV, VARIANTS


class CheckpointNotFoundError(OSError):
    """The checkpoint (or the paraphrase weights) is not on this machine and could not be downloaded."""


def resolve_checkpoint(name):
    """Maps a variant name, Hub id or local directory to (checkpoint, path of a state dict to load over it or None)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"checkpoint must be a variant name, a Hub id or a directory, got {name!r}")
    if name != "cnn-para":
        return VARIANTS.get(name, name), None
    path = os.environ.get(PARA_WEIGHTS_ENV)
    if not path:
        raise CheckpointNotFoundError(
            f"The 'cnn-para' variant needs the paraphrase-tuned BART weights (bart.pth from the BARTScore release, "
            f"https://github.com/neulab/BARTScore), which are not on the Hub. Download the file and set "
            f"{PARA_WEIGHTS_ENV}=/path/to/bart.pth"
        )
    if not os.path.isfile(path):
        raise CheckpointNotFoundError(f"{PARA_WEIGHTS_ENV} is set to {path!r}, but no file is there")
    return VARIANTS["cnn-para"], path


def load_checkpoint(checkpoint):
    """Tokenizer and model from a local directory, the Hugging Face cache, or the Hub (tried in that order)."""
    if os.path.isdir(checkpoint):
        return _load_pretrained(checkpoint)
    try:
        return _load_pretrained(checkpoint, local_files_only=True)
    except OSError:
        if huggingface_hub.constants.HF_HUB_OFFLINE:
            reason = "HF_HUB_OFFLINE is set"
        else:
            try:
                return _load_pretrained(checkpoint)
            except OSError as hub_error:
                reason = str(hub_error).splitlines()[0]
    raise CheckpointNotFoundError(
        f"Cannot load the BART checkpoint {checkpoint!r}: it is not a local directory, not in the Hugging Face cache "
        f"({huggingface_hub.constants.HF_HUB_CACHE}), and it could not be downloaded ({reason}). On a machine with "
        f"internet access run `hf download {checkpoint}` and copy the cache here, or pass the path of a directory "
        f"saved with save_pretrained() as the checkpoint."
    )


def _load_pretrained(checkpoint, **options):
    config = AutoConfig.from_pretrained(checkpoint, **options)
    if config.model_type != "bart":
        raise ValueError(
            f"{checkpoint!r} is a {config.model_type!r} model; BARTScore needs a BART checkpoint (model_type 'bart')"
        )
    missing = [name for name in ("pad_token_id", "decoder_start_token_id") if getattr(config, name, None) is None]
    if missing:
        raise ValueError(
            f"{checkpoint!r} has no {' or '.join(missing)} in its config; BARTScore's teacher forcing "
            f"needs both (facebook/bart-* use pad_token_id=1, decoder_start_token_id=2)"
        )
    tokenizer = AutoTokenizer.from_pretrained(checkpoint, **options)
    model = BartForConditionalGeneration.from_pretrained(checkpoint, config=config, dtype=torch.float32, **options)
    return tokenizer, model.eval()
