"""The Space served in a child process for the app benchmarks, exactly as `python app.py` serves it: the tiny random
BART checkpoint of the tests offered through the operator's settings, on a free local port.

An older version of the app can be served with `repo=` (e.g. `git archive <commit> | tar -x -C /tmp/before`), so that
a figure is measured before and after a change in one run of a script. `setup=` is Python run in the server before the
app is built (the benchmarks use it to count what the engine does)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, "tests")

_SERVER = textwrap.dedent(
    """
    import sys
    sys.path[:0] = [{repo!r}, {tests!r}]
    {setup}
    import app, space.batch
    from support import app_server
    settings = app_server.settings_for_tests({checkpoint!r}, {missing!r}, {checkpoint!r})
    demo = app.build_demo(settings)
    options = dict(server_name="127.0.0.1", server_port={port}, quiet=True, ssr_mode=False)
    if hasattr(app, "launch"):  # the app's own launch settings (upload guard, theme)
        app.launch(demo, **options)
    else:  # versions before app.launch: what `python app.py` ran
        demo.launch(max_file_size=space.batch.MAX_UPLOAD_BYTES, **options)
    """
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_environment(assignments: list[str]) -> dict[str, str]:
    """The benchmark's environment with NAME=VALUE assignments applied (an empty value unsets NAME)."""
    environment = dict(os.environ)
    environment.setdefault("HF_HUB_OFFLINE", "1")
    environment.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    environment.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    for assignment in assignments:
        name, _, value = assignment.partition("=")
        if value:
            environment[name] = value
        else:
            environment.pop(name, None)
    return environment


@contextlib.contextmanager
def served(
    checkpoint: str, workdir: str, *, repo: str = REPO, environment: dict[str, str] | None = None, setup: str = ""
) -> Iterator[tuple[str, subprocess.Popen]]:
    """Yields (URL, server process) of the app served on `checkpoint`; the server is stopped afterwards."""
    port = free_port()
    script = _SERVER.format(
        repo=os.path.abspath(repo),
        tests=TESTS,
        setup=textwrap.dedent(setup).strip(),
        checkpoint=checkpoint,
        missing=os.path.join(workdir, "missing"),
        port=port,
    )
    server = subprocess.Popen([sys.executable, "-c", script], env=environment or server_environment([]), cwd=workdir)
    try:
        yield f"http://127.0.0.1:{port}/", server
    finally:
        server.terminate()
        server.wait(timeout=30)


def connect(url: str, server: subprocess.Popen, seconds: float = 180):
    """A gradio_client.Client for the served app, once it answers."""
    from gradio_client import Client

    deadline = time.monotonic() + seconds
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.returncode}")
        try:
            return Client(url, analytics_enabled=False, verbose=False)
        except Exception:  # not listening yet
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def resident_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")
