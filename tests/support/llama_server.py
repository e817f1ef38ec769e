"""llama.cpp's llama-server, the real inference server of the served-model tests and benchmark: the binary that
.ci/llama-server builds into the tests' model cache (support/cache.py), run on a GGUF file, bound to 127.0.0.1 with
--offline, on a free port, and stopped at the end of a `with`. The build is static (llama.cpp's libraries linked in),
so the binary runs from where it lies, with no library path set."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

from support.cache import cache_folder

VERSION = "11434.0.0"
HOW_TO_BUILD = (
    "llama-server is not built: run `bash .ci/llama-server` (about 14 minutes of CPU time, once a machine; it prints "
    "the binary's path)"
)


def llama_server_binary() -> str | None:
    """The binary .ci/llama-server built, or None where it has not been built."""
    path = os.path.join(cache_folder(), f"llama-server-{VERSION}-static", "llama-server")
    return path if os.access(path, os.X_OK) else None


def wait_until_ready(url: str, process: subprocess.Popen[bytes], log: str, seconds: float = 300) -> None:
    """Returns once the llama-server at `url`, started as `process` (its log in the file `log`), answers /health with
    its model loaded; a RuntimeError naming the log if the process ends first or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama-server ended with status {process.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
                if json.load(answer).get("status") == "ok":
                    return
        except (OSError, urllib.error.URLError, ValueError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"llama-server did not answer /health within {seconds:g} s; see {log}")


class LlamaServer:
    """llama-server on `gguf`: `slots` parallel slots of `context` tokens each, `threads` threads; `url` once started.
    Its log goes to `log` (a path). One thread by default: llama.cpp's threads wait for each other spinning, so on two
    cores shared with other work two threads decoded a token 20 to 50 times slower than one (300 to 760 ms against
    15 ms on SmolLM2-135M, load average 8)."""

    def __init__(self, gguf: str, log: str, *, slots: int = 2, context: int = 2048, threads: int = 1) -> None:
        binary = llama_server_binary()
        if binary is None:
            raise FileNotFoundError(HOW_TO_BUILD)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.command = [
            binary,
            *("-m", gguf, "--host", "127.0.0.1", "--port", str(self.port), "--offline", "--no-webui"),
            *("-c", str(context * slots), "-np", str(slots), "-t", str(threads)),
        ]
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        """The CPU time the server has spent so far (user and system, all its threads; from Linux's /proc): what a
        scoring costs it, which a shared machine's load stretches far less than the wall-clock time."""
        assert self.process is not None, "the server is not started"
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> LlamaServer:
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until_ready(self.url, self.process, self.log)
        except RuntimeError:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
