"""The metric module in `evaluate`'s own module test harness, and its docstring examples with a local checkpoint.

evaluate tests every module of its repository with `LocalModuleTest.test_load` (tests/test_metric_common.py): the
module is loaded from `metrics/<name>/<name>.py` with `evaluation_module_factory`, `_compute` must take no **kwargs,
and the module's docstring examples run under `doctest` with `evaluate.load(name)` sent to the local
`metrics/<name>` folder and the module's expensive calls patched (for bertscore, its model). The same steps are taken
here, with this module in that layout and its model loading patched to the tiny test checkpoint."""

import contextlib
import doctest
import importlib
import inspect
import os
import shutil
from unittest.mock import patch

import pytest
from support.lazy import LazyModule

import bart_score.scoring.engine

evaluate = LazyModule("evaluate")  # imported by the first test that uses it (support/lazy.py)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def metrics_folder(tmp_path, monkeypatch):
    """A folder laid out as evaluate's repository, metrics/bartscore/bartscore.py, as the working directory."""
    module_folder = tmp_path / "metrics" / "bartscore"
    module_folder.mkdir(parents=True)
    shutil.copyfile(os.path.join(ROOT, "bartscore.py"), module_folder / "bartscore.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(doctest, "ELLIPSIS_MARKER", "[...]")  # as the harness sets it
    return tmp_path


@contextlib.contextmanager
def loads_from(folder, *config):
    """evaluate.load(name, ...) loads metrics/<name> (the harness's use_local_metrics), with `config` as its
    configuration when the example gives none."""

    load = evaluate.load  # the real one, before the patch replaces it

    def load_local_metric(name, *args, **kwargs):
        return load(os.path.join(folder, "metrics", name), *(args or config), **kwargs)

    with patch("evaluate.load", side_effect=load_local_metric):
        yield


def run_docstring_examples():
    """LocalModuleTest.test_load's steps: load the module from its folder, check _compute, run the doctests."""
    factory = evaluate.loading.evaluation_module_factory(os.path.join("metrics", "bartscore"), module_type="metric")
    module = importlib.import_module(factory.module_path)
    metric_class = evaluate.loading.import_main_class(module.__name__)
    parameters = inspect.signature(metric_class._compute).parameters
    assert all(parameter.kind != parameter.VAR_KEYWORD for parameter in parameters.values())
    results = doctest.testmod(module, verbose=False, raise_on_error=True)
    assert results.failed == 0
    assert results.attempted > 1
    return results


@pytest.mark.slow
def test_docstring_examples_run_in_evaluates_module_harness(metrics_folder, tiny_checkpoint):
    load_family = bart_score.scoring.engine.load_family
    loaded = []

    def tiny_instead(checkpoint, options):  # the harness's intensive-call patch: no real BART is downloaded
        loaded.append(checkpoint.name)
        return load_family(bart_score.locate_checkpoint(tiny_checkpoint), options)

    with patch("bart_score.scoring.engine.load_family", side_effect=tiny_instead), loads_from(str(metrics_folder)):
        run_docstring_examples()
    assert loaded == ["facebook/bart-large-cnn"]  # the examples ask for the default checkpoint, loaded once


@pytest.mark.slow
def test_docstring_examples_run_with_a_local_checkpoint(metrics_folder, tiny_checkpoint):
    with loads_from(str(metrics_folder), tiny_checkpoint):  # nothing patched but where the module is found
        run_docstring_examples()
