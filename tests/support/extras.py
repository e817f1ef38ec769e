"""The package's optional extras (pyproject.toml), and skipping what needs one that this environment lacks.

The README's set-up installs every extra; an environment without one still passes the tests of everything else, and
each test that needs it is skipped with a reason naming the extra. A test module that imports an extra's package says
`require_extra(...)` at its top; a test that reaches the library's own refusal (`MissingExtraError`, or the command
line's message naming `bartscore[<extra>]`) is skipped by conftest.py and support/cli.py when that extra really is
missing here, and fails as usual when it is installed."""

from __future__ import annotations

import importlib.util
import re

import pytest

EXTRAS = {
    "app": ("gradio", "gradio_client"),
    "gguf": ("gguf", "accelerate"),
    "long": ("pysbd", "bm25s"),
    "meta-eval": ("sacremoses",),
    "ray": ("ray",),
}
NAMED_EXTRA = re.compile(r"bartscore\[([a-z-]+)\]")


def lacking(extra: str) -> list[str]:
    """The packages of `extra` that cannot be imported here."""
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


def reason(extra: str) -> str:
    return f"needs the bartscore[{extra}] extra ({', '.join(lacking(extra))} not installed)"


def require_extra(extra: str) -> None:
    """Skips the calling test module when `extra` is not installed (call it before importing the extra's packages)."""
    if lacking(extra):
        pytest.skip(reason=reason(extra), allow_module_level=True)


def skip_if_refused_for_a_missing_extra(message: str) -> None:
    """Skips the running test when `message` (an error's text) names an extra that is not installed here."""
    for extra in NAMED_EXTRA.findall(message):
        if extra in EXTRAS and lacking(extra):
            pytest.skip(reason=reason(extra))
