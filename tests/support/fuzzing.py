"""Property-based fuzzing of the library's parsers and readers, with one property for every target: any input ends in
a value or in an error of the family (bart_score.errors.BARTScoreError), within a time and a memory bound; nothing
else (no other exception type, no hang, no memory blow-up).

A target is a name, the Hypothesis strategy that makes its inputs, and the call under test (`run`, given one input),
with an optional further check of a value it returns (a signature parsed and formatted again is the same text).
Targets register themselves in fuzz_targets.py (`register`); a target written elsewhere is registered the same way,
from a module listed in TARGET_MODULES. Inputs that once broke a target stay in its `fixed` cases, which every run
tries first.

`fuzz(target, examples=N)` runs one target: the default tests run each for a few hundred examples, derandomized, and
`python bench/fuzz.py --minutes 30` keeps going for as long as it is given, writing what it finds to a folder.
A long run steers its inputs towards slow ones (Hypothesis' `target()` on each example's seconds), so that a bound
that holds for random inputs but not for crafted ones is looked for too."""

from __future__ import annotations

import contextlib
import importlib
import os
import resource
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings, target
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from bart_score.errors import BARTScoreError

# Hypothesis keeps caches (Unicode tables) in a folder of the current one by default: here, never the checkout.
set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "bartscore-hypothesis"))

# The modules whose import registers targets.
TARGET_MODULES = ("support.fuzz_targets", "support.fuzz_form_targets", "support.fuzz_served_targets")
# The bounds of one example: wall seconds, and bytes of address space beyond what the process had before the run.
EXAMPLE_SECONDS = 10.0
EXTRA_MEMORY = 2 << 30


@dataclass(frozen=True)
class Target:
    """name: how runs and findings name it. inputs(thorough): the strategy of its inputs (thorough: a long run's, which
    may use costlier seeds). run(input): the call under test. check(input, value): a further property of a value
    returned, by assertions. fixed: inputs that once broke it, tried first by every run. steered: whether a long run
    steers it towards slow inputs (Hypothesis' target phase); not where an input's seconds are a server's round trips,
    which the hill-climbing cannot move (a round of a served target spent 27 minutes there without a new input)."""

    name: str
    inputs: Callable[[bool], st.SearchStrategy[Any]]
    run: Callable[[Any], Any]
    check: Callable[[Any, Any], None] | None = None
    fixed: tuple[Any, ...] = ()
    steered: bool = True


TARGETS: dict[str, Target] = {}


def register(fuzz_target: Target) -> Target:
    TARGETS[fuzz_target.name] = fuzz_target
    return fuzz_target


def all_targets() -> dict[str, Target]:
    """Every registered target, by name (the modules of TARGET_MODULES imported)."""
    for module in TARGET_MODULES:
        importlib.import_module(module)
    return TARGETS


class OverTime(Exception):
    """An example that ran past EXAMPLE_SECONDS (raised from a timer signal, so that the example ends and is kept)."""


class Escaped(Exception):
    """A BaseException that is not an Exception escaped the call (a library's Rust panic is one), carried as an
    Exception so that Hypothesis keeps and shrinks its input as it does any other failure's."""


@dataclass
class Finding:
    """An input that broke the property: the input's repr, what happened (a traceback's last lines), and how long
    it ran."""

    target: str
    input: str
    error: str
    seconds: float


@dataclass
class Report:
    """A run of one target: the inputs tried, its seconds, what broke the property, and its slowest input (seconds,
    the input's repr cut to 200 characters)."""

    target: str
    tried: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    slowest: tuple[float, str] = (0.0, "")


@contextlib.contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Raises OverTime in the main thread once `seconds` have passed (where there is SIGALRM)."""

    def over(signum: int, frame: Any) -> None:
        raise OverTime(f"the example ran past its bound of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, over)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def memory_bound(extra: int) -> Iterator[None]:
    """Limits this process's address space to what it has now and `extra` bytes more (RLIMIT_AS), put back after:
    an allocation past it raises MemoryError, which breaks the property instead of the machine."""
    with open("/proc/self/statm", encoding="ascii") as handle:
        now = int(handle.read().split()[0]) * resource.getpagesize()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = now + extra if hard == resource.RLIM_INFINITY else min(now + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def try_one(fuzz_target: Target, value: Any, seconds: float = EXAMPLE_SECONDS) -> float:
    """Runs the target on one input, within `seconds`, and checks the property; gives the seconds it took. Raises
    what broke it (AssertionError for a check, OverTime, or the exception the call raised)."""
    started = time.perf_counter()
    with time_bound(seconds):
        try:
            result = fuzz_target.run(value)
        except BARTScoreError:
            return time.perf_counter() - started
    if fuzz_target.check is not None:
        fuzz_target.check(value, result)
    return time.perf_counter() - started


def fuzz(
    fuzz_target: Target,
    *,
    examples: int,
    thorough: bool = False,
    seed: int | None = None,
    database: Any = None,
    seconds: float = EXAMPLE_SECONDS,
    extra_memory: int = EXTRA_MEMORY,
) -> Report:
    """Runs `fuzz_target` on its fixed cases, then on `examples` generated inputs: derandomized when `seed` is None
    (the same inputs every run, so not steered by their seconds, which vary), else from `seed` and steered towards
    slow inputs. `database`: Hypothesis' example database, which a long run keeps between runs. Each failure is a
    Finding; the one Hypothesis reports is its shrunk input."""
    report = Report(fuzz_target.name)
    inputs = fuzz_target.inputs(thorough)  # first: building it (seed files) is no example's time
    steered = seed is not None and fuzz_target.steered
    started = time.perf_counter()
    failures: list[Finding] = []

    def attempt(value: Any) -> float:
        report.tried += 1
        began = time.perf_counter()
        try:
            took = try_one(fuzz_target, value, seconds)
        except BaseException as error:
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            said = "".join(traceback.format_exception(error)[-4:]).strip()
            failures.append(Finding(fuzz_target.name, repr(value), said, time.perf_counter() - began))
            if isinstance(error, Exception):
                raise
            raise Escaped(said) from error
        if took > report.slowest[0]:
            report.slowest = (took, repr(value)[:200])
        return took

    with memory_bound(extra_memory):
        for value in fuzz_target.fixed:
            with contextlib.suppress(Exception):
                attempt(value)
        report.findings.extend(failures)
        failures.clear()

        @settings(
            max_examples=examples,
            deadline=None,
            database=database,
            derandomize=seed is None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.reuse, Phase.generate, *([Phase.target] if steered else []), Phase.shrink],
            print_blob=False,
            report_multiple_bugs=False,
        )
        @given(inputs)
        def holds(value: Any) -> None:
            took = attempt(value)
            if steered:
                target(took, label="seconds")

        if seed is not None:
            holds = hypothesis_seed(seed)(holds)
        try:
            holds()
        except Exception:  # the last failure is the input Hypothesis shrank it to
            if failures:
                report.findings.append(failures[-1])
    report.seconds = time.perf_counter() - started
    return report
