"""Model families and checkpoints: which families the engine drives, and how a checkpoint is found and loaded.

A checkpoint is a named configuration (bart_score.variants), a Hub id, or a local directory saved with
save_pretrained. It is looked for in that directory, then in the Hugging Face cache, then on the Hub; its config's
model_type picks the family. A new family is one class (see base.Family) added to SEQ2SEQ_FAMILIES, or any
decoder-only model that AutoModelForCausalLM loads."""

import hashlib
import json
import os

import huggingface_hub
import torch
from transformers import AutoConfig, AutoTokenizer

from ..errors import CheckpointLoadError, CheckpointNotFoundError, InputError
from ..variants import NAMED_CHECKPOINTS, PARA_WEIGHTS_ENV
from .base import IGNORED, Family, Target
from .causal import CausalFamily, GPTScoreFamily
from .chat import ChatFamily
from .seq2seq import BartFamily, MarianFamily, MBartFamily, PegasusFamily, T5Family

SEQ2SEQ_FAMILIES = (BartFamily, MBartFamily, T5Family, PegasusFamily, MarianFamily)
COMPATIBILITY = ("gptscore",)

__all__ = [
    "COMPATIBILITY",
    "IGNORED",
    "SEQ2SEQ_FAMILIES",
    "CheckpointNotFoundError",
    "Family",
    "Target",
    "checkpoint_identity",
    "find_checkpoint",
    "is_decoder_only",
    "load_family",
    "resolve_checkpoint",
    "weights_identity",
]


def resolve_checkpoint(name):
    """Maps a configuration name, Hub id or local directory to (checkpoint, path of a state dict to load over it or
    None)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"checkpoint must be a configuration name, a Hub id or a directory, got {name!r}")
    if name != "cnn-para":
        return NAMED_CHECKPOINTS.get(name, name), None
    path = os.environ.get(PARA_WEIGHTS_ENV)
    if not path:
        raise CheckpointNotFoundError(
            f"The 'cnn-para' variant needs the paraphrase-tuned BART weights (bart.pth from the BARTScore release, "
            f"https://github.com/neulab/BARTScore), which are not on the Hub. Download the file and set "
            f"{PARA_WEIGHTS_ENV}=/path/to/bart.pth"
        )
    if not os.path.isfile(path):
        raise CheckpointNotFoundError(f"{PARA_WEIGHTS_ENV} is set to {path!r}, but no file is there")
    return NAMED_CHECKPOINTS["cnn-para"], path


# Files whose bytes are a checkpoint's weights (sharded ones with their index).
_WEIGHTS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".index.json")


def checkpoint_identity(checkpoint):
    """What tells a checkpoint apart from every other, however it was named (baselines and score caches are keyed on
    it; the signature keeps the name as given).

    A local directory: "dir:<absolute real path>#<digest>", the digest covering config.json's bytes and each weights
    file's name, size and modification time (mtime_ns), so that a directory saved again (retrained, or a different
    model put at the same path) is a different checkpoint. A Hub id: "hub:<id>@<commit>" with the snapshot commit
    when the checkpoint is in the Hugging Face cache (where loading finds or downloads it), else "hub:<id>"."""
    if os.path.isdir(checkpoint):
        digest = hashlib.sha256()
        with open(os.path.join(checkpoint, "config.json"), "rb") as handle:
            digest.update(handle.read())
        for name in sorted(os.listdir(checkpoint)):
            if name.endswith(_WEIGHTS_SUFFIXES):
                digest.update(_file_stamp(os.path.join(checkpoint, name)))
        return f"dir:{os.path.realpath(checkpoint)}#{digest.hexdigest()[:16]}"
    commit = _cached_commit(checkpoint)
    return f"hub:{checkpoint}@{commit}" if commit else f"hub:{checkpoint}"


def weights_identity(path):
    """A state dict loaded over a checkpoint (cnn-para's bart.pth): "weights:<absolute real path>#<digest of its name,
    size and mtime_ns>"."""
    return f"weights:{os.path.realpath(path)}#{hashlib.sha256(_file_stamp(path)).hexdigest()[:16]}"


def _file_stamp(path):
    status = os.stat(path)
    return json.dumps([os.path.basename(path), status.st_size, status.st_mtime_ns]).encode("utf-8")


def _cached_commit(repo_id):
    """The commit of the cached snapshot a Hub id loads from (its config.json's snapshot folder), or None."""
    try:
        found = huggingface_hub.try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # not a valid repository id: there is no snapshot to name
        return None
    if not isinstance(found, str):
        return None
    snapshot = os.path.dirname(found)
    return os.path.basename(snapshot) if os.path.basename(os.path.dirname(snapshot)) == "snapshots" else None


def load_family(checkpoint, *, dtype, source_lang=None, target_lang=None, template=None, compatibility=None, chat=None):
    """The family object driving `checkpoint` (tokenizer and model loaded, in evaluation mode, in `dtype`); chat:
    checked ChatSettings for chat-format scoring (bart_score.models.chat), or None."""
    if compatibility is not None and compatibility not in COMPATIBILITY:
        raise ValueError(f"compatibility must be None or one of {COMPATIBILITY}, got {compatibility!r}")
    config, where = find_checkpoint(checkpoint)
    family = _family_class(checkpoint, config, template, compatibility, chat)
    if (source_lang is not None or target_lang is not None) and family is not MBartFamily:
        raise ValueError(
            f"source_lang and target_lang are for families with language codes (mBART); "
            f"{checkpoint!r} is a {config.model_type!r} model"
        )
    if template is not None and not issubclass(family, CausalFamily):
        raise ValueError(
            f"template is for causal language models; {checkpoint!r} is a {config.model_type!r} "
            f"sequence-to-sequence model (use prompt= to add text to its condition)"
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(checkpoint, **where)
        model = family.auto_class.from_pretrained(checkpoint, config=config, dtype=dtype, **where)
    except (MemoryError, torch.OutOfMemoryError):
        raise  # not the files' fault: the caller may try again, or elsewhere
    except Exception as error:  # truncated or foreign files fail in many libraries' own ways
        raise CheckpointLoadError(f"cannot load {checkpoint!r}: {_first_line(error)}") from None
    model.eval()
    if family is MBartFamily:
        return family(tokenizer, model, source_lang, target_lang)
    if family is ChatFamily:
        return family(tokenizer, model, chat)
    if issubclass(family, CausalFamily):
        return family(tokenizer, model, template)
    return family(tokenizer, model)


def _family_class(checkpoint, config, template, compatibility, chat=None):
    for family in SEQ2SEQ_FAMILIES:
        if config.model_type in family.model_types:
            if chat is not None:
                raise InputError(
                    f"chat scoring is for causal language models with a chat template; {checkpoint!r} is a "
                    f"{config.model_type!r} sequence-to-sequence model"
                )
            if compatibility is not None:
                raise ValueError(
                    f"compatibility={compatibility!r} is for causal language models; {checkpoint!r} is "
                    f"a {config.model_type!r} model, whose default policy already matches T5Score's "
                    f"and GPTScore's Flan-T5 scoring"
                )
            return family
    if is_decoder_only(config):
        if chat is not None:
            return ChatFamily
        return GPTScoreFamily if compatibility == "gptscore" else CausalFamily
    supported = ", ".join(sorted({t for family in SEQ2SEQ_FAMILIES for t in family.model_types}))
    raise ValueError(
        f"{checkpoint!r} is a {config.model_type!r} model, which cannot score text as generation: "
        f"supported are the sequence-to-sequence families ({supported}) and decoder-only causal "
        f"language models (GPT-2, OPT, Llama, Qwen, ...)"
    )


def is_decoder_only(config):
    """Whether a config is a decoder-only causal language model's. Encoder models such as BERT also have a causal-LM
    head class, but they were trained to fill masks, not to continue text: only models with no masked-LM head count."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    return (
        config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        and config.model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
        and not getattr(config, "is_encoder_decoder", False)
    )


def find_checkpoint(checkpoint):
    """(config, from_pretrained options): a local directory, else the Hugging Face cache, else the Hub."""
    if os.path.isdir(checkpoint):
        if not os.access(checkpoint, os.R_OK | os.X_OK):
            raise CheckpointLoadError(f"cannot read the checkpoint directory {checkpoint!r} (permission denied)")
        if not os.path.isfile(os.path.join(checkpoint, "config.json")):
            raise CheckpointNotFoundError(
                f"{checkpoint!r} is a directory without a config.json, so not a saved "
                f"checkpoint (save_pretrained() writes one)"
            )
        return _config(checkpoint, {}), {}
    try:
        return _config(checkpoint, {"local_files_only": True}), {"local_files_only": True}
    except OSError:
        if huggingface_hub.constants.HF_HUB_OFFLINE:
            reason = "HF_HUB_OFFLINE is set"
        else:
            try:
                return _config(checkpoint, {}), {}
            except OSError as hub_error:
                reason = str(hub_error).splitlines()[0]
    raise CheckpointNotFoundError(
        f"Cannot load the checkpoint {checkpoint!r}: it is not a local directory, not in the Hugging Face cache "
        f"({huggingface_hub.constants.HF_HUB_CACHE}), and it could not be downloaded ({reason}). On a machine with "
        f"internet access run `hf download {checkpoint}` and copy the cache here, or pass the path of a directory "
        f"saved with save_pretrained() as the checkpoint."
    )


def _config(checkpoint, where):
    try:
        return AutoConfig.from_pretrained(checkpoint, **where)
    except ValueError as error:  # a config.json that transformers cannot read
        raise CheckpointLoadError(f"cannot read the config of {checkpoint!r}: {_first_line(error)}") from None
    except OSError as error:
        if os.path.isdir(checkpoint):  # there, but unreadable or not JSON
            raise CheckpointLoadError(f"cannot read the config of {checkpoint!r}: {_first_line(error)}") from None
        raise


def _first_line(error):
    return (str(error).splitlines() or [type(error).__name__])[0]
