"""Named model configurations: the paper's variants by name, and where the paraphrase-tuned weights are found.

This module imports nothing heavy, so that the command line can check its arguments before torch loads."""

import os

VARIANTS = {
    "vanilla": "facebook/bart-large",
    "cnn": "facebook/bart-large-cnn",
    "cnn-para": "facebook/bart-large-cnn",
}
DEFAULT_CHECKPOINT = "facebook/bart-large-cnn"
PARA_WEIGHTS_ENV = "BARTSCORE_PARA_WEIGHTS"
# Where the original code looks for the paraphrase-tuned state dict when no path is given.
ORIGINAL_PARA_WEIGHTS = os.path.join("models", "bart.pth")

DTYPE_NAMES = ("float32", "bfloat16", "float16")
# Padded tokens per model batch. Scores do not depend on it; memory and speed do.
DEFAULT_MAX_TOKENS = 8192
