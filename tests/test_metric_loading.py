"""Loading bartscore.py with evaluate from a script outside the checkout, as users do: it loads where the package is
installed, and where it is not, evaluate's own message asks for the right package."""

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKOUT_METRIC = os.path.join(ROOT, "bartscore.py")

# Runs in a fresh interpreter in a folder of its own; a finder placed first makes `bart_score` unimportable there
# when asked to (as on a machine where the package is not installed), whatever sys.path holds.
LOADER = textwrap.dedent(
    """
    import importlib.abc
    import sys

    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "bart_score":
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    if sys.argv[2] == "without":
        sys.meta_path.insert(0, NotInstalled())
    import evaluate

    if sys.argv[1] == "METRIC_PATH":  # the path the package gives
        import os
        import bart_score

        sys.argv[1] = bart_score.METRIC_PATH
        assert not os.path.exists("bartscore.py") and os.path.isfile(sys.argv[1])
    try:
        metric = evaluate.load(sys.argv[1], *sys.argv[3:], device="cpu")
    except ImportError as error:
        print(f"ImportError: {error}")
    else:
        result = metric.compute(predictions=["The cat sat."], references=["A cat sat."])
        print(f"loaded {type(metric).__name__}: {sorted(result)}")
    """
)


def load_in_a_subprocess(folder, package, *configuration, module=CHECKOUT_METRIC):
    script = folder / "load_metric.py"
    script.write_text(LOADER, encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, str(script), module, package, *configuration],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(folder / "modules")},
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_without_the_package_evaluate_asks_for_pip_install_bartscore(tmp_path):
    message = load_in_a_subprocess(tmp_path, "without")
    assert message.startswith("ImportError: To be able to use bartscore, you need to install")
    assert "'pip install bartscore'" in message
    assert "noqa" not in message and "#" not in message and "bart_score " not in message.split("pip install")[1]


@pytest.mark.slow
def test_the_metric_loads_from_a_script_outside_the_checkout(tmp_path, tiny_checkpoint):
    assert load_in_a_subprocess(tmp_path, "with", tiny_checkpoint).startswith("loaded BARTScore: ['f_score',")


@pytest.mark.slow
def test_the_metric_loads_from_any_folder_by_the_path_the_package_gives(tmp_path, tiny_checkpoint):
    """evaluate.load(bart_score.METRIC_PATH, ...) in a folder without bartscore.py (tests/test_packaging.py checks that
    the path is the installed file's when the package is installed)."""
    loaded = load_in_a_subprocess(tmp_path, "with", tiny_checkpoint, module="METRIC_PATH")
    assert loaded.startswith("loaded BARTScore: ['f_score',")


def test_the_package_names_the_metric_module_beside_it():
    import bart_score

    assert bart_score.METRIC_PATH == CHECKOUT_METRIC
