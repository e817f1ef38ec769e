"""Tiny random causal LMs written both ways: as a folder saved with save_pretrained, and as a GGUF file written here
with the gguf package's own writer, the way llama.cpp's converter lays one out (metadata keys, tensor names from
gguf's name map, Llama's query and key rows interleaved per rotary half, a byte-level BPE vocabulary with its
merges and token types, a chat template).

The tensors are written as float32 or float16; float16 ones are rounded from the model first, so that both files hold
exactly the same values and their scores can be compared to the last bit the arithmetic allows."""

from __future__ import annotations

import json
import pathlib
import struct
from typing import Any

import numpy as np
import torch
from tokenizers import pre_tokenizers
from transformers import GPT2Tokenizer, LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

from support.extras import require_extra
from support.models import byte_level_bpe, decoder_dims

try:
    import gguf
except ImportError:  # the gguf extra is not installed: write_gguf skips the test that asks for a file
    gguf = None

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
ARCHITECTURES = ("llama", "qwen2")
_CONFIGS = {"llama": (LlamaConfig, LlamaForCausalLM), "qwen2": (Qwen2Config, Qwen2ForCausalLM)}
# GGUF token types (llama.cpp's): an ordinary token, and a control token such as <|endoftext|>.
_NORMAL, _CONTROL = 1, 3


def byte_level_tokenizer(vocab_size: int = 700) -> GPT2Tokenizer:
    """A byte-level BPE trained on the tests' English-like text, its special tokens first (ids 0, 1, 2)."""
    pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    vocab, merges = byte_level_bpe(pre_tokenizer, None, vocab_size, special_tokens=SPECIAL_TOKENS, languages=("en",))
    return GPT2Tokenizer(
        vocab=vocab,
        merges=merges,
        bos_token="<|endoftext|>",
        eos_token="<|im_end|>",
        unk_token="<|endoftext|>",
        pad_token="<|im_end|>",
        extra_special_tokens=["<|im_start|>"],
        add_bos_token=False,
        chat_template=CHAT_TEMPLATE,
    )


def build_tiny_causal(architecture: str, *, seed: int = 0, float16_values: bool = False):
    """(model, tokenizer): a random `architecture` model (2 layers, grouped-query attention) over a trained tokenizer.
    With float16_values every weight is rounded to float16 (and kept in float32), so a float16 GGUF holds it exactly."""
    tokenizer = byte_level_tokenizer()
    config_class, model_class = _CONFIGS[architecture]
    config = config_class(
        vocab_size=len(tokenizer),
        **decoder_dims(),
        max_position_embeddings=512,
        rms_norm_eps=1e-6,
        initializer_range=0.3,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=architecture == "qwen2",
    )
    torch.manual_seed(seed)
    model = model_class(config).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() == 1:  # norms and biases away from their initial 1 and 0, so that a lost one shows
                parameter.add_(0.2 * torch.randn_like(parameter))
            if float16_values:
                parameter.copy_(parameter.half().float())
    return model, tokenizer


def save_folder(model, tokenizer, folder) -> str:
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def write_gguf(model, tokenizer, path, *, tensor_dtype=np.float32, leave_out=(), edit=None) -> str:
    """Writes `model` and `tokenizer` as a GGUF file at `path` (tensors in tensor_dtype, norms always in float32),
    without the weights named in `leave_out`. edit(writer), when given, is called once every key and tensor is added
    and before anything is written: a key it adds again replaces the model's value. Every GGUF file of the tests
    starts here, so this is where a test skips without the gguf extra."""
    require_extra("gguf")
    config = model.config
    architecture = config.model_type
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_name(f"tiny-{architecture}")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_rope_freq_base(config.rope_parameters["rope_theta"])
    writer.add_rope_dimension_count(config.hidden_size // config.num_attention_heads)
    writer.add_vocab_size(config.vocab_size)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32 if tensor_dtype == np.float32 else gguf.LlamaFileType.MOSTLY_F16)
    _add_tokenizer(writer, tokenizer)

    arch = next(key for key, name in gguf.MODEL_ARCH_NAMES.items() if name == architecture)
    names = gguf.get_tensor_name_map(arch, config.num_hidden_layers)
    for name, tensor in model.state_dict().items():
        if name in leave_out or (name == "lm_head.weight" and config.tie_word_embeddings):
            continue  # a tied output layer is the embedding: GGUF leaves output.weight out
        base, suffix = name.rsplit(".", 1)
        values = tensor.detach().float().numpy()
        if architecture == "llama" and base.endswith(("q_proj", "k_proj")):
            heads = config.num_attention_heads if base.endswith("q_proj") else config.num_key_value_heads
            values = _interleave_rotary_halves(values, heads)
        kept = np.float32 if values.ndim == 1 else tensor_dtype
        writer.add_tensor(f"{names.get_name(base)}.{suffix}", values.astype(kept))
    if edit is not None:
        edit(writer)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return str(path)


def add_raw_metadata(path, key: str, kind: int, payload: bytes) -> None:
    """Adds the metadata key `key` of GGUF value type `kind`, its value being `payload` (the bytes GGUF lays the value
    out as), to the GGUF file at `path`, after its other keys: written as bytes, so that a value of millions of
    elements takes no time to build (gguf's writer packs them one by one). The tensor offsets are relative to the
    data, which moves to the next aligned byte after the longer header."""
    reader = gguf.GGUFReader(str(path))
    fields = [tensor.field for tensor in reader.tensors]
    table_start = min(field.offset for field in fields)
    last = max(fields, key=lambda field: field.offset)
    header_end = last.offset + sum(int(part.nbytes) for part in last.parts)
    data = pathlib.Path(path).read_bytes()
    name = key.encode("utf-8")
    entry = struct.pack("<Q", len(name)) + name + struct.pack("<I", kind) + payload
    header = bytearray(data[:table_start] + entry + data[table_start:header_end])
    struct.pack_into("<Q", header, 16, len(reader.fields) - 3 + 1)  # the key count; fields include 3 of the header's
    padding = -len(header) % reader.alignment
    pathlib.Path(path).write_bytes(bytes(header) + bytes(padding) + data[reader.data_offset :])


def string_array(strings) -> bytes:
    """The bytes of a GGUF array of strings (for add_raw_metadata)."""
    encoded = [text.encode("utf-8") for text in strings]
    lengths = b"".join(struct.pack("<Q", len(item)) + item for item in encoded)
    return struct.pack("<IQ", gguf.GGUFValueType.STRING, len(encoded)) + lengths


def unused_strings_probe(model, tokenizer, path, count: int = 4_000_000) -> str:
    """The model's GGUF file with an unused metadata array of `count` empty strings (32 MB for 4 million): one of the
    metadata bombs of issue 28, 5.3 GB in transformers' reader before a refusal."""
    write_gguf(model, tokenizer, path)
    add_raw_metadata(path, "general.unused", gguf.GGUFValueType.ARRAY, struct.pack("<IQ", 8, count) + bytes(8 * count))
    return str(path)


def vocabulary_probe(model, tokenizer, path, tokens: int = 2_000_000) -> str:
    """The model's GGUF file whose vocabulary is `tokens` tokens long (39 MB for 2 million), its embedding unchanged."""
    write_gguf(model, tokenizer, path, edit=lambda writer: writer.kv_data[0].pop(gguf.Keys.Tokenizer.LIST))
    add_raw_metadata(
        path,
        gguf.Keys.Tokenizer.LIST,
        gguf.GGUFValueType.ARRAY,
        string_array(f"token{index}" for index in range(tokens)),
    )
    return str(path)


def block_count_probe(model, tokenizer, path, blocks: int = 20_000) -> str:
    """The model's GGUF file whose metadata says `blocks` layers (block_count), with the tensors of its own 2."""
    return write_gguf(model, tokenizer, path, edit=lambda writer: writer.add_block_count(blocks))


def _interleave_rotary_halves(weight: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's layout of Llama's query and key rows: within each head, the rows of the two rotary halves
    alternate (first half's row 0, second half's row 0, first half's row 1, ...)."""
    rows, columns = weight.shape
    per_half = rows // heads // 2
    return weight.reshape(heads, 2, per_half, columns).transpose(0, 2, 1, 3).reshape(rows, columns)


def _add_tokenizer(writer: Any, tokenizer: GPT2Tokenizer) -> None:
    by_id = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    tokens = [token for token, _ in by_id]
    assert [index for _, index in by_id] == list(range(len(tokens))), "the vocabulary has gaps"
    specials = set(tokenizer.all_special_tokens)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([_CONTROL if token in specials else _NORMAL for token in tokens])
    writer.add_token_merges([" ".join(pair) for pair in _tokenizer_merges(tokenizer)])
    writer.add_bos_token_id(tokenizer.bos_token_id)
    writer.add_eos_token_id(tokenizer.eos_token_id)
    writer.add_unk_token_id(tokenizer.unk_token_id)
    writer.add_pad_token_id(tokenizer.pad_token_id)
    writer.add_add_bos_token(False)
    if tokenizer.chat_template:  # a base model's file has none
        writer.add_chat_template(tokenizer.chat_template)


def _tokenizer_merges(tokenizer: GPT2Tokenizer) -> list:
    merges = json.loads(tokenizer.backend_tokenizer.to_str())["model"]["merges"]
    return [merge if isinstance(merge, list) else merge.split(" ") for merge in merges]
