#!/usr/bin/env python
"""What Gradio's own routes take from one client: disk, memory and bodies that the Space never asked for.

The Space is served on the tiny random BART of the tests (bench/space_server.py), with its temporary folders
(GRADIO_TEMP_DIR and TMPDIR) in a fresh folder, and one client sends:

- `--recordings` screen recordings of `--recording-mib` MiB each to POST /gradio_api/process_recording;
- one body of `--server-mib` MiB to POST /gradio_api/component_server;
- one JSON body of `--call-mib` MiB to POST /gradio_api/call/compare (a Compare whose first candidate is that long),
  with a Content-Length, and again without one (chunked).

For each it prints the answers' status codes, the seconds, the server's temporary folders' size and the growth of the
server's peak resident memory (VmHWM).

    python bench/bench_app_routes.py
    git archive <commit> | tar -x -C /tmp/before && python bench/bench_app_routes.py --repo /tmp/before
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator

import _setup  # noqa: F401
import space_server

MIB = 2**20
SETTINGS = ["tiny", ["faithfulness"], "mean", "none", "", "encoder"]


def peak_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def folder_mib(folder: str) -> float:
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(FileNotFoundError):  # deleted while counting
                total += os.path.getsize(os.path.join(parent, name))
    return total / MIB


def chunks(body: bytes, size: int = MIB) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


def post(url: str, **request) -> str:
    """The answer's status code, or what ended the request (the server may close the connection mid-body)."""
    import httpx

    try:
        return str(httpx.post(url, timeout=600, **request).status_code)
    except httpx.HTTPError as error:
        return type(error).__name__


def probe(name: str, server, folder: str, send) -> None:
    before, start = peak_mib(server.pid), time.monotonic()
    answers = send()
    seconds = time.monotonic() - start
    time.sleep(1)  # a background task may delete what the request wrote
    print(
        f"{name}: answers {answers}; {seconds:.1f} s; temporary folders {folder_mib(folder):.0f} MiB; "
        f"server's peak memory {peak_mib(server.pid) - before:+.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recordings", type=int, default=8)
    parser.add_argument("--recording-mib", type=float, default=19.0)
    parser.add_argument("--server-mib", type=float, default=256.0, help="component_server's body (default 256)")
    parser.add_argument("--call-mib", type=float, default=200.0, help="call/compare's JSON body (default 200)")
    parser.add_argument("--repo", default=space_server.REPO, help="the checkout whose app is served (default: this)")
    args = parser.parse_args()

    from support.models import build_tiny, prebuilt

    with tempfile.TemporaryDirectory(prefix="bartscore-routes-") as workdir:
        checkpoint = prebuilt(os.path.join(workdir, "tiny"), build_tiny, family="bart")
        folder = os.path.join(workdir, "temporary")
        os.makedirs(folder)
        environment = space_server.server_environment([f"GRADIO_TEMP_DIR={folder}/gradio", f"TMPDIR={folder}"])
        with space_server.served(checkpoint, workdir, repo=args.repo, environment=environment) as (url, server):
            space_server.connect(url, server)
            print(f"app: {os.path.abspath(args.repo)}")
            print(f"server's resident memory at start: {space_server.resident_mib(server.pid):.0f} MiB")
            video = {"video": ("r.mp4", os.urandom(int(args.recording_mib * MIB)), "video/mp4")}
            probe(
                f"{args.recordings} x {args.recording_mib:g} MiB to process_recording",
                server,
                folder,
                lambda: [post(f"{url}gradio_api/process_recording", files=video) for _ in range(args.recordings)],
            )
            blob = b"x" * int(args.server_mib * MIB)
            probe(
                f"{args.server_mib:g} MiB to component_server",
                server,
                folder,
                lambda: [post(f"{url}gradio_api/component_server", content=blob)],
            )
            candidate = "x" * int(args.call_mib * MIB)
            data = json.dumps({"data": [*SETTINGS, "A source.", "A reference.", candidate, "b", *[""] * 4]}).encode()
            headers = {"content-type": "application/json"}
            for how, content in [("with a Content-Length", data), ("chunked", chunks(data))]:
                probe(
                    f"{args.call_mib:g} MiB of JSON to call/compare, {how}",
                    server,
                    folder,
                    lambda content=content: [post(f"{url}gradio_api/call/compare", content=content, headers=headers)],
                )


if __name__ == "__main__":
    main()
