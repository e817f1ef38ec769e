"""The Space as the tests run it: the tiny checkpoint offered through the operator's settings (with one model that
cannot be loaded, and a tiny one trained to copy, whose reference points are ordered as a real model's), with smaller
limits, served on a free local port. Nothing here changes the process environment."""

import asyncio
import contextlib
import socket

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


@contextlib.contextmanager
def serving(settings):
    """The app launched as `python app.py` launches it (app.launch), on a free port; yields its URL."""
    import app  # imports Gradio: only where the Space is served (support/lazy.py says why)

    demo = app.build_demo(settings)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app.launch(
        demo, settings, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, ssr_mode=False
    )
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


def shown_signature(signature, scorer, menu_name="tiny"):
    """The engine's signature as the browser sees it: the checkpoint, a folder on the server, by its menu name."""
    assert signature.startswith(f"ckpt:{scorer.checkpoint}|")
    return signature.replace(f"ckpt:{scorer.checkpoint}|", f"ckpt:{menu_name}|")


def event_functions(demo):
    """The functions behind the app's API endpoints, by name, called as Gradio calls them but from a test (they are
    coroutines), so that inputs an HTTP client cannot encode (lone surrogates) reach them."""
    return {
        block.api_name: (lambda *args, fn=block.fn: asyncio.run(fn(*args)))
        for block in demo.fns.values()
        if block.api_name
    }
