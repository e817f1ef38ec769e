"""The tests' model cache outside the checkout: folders that take seconds to minutes to build (the real model's
plain-folder conversion, the tiny checkpoints), built once per machine and reused by later runs.

A folder is named by a digest of everything its content depends on, so a changed builder or library builds a new
one. It is written into a temporary folder beside its final place and renamed into place, so that runs at the same
time (pytest-xdist workers among them) never see half a folder: the first rename wins and a later one drops its own
copy."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable


def cache_folder() -> str:
    """$BARTSCORE_TEST_MODELS, else bartscore-tests in the user's cache folder ($XDG_CACHE_HOME or ~/.cache)."""
    if os.environ.get("BARTSCORE_TEST_MODELS"):
        return os.environ["BARTSCORE_TEST_MODELS"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "bartscore-tests")


def digest(*parts: object) -> str:
    """A short name for what a cached folder depends on (anything json can write)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def cached_folder(name: str, build: Callable[[str], object]) -> str:
    """The cached folder `name`, made by `build(folder)` (which fills the empty folder it is given) the first time."""
    final = os.path.join(cache_folder(), name)
    if os.path.isdir(final):
        return final
    os.makedirs(cache_folder(), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".building-", dir=cache_folder())
    try:
        build(staging)
        try:
            os.rename(staging, final)
        except OSError:
            if not os.path.isdir(final):  # not another run's folder that got there first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final
