"""llama.cpp's llama-server, the real inference server of the served-model tests and benchmark: the binary that
.ci/llama-server builds into the tests' model cache (support/cache.py), run on a GGUF file, bound to 127.0.0.1 with
--offline, on a free port, and stopped at the end of a `with`."""

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
HOW_TO_BUILD = "llama-server is not built: run `bash .ci/llama-server` (about 10 minutes on two cores, once a machine)"


def llama_server_binary() -> str | None:
    """The binary .ci/llama-server built, or None where it has not been built."""
    path = os.path.join(cache_folder(), f"llama-server-{VERSION}", "llama-server")
    return path if os.access(path, os.X_OK) else None


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

    def __enter__(self) -> LlamaServer:
        environment = {**os.environ, "LD_LIBRARY_PATH": os.path.dirname(self.command[0])}
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, env=environment)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server ended with status {self.process.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as answer:
                    if json.load(answer).get("status") == "ok":
                        return self
            except (OSError, urllib.error.URLError, ValueError):
                pass
            time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"llama-server did not answer /health within 300 s; see {self.log}")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
