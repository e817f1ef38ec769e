"""The split of ``bartscore meta-eval --select`` (bart_score.meta_eval._selection_grid) and its defaults, kept apart
from the scoring and statistics so that the command line reads the defaults without loading them.

Each benchmark's documents go to a development part or a held-out part by a seeded hash of the document's key: its
doc_id, or for WMT19 and data-to-text (where several records judge outputs for one input under different doc_ids)
its source text. All records of a key land in one part, so a system's outputs for one document never straddle it."""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..inputs import whole_number
from ..messages import Mention, shown
from .benchmarks import BENCHMARKS

DEFAULT_DEV_FRACTION = 0.5
DEFAULT_SEED = 0
DEFAULT_MAX_PAIRS = 1_000_000
# The largest seed: numpy's generators, which draw the bootstrap intervals, take any seed of 0 or more (a negative
# one is numpy's ValueError, after the scoring); the reports write it in 20 digits at most.
MAX_SEED = 2**64 - 1
MIN_DOCUMENTS = 5  # in each part: fewer leave nothing to choose on, or nothing to report
DEV_FRACTION = Mention("dev_fraction")
# Layouts whose records for one input carry different doc_ids: split by the input (the source text) instead.
_SPLIT_BY_SOURCE = ("darr", "data-to-text")


def split_unit(benchmark: str) -> str:
    """What a benchmark's split keys are: "doc_id" or "source"."""
    return "source" if BENCHMARKS[benchmark].layout in _SPLIT_BY_SOURCE else "doc_id"


def split_keys(benchmark: str, dataset: Any) -> list[str]:
    """Each record's split key: its doc_id, or for WMT19 and data-to-text its source text."""
    if split_unit(benchmark) == "source":
        return list(dataset["source"])
    return list(dataset["doc_id"])


def check_split(dev_fraction: object, seed: object) -> None:
    """The split's settings, checked before anything is scored: dev_fraction a number strictly between 0 and 1, seed
    a whole number from 0 to MAX_SEED (InputError naming the option)."""
    if isinstance(dev_fraction, bool) or not isinstance(dev_fraction, numbers.Real) or not 0 < float(dev_fraction) < 1:
        raise InputError(
            DEV_FRACTION, f" must be between 0 and 1 (exclusive), got {shown(dev_fraction)}", value=dev_fraction
        )
    number = whole_number(seed)
    if number is None or not 0 <= number <= MAX_SEED:
        raise InputError(
            Mention("seed"),
            f" must be a whole number from 0 to {MAX_SEED} (numpy's generators take none below 0), got {shown(seed)}",
            value=seed,
        )


def in_development(keys: Sequence[str], dev_fraction: float, seed: int) -> dict[str, bool]:
    """Whether each distinct key is in the development part: the first 8 bytes of SHA-256 of "<seed>:<key>", read as
    a fraction of 2**64, fall below dev_fraction."""
    check_split(dev_fraction, seed)
    part = {}
    for key in dict.fromkeys(keys):
        digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
        part[key] = int.from_bytes(digest[:8], "big") / 2**64 < dev_fraction
    return part


def split_records(benchmark: str, dataset: Any, dev_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(development record positions, held-out record positions) of a benchmark, each part holding at least
    MIN_DOCUMENTS documents (else InputError with the counts, about dev_fraction: see split_shortfall)."""
    shortfall = split_shortfall(benchmark, dataset, dev_fraction, seed)
    if shortfall is not None:
        raise InputError(
            shortfall,
            option="dev_fraction",
            value=dev_fraction,
            remedy=["give more documents or another ", DEV_FRACTION],
        )
    keys = split_keys(benchmark, dataset)
    part = in_development(keys, dev_fraction, seed)
    development = np.flatnonzero([part[key] for key in keys])
    held_out = np.flatnonzero([not part[key] for key in keys])
    return development, held_out


def split_shortfall(benchmark: str, dataset: Any, dev_fraction: float, seed: int) -> str | None:
    """What keeps a benchmark's split from serving a selection, in words (a part with fewer than MIN_DOCUMENTS
    documents, with the counts), or None; more documents or another dev_fraction mend it, as each front end says."""
    part = in_development(split_keys(benchmark, dataset), dev_fraction, seed)
    counts = {"development": sum(part.values()), "held-out": len(part) - sum(part.values())}
    for name, count in counts.items():
        if count < MIN_DOCUMENTS:
            unit = "source texts" if split_unit(benchmark) == "source" else "documents"
            return (
                f"{benchmark}: the {name} part has {count} {unit} of {len(part)} (dev fraction {dev_fraction}, seed "
                f"{seed}); selection needs at least {MIN_DOCUMENTS} in each part"
            )
    return None
