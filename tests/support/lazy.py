"""Modules imported on first use, for the test modules of the Space and the metric.

Importing Gradio or evaluate takes seconds (evaluate brings transformers' pipelines). pytest imports every test
module while collecting, in every pytest-xdist worker, so a test module that imports them at its top makes every
worker pay for them; bound to a `LazyModule`, they are imported only by the worker that runs a test using them
(conftest.py keeps those tests together on one worker)."""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for the module `name`, importing it when one of its attributes is first read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        # pytest's collector, inspect, mock and issubclass probe every module attribute for dunders (`__bases__`,
        # `__test__`) and private names (`_mock_name`, read by pytest 9.2's collector): a probe must not import the
        # module, or collecting would pay for it after all. No test reads a private name through a LazyModule.
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(importlib.import_module(self._name), attribute)
