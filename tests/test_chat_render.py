"""The process that renders chat templates (bart_score/models/_chat_render.py): what one render may write, and the
process kept across requests, replaced after a failure, never outliving its owner."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from support.chat_cases import HOSTILE_TEMPLATES, PREDICTIONS, SOURCES, THREE_LOOPS
from support.models import CHATML

import bart_score

# ---------------------------------------------------------------------------------------------------------------------
# What one render may write


def render_one(template, content):
    """What the renderer answers for one conversation of a user's message, rendered in this process."""
    from bart_score.models import _chat_render, chat

    request = {
        "template": template,
        "conversations": [{"messages": [{"role": "user", "content": content}], "add_generation_prompt": True}],
        "variables": {},
        "date": chat.TEMPLATE_DATE.isoformat(),
        "max_size": chat.RENDER_ALLOWANCE + 4 * len(content),
        "seconds": chat.RENDER_SECONDS,
        "memory": chat.RENDER_MEMORY,
    }
    return _chat_render.render(request)


def test_a_rendered_conversation_holds_at_most_twice_its_messages_and_65536_characters_more():
    echo = "{% for m in messages %}{{ m['content'] }}{{ m['content'] }}{% endfor %}"
    assert render_one(echo + "{{ 'x' * 65536 }}", "a" * 1000) == {"rendered": ["a" * 2000 + "x" * 65_536]}
    refused = render_one(echo + "{{ 'x' * 65537 }}", "a" * 1000)
    assert refused["error"] == (
        "it writes over 67,536 characters, the limit for messages of 1,000 characters (twice theirs and 65,536 more)"
    )
    assert "q" * 100_000 in render_one(CHATML, "q" * 100_000)["rendered"][0]  # a long message is its own room
    assert "it writes over 65,548 characters" in render_one("{{ 'x ' * 490000 }}" + CHATML, "Hello.")["error"]


# ---------------------------------------------------------------------------------------------------------------------
# The renderer's process: kept across requests, replaced after a failure, never outliving its owner


def renderer_payload(template, content="Hello.", seconds=None):
    """One request of a user's message, as chat scoring sends it (without the line break)."""
    from bart_score.models import chat

    return json.dumps(
        {
            "template": template,
            "conversations": [{"messages": [{"role": "user", "content": content}], "add_generation_prompt": True}],
            "variables": {},
            "date": chat.TEMPLATE_DATE.isoformat(),
            "max_size": chat.RENDER_ALLOWANCE + 4 * len(content),
            "seconds": chat.RENDER_SECONDS if seconds is None else seconds,
            "memory": chat.RENDER_MEMORY,
        }
    ).encode()


def process_alive(pid):
    """Whether process `pid` runs (a zombie, ended but not yet reaped by whoever adopted it, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def ended_within(pid, seconds):
    import time

    deadline = time.monotonic() + seconds
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not process_alive(pid)


linux_only = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")


@pytest.mark.slow
def test_the_renderer_keeps_its_process_and_replaces_it_after_a_failure():
    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    assert renderer.pid is None  # started by the first request
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    first = renderer.pid
    assert renderer.request(renderer_payload(CHATML, "Again."), 30) == render_one(CHATML, "Again.")
    assert renderer.pid == first
    failing = "{{ raise_exception('no such turn') }}"
    assert renderer.request(renderer_payload(failing), 30) == {"error": "no such turn", "conversation": 0}
    assert renderer.pid is None and ended_within(first, 5)
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    assert renderer.pid not in (None, first)
    renderer.stop()


@pytest.mark.parametrize(
    "hostile, seconds, reason",
    [
        pytest.param(THREE_LOOPS, 0.5, "it ran past its time limit of 0.5 s", marks=pytest.mark.slow),
        # The fast subset keeps one of the process's own limits, set again for each request (tests/README.md).
        (HOSTILE_TEMPLATES["wide center"][0], None, "it needed more memory than its limit of 1,024 MiB"),
        pytest.param(
            HOSTILE_TEMPLATES["huge string"][0],
            None,
            "it repeats a string of 1 characters 4,000,000,000 times",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            HOSTILE_TEMPLATES["endless"][0],
            None,
            "it asks range() for 100,000 numbers, over the limit of 10,000",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            HOSTILE_TEMPLATES["long output"][0], None, "it writes over 65,548 characters", marks=pytest.mark.slow
        ),
        pytest.param(HOSTILE_TEMPLATES["recursion"][0], None, "it recursed too deeply", marks=pytest.mark.slow),
    ],
    ids=["time", "memory", "string", "range", "output", "recursion"],
)
def test_a_kept_process_holds_every_limit_on_a_later_request_and_renders_after_it(hostile, seconds, reason):
    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    for _ in range(2):  # the limit is held by a process that rendered before, and by the one started after it
        assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
        refused = renderer.request(renderer_payload(hostile + CHATML, seconds=seconds), 30)
        assert refused["conversation"] == 0 and refused["error"].startswith(reason), refused
    renderer.stop()


@pytest.mark.slow
def test_no_template_sees_what_another_render_left():
    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    leaves = "{% set leaked = 'left' %}{% set ns = namespace(count=1) %}{% set ns.count = ns.count + 1 %}{{ ns.count }}"
    reads = "{{ leaked is defined }} {{ ns is defined }}"
    for template, rendered in [(leaves, "2"), (leaves, "2"), (reads, "False False"), (leaves, "2")]:
        assert renderer.request(renderer_payload(template), 30) == {"rendered": [rendered]}
    renderer.stop()


@pytest.mark.slow
def test_a_request_past_the_callers_time_ends_the_process():
    from bart_score.models.chat import RendererStopped, TemplateRenderer

    renderer = TemplateRenderer()
    renderer.request(renderer_payload(CHATML), 30)
    pid = renderer.pid
    with pytest.raises(RendererStopped) as stopped:
        renderer.request(renderer_payload(THREE_LOOPS + CHATML, seconds=30), 0.5)
    assert stopped.value.timed_out
    assert renderer.pid is None and ended_within(pid, 5)
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    renderer.stop()


@pytest.mark.slow
def test_a_process_that_ends_without_answering_is_reported_with_its_last_words():
    from bart_score.models.chat import RendererStopped, TemplateRenderer

    renderer = TemplateRenderer()
    with pytest.raises(RendererStopped) as stopped:
        renderer.request(b"not a request", 30)
    assert not stopped.value.timed_out and stopped.value.status == 1
    assert stopped.value.said.startswith("json.decoder.JSONDecodeError: Expecting value")
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    renderer.stop()


@pytest.mark.slow
def test_a_copy_of_a_renderer_starts_a_process_of_its_own():
    """Pickled or deep-copied (as datasets hashes a scorer passed to map), a renderer is a new one."""
    import copy
    import pickle

    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    renderer.request(renderer_payload(CHATML), 30)
    for copied in (pickle.loads(pickle.dumps(renderer)), copy.deepcopy(renderer)):
        assert copied.pid is None
        assert copied.request(renderer_payload(CHATML, "Copied."), 30) == render_one(CHATML, "Copied.")
        assert copied.pid not in (None, renderer.pid)
        copied.stop()
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    renderer.stop()


@pytest.mark.slow
@linux_only
def test_a_forked_child_renders_with_a_process_of_its_own_and_leaves_its_parents_alone():
    from bart_score.models.chat import TemplateRenderer

    renderer = TemplateRenderer()
    renderer.request(renderer_payload(CHATML), 30)
    parent = renderer.pid
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: renders, says with which process, and exits (its renderer's process ending with it)
        try:
            answer = renderer.request(renderer_payload(CHATML, "From the child."), 30)
            os.write(write, json.dumps([answer, renderer.pid]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as said:
        answer, child_renderer = json.loads(said.read())
    os.waitpid(child, 0)
    assert answer == render_one(CHATML, "From the child.")
    assert child_renderer not in (None, parent) and ended_within(child_renderer, 5)
    assert renderer.pid == parent
    assert renderer.request(renderer_payload(CHATML), 30) == render_one(CHATML, "Hello.")
    renderer.stop()


@pytest.mark.slow
@linux_only
def test_the_renderer_ends_when_its_scorer_is_collected(chatml_llama):
    import gc

    scorer = bart_score.BARTScorer(checkpoint=chatml_llama, device="cpu", chat=True)
    scorer.score(SOURCES, PREDICTIONS)
    pid = scorer.family.renderer.pid
    assert pid is not None and process_alive(pid)
    del scorer
    gc.collect()
    assert ended_within(pid, 5)


_OWNER = """
import os, signal, sys, time
import bart_score
scorer = bart_score.BARTScorer(checkpoint=sys.argv[1], device="cpu", chat=True)
print(scorer.family.renderer.pid, flush=True)
if sys.argv[2] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
@linux_only
@pytest.mark.parametrize("end", ["exits", "killed"])
def test_the_renderer_does_not_outlive_its_interpreter(chatml_llama, end):
    import sys

    completed = subprocess.run(
        [sys.executable, "-c", _OWNER, chatml_llama, end],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    assert completed.returncode == (0 if end == "exits" else -9), completed.stderr[-2000:]
    assert ended_within(int(completed.stdout.split()[-1]), 10)
