"""Named model configurations: the paper's variants and a few well-known checkpoints of the other families, where
the paraphrase-tuned weights are found, and the engine's defaults.

This module imports nothing heavy, so that the command line can check its arguments before torch loads."""

import os
from typing import Literal, get_args

VARIANTS = {
    "vanilla": "facebook/bart-large",
    "cnn": "facebook/bart-large-cnn",
    "cnn-para": "facebook/bart-large-cnn",
}
# Well-known checkpoints of the other families, by names that are not Hub ids themselves.
NAMED_CHECKPOINTS = {
    **VARIANTS,
    "mbart50": "facebook/mbart-large-50-many-to-many-mmt",  # needs source_lang / target_lang, e.g. "de_DE" / "en_XX"
    "mt5": "google/mt5-base",  # T5Score's default checkpoint
    "flan-t5": "google/flan-t5-base",  # GPTScore's Flan-T5 scorer
    "opt": "facebook/opt-350m",  # GPTScore's OPT scorer (compatibility="gptscore" for its exact numbers)
    "qwen": "Qwen/Qwen2.5-0.5B",
}
DEFAULT_CHECKPOINT = "facebook/bart-large-cnn"
PARA_WEIGHTS_ENV = "BARTSCORE_PARA_WEIGHTS"
# Where the original code looks for the paraphrase-tuned state dict when no path is given.
ORIGINAL_PARA_WEIGHTS = os.path.join("models", "bart.pth")

# The dtypes a model may be loaded in, as EngineOptions.dtype is typed (its flag offers them) and as a tuple.
DtypeName = Literal["float32", "bfloat16", "float16"]
DTYPE_NAMES: tuple[str, ...] = get_args(DtypeName)
# Tokens a text is truncated to, as the original (fewer where the model has fewer positions).
DEFAULT_MAX_LENGTH = 1024
# Padded tokens per model batch, on an accelerator and on a CPU. Scores do not depend on it; memory and speed do. A
# CPU gains nothing from larger batches, while their activations (rows x ffn width per layer) raise the peak memory.
DEFAULT_MAX_TOKENS = 8192
DEFAULT_CPU_MAX_TOKENS = 2048
