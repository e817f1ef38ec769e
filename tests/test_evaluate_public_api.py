"""The metric stands on evaluate.Metric's public API (bart_score/integrations/evaluate_metric.py): it reads, writes
and overrides none of evaluate's private names but the hooks evaluate asks every metric to define, so that an
evaluate release that changes what it keeps private cannot break the metric silently; and it still takes part in
evaluate's own multi-process mode through that API. `.ci/evaluate-range` runs the metric's tests against the oldest
and the newest evaluate that pyproject.toml admits."""

import ast
import importlib.util
import os
import subprocess
import sys
import threading

import pytest
from support.lazy import LazyModule
from support.metric import MODULE

evaluate = LazyModule("evaluate")  # imported by the first test that uses it (support/lazy.py)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METRIC_FILES = ("bartscore.py", os.path.join("bart_score", "integrations", "evaluate_metric.py"))


def evaluates_private_names():
    """The private names of evaluate's module classes, read from its source: their methods, and the attributes their
    code sets or reads on self; and, apart, the hooks a metric must define (the methods that only raise
    NotImplementedError)."""
    source = importlib.util.find_spec("evaluate.module").origin
    with open(source, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    private, hooks = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_") and not node.name.startswith("__"):
            private.add(node.name)
            body = [statement for statement in node.body if not isinstance(statement, ast.Expr)]  # docstring aside
            if len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0]):
                hooks.add(node.name)
        on_self = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
        if on_self and node.attr.startswith("_") and not node.attr.startswith("__"):
            private.add(node.attr)
    return private, hooks


def private_names_used(path, private):
    """Where the module at `path` reads, writes or defines one of `private`: name -> line numbers."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    used = {}
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "name", None)
        if isinstance(node, (ast.Attribute, ast.FunctionDef)) and name in private:
            used.setdefault(name, []).append(node.lineno)
    return used


@pytest.mark.slow
def test_the_hooks_are_the_two_that_evaluate_asks_a_metric_to_define():
    _, hooks = evaluates_private_names()
    assert hooks == {"_info", "_compute"}


def test_the_metric_uses_no_private_name_of_evaluate_but_its_hooks():
    private, hooks = evaluates_private_names()
    assert {"_feature_names", "_infer_feature_from_batch", "_finalize", "_init_writer"} <= private  # it reads them
    for path in METRIC_FILES:
        used = private_names_used(os.path.join(ROOT, path), private - hooks)
        assert not used, f"{path} uses evaluate's private {used}"


@pytest.fixture(scope="module")
def metric(tiny_checkpoint):
    return evaluate.load(MODULE, tiny_checkpoint, device="cpu")


@pytest.mark.slow
def test_the_metric_module_holds_the_card_and_the_library_the_plumbing(metric):
    """bartscore.py is the metric's card (_info, _compute) over
    bart_score.integrations.evaluate_metric.ScoringMetric."""
    from bart_score.integrations.evaluate_metric import ScoringMetric

    assert isinstance(metric, ScoringMetric) and type(metric) is not ScoringMetric
    assert set(vars(type(metric))) >= {"_info", "_compute"}
    assert not set(vars(type(metric))) & {"add_batch", "add", "compute", "download_and_prepare"}


@pytest.mark.slow
def test_importing_the_library_loads_neither_evaluate_nor_datasets():
    """A fresh process's imports are what is tested: this one has imported both."""
    probe = "import sys, bart_score; bart_score.BARTScorer; print(sorted({'evaluate', 'datasets'} & set(sys.modules)))"
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "[]"


def test_len_counts_the_pending_examples(metric):
    metric.add_batch(predictions=["A cat.", "A dog."], sources=["A cat sat.", "A dog ran."])
    metric.add(prediction="A bird.", source="A bird sang.")
    assert len(metric) == 3
    metric.compute()
    assert len(metric) == 0


def multi_process_metrics(tiny_checkpoint, cache_dir, **options):
    """The metric as each of two processes of evaluate's multi-process mode loads it (here in one process: evaluate's
    file locks keep processes apart as they keep threads)."""
    return [
        evaluate.load(
            MODULE,
            tiny_checkpoint,
            device="cpu",
            num_process=2,
            process_id=process,
            experiment_id="public-api",
            cache_dir=str(cache_dir),
            timeout=60,
            **options,
        )
        for process in range(2)
    ]


@pytest.mark.slow
def test_evaluates_multi_process_mode_gives_process_0_the_scores_of_every_process(
    tiny_checkpoint, reference_model, tmp_path
):
    from support.reference import reference_directions

    predictions = [["A cat.", "A dog ran off."], ["A bird sang.", "Rain.", "The sun is out."]]
    sources = [["A cat sat on a mat."] * 2, ["Birds sing.", "It rains.", "It is sunny."]]
    metrics = multi_process_metrics(tiny_checkpoint, tmp_path, inputs="sources")
    results = [None, None]

    def run(process):
        metrics[process].add_batch(predictions=predictions[process][:1], sources=sources[process][:1])
        results[process] = metrics[process].compute(predictions=predictions[process][1:], sources=sources[process][1:])

    threads = [threading.Thread(target=run, args=(process,)) for process in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    expected = reference_directions(
        *reference_model, [*predictions[0], *predictions[1]], sources=[*sources[0], *sources[1]]
    )
    assert results[1] is None
    assert results[0]["faithfulness"] == pytest.approx(list(expected["faithfulness"]), abs=1e-5)
    assert len(metrics[0]) == len(metrics[1]) == 0


@pytest.mark.slow
def test_evaluates_multi_process_mode_takes_the_inputs_the_metric_was_loaded_for(tiny_checkpoint, tmp_path):
    """evaluate's files hold the columns of the features it asks combine for: a batch of other inputs is refused when
    it is added, saying which inputs option would take it."""
    metric = multi_process_metrics(tiny_checkpoint, tmp_path)[1]
    loaded_for = r"multi-process mode \(num_process=2\) the metric takes the inputs it was loaded for \(references=\)"
    with pytest.raises(ValueError, match=loaded_for + r", and this batch gives sources=.*inputs='sources'"):
        metric.add_batch(predictions=["A cat."], sources=["A cat sat."])
    assert len(metric) == 0
