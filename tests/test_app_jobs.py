"""One scoring computation at a time (space/jobs.py): a cancelled job, or one whose client went away, leaves no
computation running, and the computations never overlap."""

import asyncio
import csv
import threading
import time

import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from gradio_client import handle_file
from gradio_client.utils import Status
from support.space_requests import FAITHFULNESS, compare_arguments

import space.jobs
import space.settings

# ---------------------------------------------------------------------------------------------------------------------
# One scoring computation at a time, cancelled jobs included


@pytest.mark.slow
def test_submit_and_cancel_rounds_never_run_two_scoring_computations_at_once(client, app_settings, monkeypatch):
    """Each round submits a job and cancels it once the queue has given it the slot (which frees the slot at once).
    The engine's computation is made slow, and counted while it runs: at most one runs at any moment, a cancelled
    job that had not started never starts, and the last job still gets its own result."""

    def submit(first_candidate):
        return client.submit(*compare_arguments(candidates=(first_candidate, "b")), api_name="/compare")

    submit("warm up").result()  # the model is loaded (the server runs in this process: the same engine object)
    engine = space.settings.menu_scorer(app_settings, "tiny")
    score, lock = engine.score, threading.Lock()
    running, peak, started = 0, 0, []

    def slow_score(conditions, targets, *args, **kwargs):
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            started.append(targets[0])  # the first candidate: faithfulness's pairs come first
        try:
            time.sleep(4)
            return score(conditions, targets, *args, **kwargs)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(engine, "score", slow_score)
    for number in range(3):
        job = submit(f"cancelled {number}")
        deadline = time.monotonic() + 60
        while job.status().code not in (Status.PROCESSING, Status.PROGRESS):
            assert time.monotonic() < deadline, "the job was never given the slot"
            time.sleep(0.02)
        time.sleep(0.3)
        job.cancel()
    verdict, _, raw, *_ = submit("kept").result(timeout=120)
    deadline = time.monotonic() + 60
    while running:
        assert time.monotonic() < deadline, "a computation went on"
        time.sleep(0.05)
    assert peak == 1
    assert started == ["cancelled 0", "kept"]  # the jobs cancelled while they waited never computed
    assert [row[0] for row in raw["data"][:2]] == ["Candidate 1", "Candidate 2"] and "Candidate" in verdict


def test_work_waits_for_the_computation_before_it_and_a_cancelled_wait_never_runs():
    order, gate = [], threading.Event()

    def work(name):
        order.append(f"{name} starts")
        if name == "first":
            gate.wait(10)
        order.append(f"{name} ends")
        return name

    async def scenario():
        first = asyncio.ensure_future(space.jobs.run_exclusively(work, "first"))
        await asyncio.sleep(0.1)
        second = asyncio.ensure_future(space.jobs.run_exclusively(work, "second"))
        third = asyncio.ensure_future(space.jobs.run_exclusively(work, "third"))
        await asyncio.sleep(0.1)
        first.cancel()  # running: it ends its computation, and nothing starts beside it
        second.cancel()  # waiting: it never starts
        await asyncio.sleep(0.1)
        assert order == ["first starts"]
        gate.set()
        return await third

    assert asyncio.run(scenario()) == "third"
    assert order == ["first starts", "first ends", "third starts", "third ends"]


@pytest.mark.slow
def test_a_job_cancelled_by_its_event_id_never_runs_or_stops_at_its_models_next_call():
    import torch

    layer = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())

    class Scorer:  # what stoppable hooks: each call of the scorer's model (PlannedScorer.on_each_call)
        def on_each_call(self, hook):
            for module in layer.modules():
                module.register_forward_pre_hook(lambda *_: hook())

    scorer = Scorer()
    space.jobs.stoppable(scorer)
    space.jobs.stoppable(scorer)  # once is enough
    calls, started = [], threading.Event()

    def work():
        for _ in range(500):
            calls.append(layer(torch.zeros(1, 2)))
            started.set()
            time.sleep(0.01)
        return "finished"

    async def scenario():
        space.jobs.cancel("cancelled-before-it-ran")
        with pytest.raises(space.jobs.JobCancelled):
            await space.jobs.run_exclusively(pytest.fail, "never run", job="cancelled-before-it-ran")
        running = asyncio.ensure_future(space.jobs.run_exclusively(work, job="running"))
        await asyncio.to_thread(started.wait, 30)
        space.jobs.cancel("running")
        with pytest.raises(space.jobs.JobCancelled):
            await running
        ran = len(calls)
        return ran, await space.jobs.run_exclusively(work, job="not cancelled")

    ran, result = asyncio.run(scenario())
    assert ran < 10 and result == "finished"  # the cancelled computation stopped within a call or two
    assert space.jobs.was_cancelled("running") and not space.jobs.was_cancelled("not cancelled")
    layer(torch.zeros(1, 2))  # outside a job the model runs as ever


def batch_probe_file(path, rows=300, systems=6):
    """A file whose scoring takes many model calls: distinct sources and long outputs."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", *(f"system_{number}" for number in range(systems))])
        for row in range(rows):
            outputs = [
                f"It rose {row} {number}. " + "The market was high and the city grew. " * 8 for number in range(systems)
            ]
            writer.writerow([f"Report {row}: the city report says the market was high.", *outputs])
    return str(path)


@pytest.mark.slow
def test_a_job_cancelled_right_after_submit_stops(client, app_settings, tmp_path):
    """gradio_client's cancel, sent right after submit, did not reach the server: the job ran to its end."""
    from gradio_client.utils import Status

    compare = compare_arguments(source="A source.", references="", candidates=("a", "b"), directions=["faithfulness"])
    client.predict(*compare, api_name="/compare")  # the model is loaded (the same engine object)
    engine = space.settings.menu_scorer(app_settings, "tiny")
    calls = []

    def slow(module, inputs):
        calls.append(time.monotonic())
        time.sleep(0.02)

    hook = engine.model.get_decoder().register_forward_pre_hook(slow)
    upload = handle_file(batch_probe_file(tmp_path / "outputs.csv"))
    try:
        client.predict(*compare, api_name="/compare")
        compare_calls = len(calls)
        client.predict(*FAITHFULNESS, upload, api_name="/score_file")
        whole = len(calls) - compare_calls
        calls.clear()
        job = client.submit(*FAITHFULNESS, upload, api_name="/score_file")
        job.cancel()
        # answered once the scoring thread is free: after the cancelled job's computation stopped
        verdict, *_ = client.predict(*compare, api_name="/compare")
        ran = len(calls) - compare_calls  # the cancelled job's model calls
    finally:
        hook.remove()
    assert whole >= 100 and ran < whole / 10, (whole, ran)
    assert job.status().code in (Status.CANCELLED, Status.FINISHED) and "Candidate" in verdict
