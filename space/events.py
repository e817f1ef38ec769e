"""The scoring events of the page's two tabs, wired to their handlers (app.py lays out the components they read and
update): each tab's API entry, and its Score button's chain of events, both on the queue's one scoring slot, of
which Gradio keeps no time estimate."""

from __future__ import annotations

import collections
from typing import Any

import gradio as gr
import gradio.queueing

from .handlers import scoring_ended, scoring_started
from .wiring import BatchPageOutputs, ComparePageOutputs, ScoringStartedOutputs, Wired

SCORING_SLOT = "model"  # the queue's concurrency id that both tabs' scoring events share
# After a scoring event: the settings' problem line, when it shows a problem, brought into view (a phone shows the
# settings far above the Score button). Looked for a few times: Gradio may draw the event's outputs after this runs.
SHOW_SETTINGS_PROBLEM = """() => {
    let tries = 50;
    const look = () => {
        const problem = document.querySelector("#settings-status .problem");
        if (problem) document.querySelector("#settings-status").scrollIntoView({block: "start"});
        else if (--tries > 0) setTimeout(look, 100);
    };
    look();
}"""


def wire_scoring(
    handlers: Any,
    button: gr.Button,
    inputs: Wired,
    page: ComparePageOutputs | BatchPageOutputs,
    *,
    field_names: tuple[str, ...],
    api_name: str,
    busy: str,
) -> None:
    """The scoring events of a tab. API clients call `api_name` (a hidden trigger: the page never fires it) with
    `inputs`, for the page's `results`; the button disables itself, unmarks the fields (`page.marks`, named
    `field_names`), says what runs (`busy`) and empties the settings' status line, runs the page's entry (for `page`)
    with its progress on the status line, brings a problem with the settings into view, and enables itself again.
    Both entries share one queue slot, SCORING_SLOT."""
    gr.Button(visible=False).click(
        handlers.api, list(inputs), list(page.results), api_name=api_name, concurrency_id=SCORING_SLOT
    )
    started = ScoringStartedOutputs(
        button=button, status=page.status, settings_status=page.settings_status, marks=page.marks
    )
    button.click(
        lambda: scoring_started(field_names, busy),
        None,
        list(started),
        queue=False,
        show_progress="hidden",
        api_visibility="private",
    ).then(
        handlers.page,
        list(inputs),
        list(page),
        concurrency_id=SCORING_SLOT,
        show_progress_on=[page.status],
        api_visibility="private",
    ).then(None, js=SHOW_SETTINGS_PROBLEM, api_visibility="private").then(
        scoring_ended, None, button, queue=False, show_progress="hidden", api_visibility="private"
    )


class UnestimatedScoring(collections.defaultdict):
    """Gradio's record of each event's mean duration (its queue's process_time_per_fn), from which it shows a job
    an estimate ("processing | 101.2/0.5s"), less the scoring events (`unestimated`): their jobs differ in size by
    thousands of times (a refused request takes half a second, a file of 1000 rows minutes), so a mean of past jobs
    was a stale estimate of the next. Gradio shows no estimate for an event it holds no record of."""

    def __init__(self, unestimated: set) -> None:
        super().__init__(gradio.queueing.ProcessTime)
        self.unestimated = unestimated

    def __contains__(self, fn: object) -> bool:
        return fn not in self.unestimated and super().__contains__(fn)

    def __missing__(self, fn):
        return gradio.queueing.ProcessTime() if fn in self.unestimated else super().__missing__(fn)
