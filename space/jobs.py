"""One scoring computation at a time, whatever the queue does; a cancelled job's computation stopped.

Gradio's queue gives the scoring events one slot, but cancelling a job frees that slot at once while the job's
thread, which nothing outside can stop, computes on: a client that submits and cancels could run any number of
computations at once. So every computation runs on the one thread of SCORING_THREAD. A job waits there for the
computation before it; a cancelled job whose computation has not started never starts it; one already running stops
at its model's next call (`stoppable` hooks the scorer's calls), so that the next starts soon after. The thread is
also the only one whose memory arena scoring grows (see guards.py).

A job is cancelled when Gradio cancels its task, or by its event id (`cancel`): gradio_client sends its cancel before
it knows the job's event id, then asks to reset the event by its id, which Gradio takes as nothing; the Space's route
guard (routes.py) passes that id here. An id cancelled before its job is run is remembered (the last
CANCELLED_KEPT of them), and the job is never run.

Nothing here imports Gradio."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

SCORING_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bartscore-scoring")
CANCELLED_KEPT = 1024

Result = TypeVar("Result")


class JobCancelled(BaseException):
    """Raised in a computation whose job was cancelled: a BaseException, as asyncio's CancelledError is, so that no
    `except Exception` of the work takes it for a failure of its own."""


_stop_of_this_job: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("job_stop", default=None)
_cancelled: OrderedDict[str, None] = OrderedDict()  # event ids cancelled, newest last
_running: dict[str, threading.Event] = {}  # event id -> its computation's stop
_lock = threading.Lock()
_hooked: weakref.WeakSet[Any] = weakref.WeakSet()  # the scorers `stoppable` hooked


def cancel(event_id: str) -> None:
    """Cancels the job of this event id: its computation stops, or never starts."""
    with _lock:
        _cancelled[event_id] = None
        _cancelled.move_to_end(event_id)
        while len(_cancelled) > CANCELLED_KEPT:
            _cancelled.popitem(last=False)
        stop = _running.get(event_id)
    if stop is not None:
        stop.set()


def was_cancelled(event_id: str | None) -> bool:
    with _lock:
        return event_id in _cancelled


async def run_exclusively(work: Callable[..., Result], *args: object, job: str | None = None) -> Result:
    """Runs `work(*args)` on the scoring thread, after the computations before it, in the caller's context (Gradio
    finds a job's progress bar and messages through context variables). Cancelling the caller, or the event id `job`,
    takes the work off the thread's queue, or stops it at its model's next call (JobCancelled)."""
    stop = threading.Event()
    with _lock:
        if job in _cancelled:
            raise JobCancelled()
        if job is not None:
            _running[job] = stop

    def computation() -> Result:
        if stop.is_set():
            raise JobCancelled()
        _stop_of_this_job.set(stop)
        return work(*args)

    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(SCORING_THREAD, functools.partial(context.run, computation))
    except asyncio.CancelledError:
        stop.set()
        raise
    finally:
        if job is not None:
            with _lock:
                _running.pop(job, None)


def stoppable(scorer: Any) -> None:
    """Hooks each call of a scorer's model (once: every module of a local model, each request to a server), so that
    such a call in a cancelled job's computation raises JobCancelled: a computation stops within one model batch (or
    one request) of its cancel."""
    with _lock:
        if scorer in _hooked:
            return
        _hooked.add(scorer)
    scorer.on_each_call(_stop_if_cancelled)


def _stop_if_cancelled() -> None:
    stop = _stop_of_this_job.get()
    if stop is not None and stop.is_set():
        raise JobCancelled()
