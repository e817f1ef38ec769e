"""The Space as the tests run it: the tiny checkpoint offered through the operator's settings (with one model that
cannot be loaded, and a tiny one trained to copy, whose reference points are ordered as a real model's), with smaller
limits, served on a free local port and waited for by readiness (`serving`). Nothing here changes the process
environment."""

import asyncio
import contextlib
import socket
import threading
import time
import unittest.mock

import space.settings

MAX_CHARS = 600
MAX_ROWS = 300


def settings_for_tests(tiny_checkpoint, missing_checkpoint, copying_checkpoint):
    return space.settings.settings_from_env(
        {
            "BARTSCORE_APP_MODELS": f"tiny={tiny_checkpoint},missing={missing_checkpoint},copier={copying_checkpoint}",
            "BARTSCORE_APP_DEFAULT_MODEL": "tiny",
            "BARTSCORE_APP_DEVICE": "cpu",
            "BARTSCORE_APP_MAX_CHARS": str(MAX_CHARS),
            "BARTSCORE_APP_MAX_ROWS": str(MAX_ROWS),
        }
    )


# How long a start may take: on two cores at a load of 20, uvicorn took longer than the 5 s Gradio waits for it, and a
# HEAD of the page longer than the 3 s Gradio gives each of its five tries (its launch then failed, erroring every
# test of the group). The start is waited for by readiness, up to this, and tried again on a new port.
START_SECONDS = 600
START_TRIES = 3


class SpaceDidNotStart(RuntimeError):
    """The Space's server did not come up (each try's reason in the message)."""


@contextlib.contextmanager
def serving(settings):
    """The app launched as `python app.py` launches it (app.launch), on a free port; yields its URL once it answers.
    A start that fails is tried again on a new port; after START_TRIES, SpaceDidNotStart says why each failed."""
    import app  # imports Gradio: only where the Space is served (support/lazy.py says why)

    failures = []
    for _ in range(START_TRIES):
        demo = app.build_demo(settings)
        port = free_port()
        try:
            with patient_start():
                app.launch(
                    demo,
                    settings,
                    server_name="127.0.0.1",
                    server_port=port,
                    prevent_thread_lock=True,
                    quiet=True,
                    ssr_mode=False,
                )
        except (OSError, ValueError) as error:  # Gradio's words for a server that did not start, or did not answer
            demo.close()
            failures.append(f"port {port}: {error}")
            continue
        try:
            yield f"http://127.0.0.1:{port}/"
        finally:
            demo.close()
        return
    raise SpaceDidNotStart(f"the Space's server did not start on 127.0.0.1 in {START_TRIES} tries: {failures}")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def patient_start():
    """Gradio's launch, waiting for its server by readiness up to START_SECONDS rather than by its own few seconds:
    the server's thread started, then the page answering a HEAD. A server whose thread ends is a failed start at
    once."""
    import gradio.http_server
    import gradio.networking
    import httpx

    def run_in_thread(server):
        server.thread = threading.Thread(target=server.run, daemon=True)
        server.thread.start()
        deadline = time.monotonic() + START_SECONDS
        while not server.started:
            if not server.thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                raise gradio.http_server.ServerFailedToStartError(
                    "uvicorn " + ("stopped before it listened" if not server.thread.is_alive() else "never listened")
                )
            time.sleep(0.01)

    def url_ok(url):
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            try:
                if httpx.head(url, timeout=60).status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        return False

    with (
        unittest.mock.patch.object(gradio.http_server.Server, "run_in_thread", run_in_thread),
        unittest.mock.patch.object(gradio.networking, "url_ok", url_ok),
    ):
        yield


def shown_signature(signature, scorer, menu_name="tiny"):
    """The engine's signature as the browser sees it: the checkpoint, a folder on the server, by its menu name."""
    assert signature.startswith(f"ckpt:{scorer.options.checkpoint}|")
    return signature.replace(f"ckpt:{scorer.options.checkpoint}|", f"ckpt:{menu_name}|")


def event_functions(demo):
    """The functions behind the app's API endpoints, by name, called as Gradio calls them but from a test (they are
    coroutines), so that inputs an HTTP client cannot encode (lone surrogates) reach them."""
    return {
        block.api_name: (lambda *args, fn=block.fn: asyncio.run(fn(*args)))
        for block in demo.fns.values()
        if block.api_name
    }
