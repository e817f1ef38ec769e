"""The fuzz targets (support/fuzz_targets.py: the GGUF and safetensors header readers, Signature.parse, the table,
JSON and plain-text readers; support/fuzz_form_targets.py: every option's check through the table, an options
argument of any type, and the Space's form handling; support/fuzz_served_targets.py: each kind of server's answers),
each for a few hundred examples, derandomized: any input ends in a value or an error of the family, each within its
time and memory bound, the inputs a long run (bench/fuzz.py) once found first. The fast subset tries each target's
fixed inputs and a few generated ones; the few hundred are slow (about 22 s of CPU time in all)."""

import pytest
from hypothesis import strategies as st
from support.extras import require_extra
from support.fuzzing import EXAMPLE_SECONDS, Target, all_targets, fuzz

from bart_score.errors import InputError

TARGETS = all_targets()
EXAMPLES = 200
# What the fast subset generates for each target: a tenth of the examples' CPU time.
QUICK_EXAMPLES = 20


THOROUGH = pytest.param(EXAMPLES, id="thorough", marks=pytest.mark.slow)


def target_case(name):
    """The Space's targets import Gradio: they run beside the Space's tests (conftest.py's groups), so that the other
    worker never imports it."""
    return pytest.param(name, marks=pytest.mark.xdist_group("gradio")) if name.startswith("space-") else name


@pytest.mark.parametrize("examples", [pytest.param(QUICK_EXAMPLES, id="quick"), THOROUGH])
@pytest.mark.parametrize("name", [target_case(name) for name in sorted(TARGETS)])
def test_any_input_ends_in_a_value_or_an_error_of_the_family(name, examples):
    if name == "gguf-header":
        require_extra("gguf")
    if name.startswith("space-"):
        require_extra("app")
    report = fuzz(TARGETS[name], examples=examples)
    assert not report.findings, "\n\n".join(f"{f.input[:500]}\n{f.error}" for f in report.findings)
    assert report.tried >= len(TARGETS[name].fixed) + examples // 2


class Panic(BaseException):
    """What a Rust library's panic is in Python (pyo3's PanicException): not an Exception."""


@pytest.mark.slow
def test_the_property_is_broken_by_another_exception_a_failed_check_or_an_input_past_its_time():
    def run(value):
        if value == "slow":
            while True:
                pass
        if value == "refused":
            raise InputError("refused")
        if value == "crash":
            raise KeyError(value)
        if value == "panic":
            raise Panic(value)
        return value

    def check(value, result):
        assert result != "wrong"

    fixed = ("fine", "refused", "crash", "wrong", "slow", "panic")
    probe = Target("probe", inputs=lambda thorough: st.just("fine"), run=run, check=check, fixed=fixed)
    report = fuzz(probe, examples=5, seconds=0.5)
    assert [finding.input for finding in report.findings] == ["'crash'", "'wrong'", "'slow'", "'panic'"]
    assert "KeyError" in report.findings[0].error and "AssertionError" in report.findings[1].error
    assert "past its bound of 0.5 s" in report.findings[2].error and report.findings[2].seconds < EXAMPLE_SECONDS
    assert "Panic" in report.findings[3].error


def test_a_generated_input_that_breaks_the_property_is_reported_shrunk():
    def run(value):
        if value > 10:
            raise Panic(value)
        return value

    report = fuzz(Target("probe", inputs=lambda thorough: st.integers(0, 1000), run=run), examples=100)
    assert [finding.input for finding in report.findings] == ["11"]
