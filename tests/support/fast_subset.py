"""The fast subset's share of a test parametrized over cases that test one behaviour (the model families, the ways to
batch, the damaged files of one kind): a representative case or two stays in the fast subset (`-m "not slow"`), the
others are marked slow, and CI runs them all (tests/README.md)."""

from __future__ import annotations

from collections.abc import Collection, Iterable

import pytest


def fast_cases(cases: Iterable[object], fast: Collection[object]) -> list[object]:
    """`cases` for pytest.mark.parametrize, each one that is not in `fast` marked slow. A tuple is the values of
    several arguments, as parametrize takes them; the test ids are the ones the plain cases get."""
    return [
        pytest.param(*(case if isinstance(case, tuple) else (case,)), marks=() if case in fast else pytest.mark.slow)
        for case in cases
    ]
