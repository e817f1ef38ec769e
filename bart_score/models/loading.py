"""Loading a checkpoint: which family drives it, and how its files are found, checked and loaded.

A checkpoint is a named configuration (bart_score.variants), a GGUF file, a local directory saved with save_pretrained,
or a Hub id (see checkpoints.locate_checkpoint). A directory or GGUF file is read where it is; a Hub id from the
Hugging Face cache, else the Hub. The config's model_type (a GGUF file's metadata) picks the family: the one
registered for it (base.FAMILIES, which a family's class joins by naming its model_types), else a causal LM's for any
decoder-only model that AutoModelForCausalLM loads. A new family is one class (see base.Family) in a module imported
here. A checkpoint may also name an inference server a causal LM runs on (served_family, for
served.scorer.ServedScorer): its family is the one the same model would have here, built on the served model's
tokenizer, so that one token policy serves both. No code from a checkpoint is ever run: every from_pretrained call
passes trust_remote_code=False, and a checkpoint that would need its own code is refused before anything is loaded (so
transformers never asks on stdin whether to run it)."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch
import transformers
from huggingface_hub import constants as hub_constants
from transformers import AutoConfig, AutoTokenizer, GgufConfig, PretrainedConfig, PreTrainedModel
from transformers.models.auto.tokenization_auto import get_tokenizer_config

from ..corpora._reading import read_bounded
from ..errors import (
    CheckpointLoadError,
    CheckpointNotFoundError,
    InputError,
    InputTypeError,
    UnsupportedModelError,
    first_line,
)
from ..messages import Mention
from ..options import ChatSettings, EngineOptions
from ..variants import NAMED_CHECKPOINTS, PARA_WEIGHTS_ENV
from . import seq2seq  # noqa: F401  # the sequence-to-sequence families, which register themselves (base.FAMILIES)
from .base import FAMILIES, Family, ModelLimits
from .causal import CausalFamily, GPTScoreFamily
from .chat import WITHOUT_CHAT, ChatFamily, no_chat_template
from .checkpoints import (
    GGUF_SIDE_TEMPLATES,
    Checkpoint,
    check_checkpoint_files,
    gguf_alone,
    has_chat_template,
    hub_unreachable,
    locate_checkpoint,
    refuse_custom_code,
    side_chat_template,
    stored_tensor_elements,
)
from .gguf import CHAT_TEMPLATE_KEY, read_gguf_header, require_gguf_extra
from .served._server import ServedModel, connect_server, tokenizer_error, tokenizer_origin
from .served._transport import SERVED_OPTIONS

# Fewer ordinary vocabulary entries than this is a tokenizer without its vocabulary: the smallest real ones (bytes,
# characters) have hundreds, and one built from a tokenizer config alone has none or one.
MIN_VOCABULARY = 16
# The config attributes that count a model's layers (stacks of an encoder-decoder apart), across transformers' families.
_LAYER_COUNTS = ("num_hidden_layers", "num_layers", "encoder_layers", "decoder_layers", "num_decoder_layers")
# The most layers one stack may have: 8 times the deepest real ones (Llama 3.1 405B: 126). Building the config's model
# on the meta device takes time for each layer, whatever the weights hold: weights named in a layer's place, one value
# each (model.layers.0.pad ... model.layers.19999.pad), let a config of 20,000 layers through the count of layers to a
# build of 100 s and 1.1 GB before the refusal.
MAX_LAYERS = 1_024
# The names of a stack of layers in weights' names, which the layer's number follows: transformers' models
# (model.layers.11.mlp, model.decoder.layers.0, encoder.block.3, transformer.h.5, transformer.blocks.2; XLM keeps a
# layer's parts in stacks of their own, transformer.attentions.3 and transformer.ffns.3) and GGUF files
# (blk.11.ffn_up). A number elsewhere (an expert's, a sub-layer's, any name's) is not a layer's.
_LAYER_STACKS = frozenset({"layers", "layer", "h", "block", "blocks", "blk", "attentions", "ffns"})


def resolve_checkpoint(name: str) -> tuple[str, str | None]:
    """Maps a configuration name, Hub id, local directory or GGUF file to (checkpoint, path of a state dict to load
    over it or None)."""
    if not isinstance(name, str) or not name:
        raise InputTypeError(
            Mention("checkpoint"),
            f" must be a configuration name, a Hub id, a directory or a GGUF file, got {name!r}",
            value=name,
        )
    if name != "cnn-para":
        return NAMED_CHECKPOINTS.get(name, name), None
    path = os.environ.get(PARA_WEIGHTS_ENV)
    if not path:
        raise CheckpointNotFoundError(
            "The 'cnn-para' variant needs the paraphrase-tuned BART weights (bart.pth from the BARTScore release, "
            "https://github.com/neulab/BARTScore), which are not on the Hub",
            remedy=f"download the file and set {PARA_WEIGHTS_ENV}=/path/to/bart.pth",
        )
    if not os.path.isfile(path):
        raise CheckpointNotFoundError(f"{PARA_WEIGHTS_ENV} is set to {path!r}, but no file is there")
    return NAMED_CHECKPOINTS["cnn-para"], path


def checkpoint_identity(checkpoint: str) -> str:
    """The identity of the checkpoint `checkpoint` names (see checkpoints.Checkpoint.identity)."""
    return locate_checkpoint(checkpoint).identity()


def load_family(checkpoint: Checkpoint, options: EngineOptions) -> Family:
    """The family object driving `checkpoint` (see locate_checkpoint) under the engine's checked settings `options`:
    tokenizer and model loaded, in evaluation mode, in options.dtype (a GGUF file's tensors dequantized to it), for
    chat-format scoring when options.chat_settings says so (bart_score.models.chat); a served model's options refused
    (a checkpoint that names a server is served_family's). What is checked here is what needs the checkpoint's
    config; EngineOptions checked the rest."""
    given = [name for name in SERVED_OPTIONS if getattr(options, name) is not None]
    if given:
        raise InputError(
            Mention(given[0]),
            f" is for a checkpoint that names an inference server (such as vllm+http://127.0.0.1:8000/v1); "
            f"{checkpoint.name!r} is not one",
        )
    dtype = getattr(torch, options.dtype)
    source_lang, target_lang = options.source_lang, options.target_lang
    template, compatibility, chat = options.template, options.compatibility, options.chat_settings
    needs_template = chat is not None and options.chat_template is None
    if needs_template and checkpoint.gguf_file:  # before its metadata is read in full (seconds for a large vocabulary)
        check_chat_template_is_there(checkpoint)
    config, where = _find(checkpoint)
    family = _family_class(checkpoint.name, config, template, compatibility, chat)
    if needs_template and not checkpoint.gguf_file:  # after the family check, which names a sequence-to-sequence model
        check_chat_template_is_there(checkpoint)
    _refuse_language_codes(family, checkpoint.name, config, source_lang, target_lang)
    if template is not None and not issubclass(family, CausalFamily):
        raise _only_for_causal_models(
            Mention("template", template),
            checkpoint.name,
            remedy=["use ", Mention("prompt"), " to add text to its condition"],
        )
    check_config_fits_weights(checkpoint, config, family.auto_class)
    tokenizer, model = _load_weights(checkpoint, config, where, family.auto_class, dtype)
    if family is ChatFamily:
        origin = _chat_template_origin(tokenizer, options.chat_template, checkpoint)
        return ChatFamily(tokenizer, model, options, origin)
    return family(tokenizer, model, options)


def served_family(checkpoint: Checkpoint, options: EngineOptions) -> tuple[Family, ServedModel]:
    """The token policy of a model on a server, and the served model: the server asked what it serves, the tokenizer
    served_tokenizer names (or the Hub id the server reports: served._server.tokenizer_origin), and the family the same
    model would have here, built on that tokenizer with no model here (ModelLimits: the server's context and
    vocabulary). A sequence-to-sequence model cannot be served so: a server gives the log-probabilities of a
    decoder-only model's text."""
    assert checkpoint.server is not None  # a checkpoint that names a server: ServedScorer's
    template, compatibility, chat = options.template, options.compatibility, options.chat_settings
    server = connect_server(checkpoint.server, options)
    source, said = tokenizer_origin(server, options)  # never a path the server reports
    try:
        located = locate_checkpoint(source)
        config, where = _find(located)
    except CheckpointNotFoundError as error:
        raise tokenizer_error(
            CheckpointNotFoundError,
            f"a served model is tokenized here, as its server tokenizes it, and its tokenizer cannot be had from "
            f"{source!r} ({said}): {error.problem()}",
        ) from None
    family = _family_class(source, config, template, compatibility, chat)
    if not issubclass(family, CausalFamily):
        raise UnsupportedModelError(
            f"{server.label} is {source!r}, a {config.model_type!r} sequence-to-sequence model: a server gives the "
            "log-probabilities of decoder-only models' texts alone",
            remedy="score it with the model loaded here (its Hub id, folder or GGUF file as the checkpoint)",
        )
    if chat is not None and options.chat_template is None:
        check_chat_template_is_there(located)
    _refuse_language_codes(family, source, config, options.source_lang, options.target_lang)
    with gguf_alone(located) as folder:
        tokenizer = load_tokenizer(repr(source), folder, where)
    model = ServedModel(server, tokenizer, options, located.identity())
    if family is ChatFamily:
        origin = _chat_template_origin(tokenizer, options.chat_template, located)
        policy: Family = ChatFamily(tokenizer, None, options, origin)  # type: ignore[arg-type]  # no model here
    else:
        policy = family(tokenizer, None, options)
    policy.limits = ModelLimits(server.report.positions, model.vocabulary)
    return policy, model


def _refuse_language_codes(
    family: type[Family], name: str, config: PretrainedConfig, source_lang: str | None, target_lang: str | None
) -> None:
    if (source_lang is not None or target_lang is not None) and not family.reads_language_codes:
        given = Mention("source_lang", source_lang) if source_lang is not None else Mention("target_lang", target_lang)
        raise InputError(
            given, f" is for families with language codes (mBART); {name!r} is a {config.model_type!r} model"
        )


def _only_for_causal_models(named: Mention, name: str, **fields: Any) -> InputError:
    """An option of causal language models given for the sequence-to-sequence model `name`."""
    return InputError(named, f" is for causal language models, and {name!r} is a sequence-to-sequence model", **fields)


def _chat_template_origin(tokenizer: Any, chat_template: str | None, checkpoint: Checkpoint) -> str:
    """How errors name the chat template scored in, which is put on the tokenizer here: the file chat_template names
    (EngineOptions checked it readable; what is read here is what is scored), else the checkpoint's own, or the one
    beside its GGUF file (side_chat_template)."""
    if chat_template is not None:
        tokenizer.chat_template = read_bounded(chat_template).decode("utf-8")
        return f"the chat template {chat_template!r} (chat_template)"
    side = side_chat_template(checkpoint)
    if side is not None:
        tokenizer.chat_template = side.template
    return _template_origin(checkpoint)


def load_plain(checkpoint: Checkpoint, dtype: torch.dtype) -> tuple[Any, PreTrainedModel]:
    """The tokenizer and model of a checkpoint of a family the engine drives, loaded and checked as load_family loads
    them, without a token policy (for converting a GGUF file: bart_score.models.conversion)."""
    config, where = _find(checkpoint)
    family = _family_class(checkpoint.name, config, None, None)
    check_config_fits_weights(checkpoint, config, family.auto_class)
    return _load_weights(checkpoint, config, where, family.auto_class, dtype)


def _load_weights(
    checkpoint: Checkpoint, config: PretrainedConfig, where: dict[str, Any], auto_class: Any, dtype: torch.dtype
) -> tuple[Any, PreTrainedModel]:
    """The checkpoint's tokenizer (load_tokenizer) and its model in evaluation mode, in `dtype` (a GGUF file's
    tensors dequantized to it, the file read alone: gguf_alone), refused when its files lack some of its weights."""
    weights = {}
    if checkpoint.gguf_file:
        weights = {"quantization_config": GgufConfig(dequantize=True)}
        _gguf_bar_follows_the_switch()
    with gguf_alone(checkpoint) as source:
        tokenizer = load_tokenizer(repr(checkpoint.name), source, where)
        with loading(repr(checkpoint.name)):
            model, loading_info = auto_class.from_pretrained(
                source,
                config=config,
                dtype=dtype,
                output_loading_info=True,
                trust_remote_code=False,
                **where,
                **weights,
            )
    missing = sorted(loading_info["missing_keys"])
    if missing:  # transformers would score with those weights left at random values
        raise CheckpointLoadError(
            f"{checkpoint.name!r} lacks {len(missing)} of the weights of its {type(model).__name__} (such as "
            f"{missing[0]}): its files are incomplete, or hold another architecture (or a part of one, such as an "
            f"encoder alone)"
        )
    model.eval()
    return tokenizer, model


def check_chat_template_is_there(checkpoint: Checkpoint) -> None:
    """Refuses chat scoring (UnsupportedModelError about the option chat) of a checkpoint whose files give it no chat
    template, told before anything is loaded (checkpoints.has_chat_template: a GGUF file's header and the files
    beside it, a folder's template files and tokenizer config); a Hub id that is not in the cache is told once its
    tokenizer loads."""
    if has_chat_template(checkpoint) is not False:
        return
    if checkpoint.gguf_file:
        template_file, config_file = GGUF_SIDE_TEMPLATES
        looked = (
            f'no {CHAT_TEMPLATE_KEY} in its GGUF metadata, and no {template_file} or "chat_template" in a '
            f"{config_file} beside it"
        )
    else:
        looked = 'no chat_template.jinja, chat_template.json or "chat_template" in its tokenizer_config.json'
    raise no_chat_template(
        checkpoint.named, looked, remedy=["give it one with ", Mention("chat_template"), ", or ", *WITHOUT_CHAT]
    )


def check_config_fits_weights(checkpoint: Checkpoint, config: PretrainedConfig, auto_class: Any) -> None:
    """Refuses (CheckpointLoadError) a config that asks for more than the checkpoint's weights hold, before the model is
    built: building takes the memory and time of the model the config describes, whatever the files hold (a config
    of 20,000 layers over weights for 2 took 93 s and 2 GB to be refused as lacking weights). First each layer count
    of the config against the layers the weights' names number where a layer's number stands (model.layers.11,
    blk.11: see _layer_numbers) and against MAX_LAYERS, then the parameters of the config's model, built on the meta
    device (no memory), against the values the weights hold (their files' headers). A Hub id that is not in the
    Hugging Face cache is not checked: its files are not here yet."""
    stored = stored_tensor_elements(checkpoint)
    if stored is None:
        return
    numbers = _layer_numbers(stored)
    for attribute in _LAYER_COUNTS:
        declared = getattr(config, attribute, None)
        if isinstance(declared, int) and declared > len(numbers):
            raise CheckpointLoadError(
                f"{checkpoint.name!r} is damaged: its config's {attribute} is {declared:,}, but its weights hold "
                f"{len(numbers):,} numbered layers"
            )
        if isinstance(declared, int) and declared > MAX_LAYERS:
            raise CheckpointLoadError(
                f"{checkpoint.name!r} is refused: its config's {attribute} is {declared:,}, over the limit of "
                f"{MAX_LAYERS:,} layers"
            )
    with loading(repr(checkpoint.name)), torch.device("meta"):
        model = auto_class.from_config(config, trust_remote_code=False)
    # Weights the model makes itself when they are missing (Marian's sinusoidal positions) are not in its files.
    made = [re.compile(pattern) for pattern in getattr(model, "_keys_to_ignore_on_load_missing", None) or ()]
    needed = sum(
        parameter.numel()
        for name, parameter in model.named_parameters()
        if not any(pattern.search(name) for pattern in made)
    )
    held = sum(stored.values())
    if needed > held:
        raise CheckpointLoadError(
            f"{checkpoint.name!r} is damaged: the {type(model).__name__} its config describes has {needed:,} "
            f"parameters, but its weights hold {held:,} values: its files are incomplete, or its config's sizes "
            f"(hidden size, vocabulary, layers) are not those of its weights"
        )


def _layer_numbers(names: Iterable[str]) -> set[int]:
    """The layer numbers that weights' names hold where a layer's number stands: right after a stack's name
    (_LAYER_STACKS), in at most 9 ASCII digits."""
    numbers = set()
    for name in names:
        parts = name.split(".")
        for stack, number in itertools.pairwise(parts):
            if stack in _LAYER_STACKS and len(number) <= 9 and number.isascii() and number.isdigit():
                numbers.add(int(number))
    return numbers


def _gguf_bar_follows_the_switch() -> None:
    """transformers draws its bar over a GGUF file's tensors ("Converting and de-quantizing GGUF tensors") with tqdm
    itself, not with its own tqdm wrapper, so that disable_progress_bar() (the command line's -q) left it drawn: its
    GGUF module is given the wrapper, which draws the same bar unless the switch is off."""
    from transformers import modeling_gguf_pytorch_utils

    modeling_gguf_pytorch_utils.tqdm = transformers.utils.logging.tqdm


@contextlib.contextmanager
def loading(what: str) -> Iterator[None]:
    """Failures of transformers' loading as one CheckpointLoadError naming `what`."""
    try:
        yield
    except (MemoryError, torch.OutOfMemoryError):
        raise  # not the files' fault: the caller may try again, or elsewhere
    except Exception as error:  # truncated or foreign files fail in many libraries' own ways
        raise CheckpointLoadError(f"cannot load {what}: {first_line(error)}") from None


def load_tokenizer(label: str, source: str, where: dict[str, Any]) -> Any:
    """The tokenizer at `source` (`where`: where from_pretrained finds the files, as find_checkpoint gives it),
    refused with a CheckpointLoadError naming `label` (the checkpoint as messages name it) when it fails to load or
    has next to no vocabulary. transformers builds a tokenizer from a tokenizer config alone when the vocabulary
    files are missing (a partial download, a folder saved without them): it reads every text as unknown or no tokens,
    and every score would be noise."""
    with loading(f"the tokenizer of {label}"):
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=False, **where)
    added = set(tokenizer.added_tokens_decoder)
    ordinary = len({index for index in tokenizer.get_vocab().values() if index not in added})
    if ordinary < MIN_VOCABULARY:
        raise CheckpointLoadError(
            f"the tokenizer of {label} has {ordinary} ordinary vocabulary entries (beside {len(added)} "
            f"special and added tokens), so it cannot read text: its vocabulary files (tokenizer.json, vocab and "
            f"merges, or a sentencepiece model) are missing or unreadable"
        )
    return tokenizer


def _template_origin(checkpoint: Checkpoint) -> str:
    """How errors name a checkpoint's chat template: the checkpoint, and the metadata or file it is read from."""
    if checkpoint.gguf_file:
        side = side_chat_template(checkpoint)
        if side is not None:
            return f"the chat template of {checkpoint.name!r} (in {side.file} beside it)"
        return f"the chat template of {checkpoint.name!r} ({CHAT_TEMPLATE_KEY} in its GGUF metadata)"
    if checkpoint.local:
        for name in ("chat_template.jinja", "chat_template.json", "tokenizer_config.json"):
            if os.path.isfile(os.path.join(checkpoint.source, name)):
                return f"the chat template of {checkpoint.name!r} (in {name})"
    return f"the chat template of {checkpoint.name!r}"


def _family_class(
    name: str,
    config: PretrainedConfig,
    template: str | None,
    compatibility: str | None,
    chat: ChatSettings | None = None,
) -> type[Family]:
    family = FAMILIES.get(config.model_type)
    if family is not None:
        if chat is not None:
            raise _only_for_causal_models(Mention("chat", True), name)
        if compatibility is not None:
            raise _only_for_causal_models(
                Mention("compatibility", compatibility),
                name,
                remedy="leave it out: the default policy matches T5Score's and GPTScore's Flan-T5 scoring",
            )
        return family
    if is_decoder_only(config):
        if chat is not None:
            return ChatFamily
        return GPTScoreFamily if compatibility == "gptscore" else CausalFamily
    supported = ", ".join(sorted(FAMILIES))
    raise UnsupportedModelError(
        f"{name!r} is a {config.model_type!r} model, which cannot score text as generation: "
        f"supported are the sequence-to-sequence families ({supported}) and decoder-only causal "
        f"language models (GPT-2, OPT, Llama, Qwen, ...)"
    )


def is_decoder_only(config: PretrainedConfig) -> bool:
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


def find_checkpoint(checkpoint: str) -> tuple[PretrainedConfig, dict]:
    """(config, where from_pretrained finds the files, to be passed with trust_remote_code=False) of the checkpoint
    `checkpoint` names, found as load_family finds it (for models that are not scored with, such as retrievers)."""
    return _find(locate_checkpoint(checkpoint))


def _find(checkpoint: Checkpoint) -> tuple[PretrainedConfig, dict[str, Any]]:
    """(config, where from_pretrained finds the files): a GGUF file or local directory where it is, else the Hugging
    Face cache, else the Hub, after one short request shows that the Hub answers."""
    if checkpoint.gguf_file:
        return _gguf_config(checkpoint), {"gguf_file": checkpoint.gguf_file}
    if checkpoint.local:
        return _config(checkpoint, {}), {}
    cached = {"local_files_only": True}
    try:
        return _config(checkpoint, cached), cached
    except CheckpointLoadError:
        raise  # found, but unusable
    except OSError:
        pass  # not in the cache
    reason: str | None
    if hub_constants.HF_HUB_OFFLINE:
        reason, offline = "HF_HUB_OFFLINE is set", ""
    else:
        reason = hub_unreachable()
        offline = "; working offline, set HF_HUB_OFFLINE=1, so that the Hub is not tried"
        if reason is None:
            try:
                return _config(checkpoint, {}), {}
            except CheckpointLoadError:
                raise
            except OSError as hub_error:
                reason = first_line(hub_error)
    raise CheckpointNotFoundError(
        f"Cannot load the checkpoint {checkpoint.name!r}: it is not a local directory or GGUF file, not in the Hugging "
        f"Face cache ({hub_constants.HF_HUB_CACHE}), and it could not be downloaded ({reason}){offline}",
        remedy=f"run `hf download {checkpoint.name}` online and copy its cache here, or give a folder or GGUF file",
    )


def check_checkpoint(checkpoint: Checkpoint, download: dict | None = None) -> None:
    """What can be known of a checkpoint without loading it: for a GGUF file, that the extra is installed and the file
    whole; for the others, that the config reads as JSON; for both, that nothing asks for code of the checkpoint's own
    (refused with CustomCodeError). `download`: where from_pretrained may look (local_files_only). Raises what
    load_family would."""
    download = download or {}
    check_checkpoint_files(checkpoint)
    if checkpoint.gguf_file:  # read alone (gguf_alone): no config or tokenizer config beside it is read
        require_gguf_extra(checkpoint.name)
        assert checkpoint.real_path is not None  # a GGUF checkpoint is a local file
        read_gguf_header(checkpoint.real_path)
        return
    config = _read(checkpoint, "config", lambda: PretrainedConfig.get_config_dict(checkpoint.source, **download)[0])
    tokenizer_config = _read(
        checkpoint, "tokenizer config", lambda: get_tokenizer_config(checkpoint.source, **download)
    )
    refuse_custom_code(checkpoint, config, tokenizer_config)


def _read(checkpoint: Checkpoint, what: str, read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return read()
    except ValueError as error:  # JSON that is not a config
        raise CheckpointLoadError(f"cannot read the {what} of {checkpoint.name!r}: {first_line(error)}") from None
    except OSError as error:
        if checkpoint.local:  # there, but unreadable or not JSON
            raise CheckpointLoadError(f"cannot read the {what} of {checkpoint.name!r}: {first_line(error)}") from None
        raise  # not in the cache, or not on the Hub


def _config(checkpoint: Checkpoint, download: dict[str, Any]) -> PretrainedConfig:
    """The checkpoint's config, once check_checkpoint found nothing wrong, read through AutoConfig."""
    check_checkpoint(checkpoint, download)
    try:
        return AutoConfig.from_pretrained(checkpoint.source, trust_remote_code=False, **download)
    except Exception as error:  # a config.json that transformers cannot read, or finds inconsistent
        # huggingface_hub's validation error says which validator failed; what is wrong is its cause's message.
        problem = first_line(error.__cause__ or error)
        raise CheckpointLoadError(f"cannot read the config of {checkpoint.name!r}: {problem}") from None


def _gguf_config(checkpoint: Checkpoint) -> PretrainedConfig:
    """A GGUF file's config (its metadata), once check_checkpoint found the file whole."""
    check_checkpoint(checkpoint)
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    try:
        with gguf_alone(checkpoint) as source:
            return AutoConfig.from_pretrained(source, gguf_file=checkpoint.gguf_file, trust_remote_code=False)
    except Exception as error:  # the file is sound as far as read_gguf_header sees: the architecture, or damage
        assert checkpoint.real_path is not None  # a GGUF checkpoint is a local file
        architecture = read_gguf_header(checkpoint.real_path).architecture
        if architecture.replace("-", "_") not in GGUF_SUPPORTED_ARCHITECTURES:
            raise UnsupportedModelError(
                f"{checkpoint.name!r} is a GGUF file of architecture {architecture!r}, which transformers "
                f"{transformers.__version__} cannot read from GGUF ({first_line(error)})"
            ) from None
        problem = first_line(error)
        raise CheckpointLoadError(f"cannot read the GGUF metadata of {checkpoint.name!r}: {problem}") from None
