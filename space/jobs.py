"""One scoring computation at a time, whatever the queue does.

Gradio's queue gives the scoring events one slot, but cancelling a job frees that slot at once while the job's
thread, which cannot be stopped, computes on: a client that submits and cancels could run any number of computations
at once. So every computation runs on the one thread of SCORING_THREAD. A job waits there for the computation before
it; a cancelled job whose computation has not started never starts it; one already running ends its computation
before the next starts. The thread is also the only one whose memory arena scoring grows (see guards.py).

Nothing here imports Gradio."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

SCORING_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bartscore-scoring")

Result = TypeVar("Result")


async def run_exclusively(work: Callable[..., Result], *args: object) -> Result:
    """Runs `work(*args)` on the scoring thread, after the computations before it, in the caller's context (Gradio
    finds a job's progress bar and messages through context variables). Cancelling the caller before the work starts
    takes it off the thread's queue."""
    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(SCORING_THREAD, functools.partial(context.run, work, *args))
