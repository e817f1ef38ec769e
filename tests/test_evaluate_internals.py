"""What the metric's overrides of evaluate's internals rely on (bart_score/integrations/evaluate_metric.py,
EVALUATE_INTERNALS): a release of evaluate that renames or drops any of it fails here, by name, rather than breaking
add/compute silently."""

import importlib.metadata
import inspect
import subprocess
import sys

import pytest
from support.lazy import LazyModule
from support.metric import MODULE

evaluate = LazyModule("evaluate")  # imported by the first test that uses it (support/lazy.py)
INSTALLED = importlib.metadata.version("evaluate")


@pytest.fixture(scope="module")
def metric(tiny_checkpoint):
    return evaluate.load(MODULE, tiny_checkpoint, device="cpu")


@pytest.fixture(scope="module")
def internals():
    from bart_score.integrations.evaluate_metric import EVALUATE_INTERNALS

    return EVALUATE_INTERNALS


def test_evaluates_private_methods_are_there_with_the_arguments_the_overrides_take(internals):
    expected = {"_feature_names": ["self"], "_infer_feature_from_batch": ["self", "batch"]}
    assert set(internals["methods"]) == set(expected)
    for name, parameters in expected.items():
        method = getattr(evaluate.Metric, name, None)
        assert method is not None, f"evaluate.Metric has no {name} any more (evaluate {INSTALLED})"
        assert list(inspect.signature(method).parameters) == parameters, f"evaluate.Metric.{name} changed"


def test_the_pending_batch_state_is_evaluates(metric, internals):
    """Every attribute the failed-compute path resets exists on a metric with batches pending, as after a compute."""
    metric.add_batch(predictions=["A cat."], sources=["A cat sat on the mat."])
    missing = [name for name in internals["attributes"] if not hasattr(metric, name)]
    assert not missing, f"evaluate {INSTALLED} metrics have no {missing}"
    metric.compute()
    missing = [name for name in internals["attributes"] if not hasattr(metric, name)]
    assert not missing, f"after a compute, evaluate {INSTALLED} metrics have no {missing}"


def test_the_checked_versions_name_the_installed_one():
    """The overrides were checked against these evaluate releases; a new release is checked (these tests and
    tests/test_metric.py's failed-compute tests) and added."""
    from bart_score.integrations.evaluate_metric import EVALUATE_CHECKED

    assert INSTALLED in EVALUATE_CHECKED, (
        f"evaluate {INSTALLED} is not among the versions the metric's overrides were checked against "
        f"({', '.join(EVALUATE_CHECKED)}): run tests/test_metric.py and add it to EVALUATE_CHECKED in "
        f"bart_score/integrations/evaluate_metric.py"
    )


def test_the_metric_module_holds_the_card_and_the_library_the_plumbing(metric):
    """bartscore.py is the metric's card (_info, _compute) over bart_score.integrations.evaluate_metric.ScoringMetric;
    importing bart_score itself loads neither evaluate nor datasets."""
    from bart_score.integrations.evaluate_metric import ScoringMetric

    assert isinstance(metric, ScoringMetric) and type(metric) is not ScoringMetric
    assert set(vars(type(metric))) >= {"_info", "_compute"}
    assert not set(vars(type(metric))) & {"add_batch", "add", "compute", "_feature_names", "_restore_pending"}
    probe = "import sys, bart_score; bart_score.BARTScorer; print(sorted({'evaluate', 'datasets'} & set(sys.modules)))"
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "[]"
