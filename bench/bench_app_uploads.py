#!/usr/bin/env python
"""Disk taken by uploads: first `--scored` Batch requests through gradio_client, each sending its file, and the
uploads they leave in the server's upload folder (GRADIO_TEMP_DIR, a fresh folder here); then uploads that are never
scored: one client sends `--files` uploads of `--mib` MiB each to the Space's upload route as fast as it can, and
this prints how many were stored, how many refused, and the bytes left in the upload folder, right after the burst and
`--later` seconds after.

The Space is served on the tiny random BART of the tests (bench/space_server.py); an older version of the app can be
measured with --repo (e.g. `git archive <commit> | tar -x -C /tmp/before`).

    python bench/bench_app_uploads.py --files 24 --mib 19
    python bench/bench_app_uploads.py --files 24 --mib 19 --repo /tmp/before
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import tempfile
import time

import _setup  # noqa: F401
import space_server


def folder_bytes(folder: str) -> tuple[int, int]:
    """(files, bytes) under `folder`."""
    files = total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(parent, name))
                files += 1
            except FileNotFoundError:  # deleted while counting
                pass
    return files, total


def upload(url: str, body: bytes, number: int) -> int:
    import httpx

    response = httpx.post(
        f"{url}gradio_api/upload", files=[("files", (f"upload-{number}.csv", body, "text/csv"))], timeout=120
    )
    return response.status_code


def scored_uploads_left(client, workdir: str, uploads: str, requests: int) -> int:
    """How many of `requests` files, each scored by a Batch request through gradio_client, stay in `uploads`."""
    from gradio_client import handle_file

    for number in range(requests):
        path = os.path.join(workdir, f"scored-{number}.csv")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(f"source,system\nThe council voted {number}.,A vote.\n")
        client.predict(
            "tiny", ["faithfulness"], "mean", "none", "", "encoder", handle_file(path), api_name="/score_file"
        )
    return sum(name.startswith("scored-") for _, _, names in os.walk(uploads) for name in names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=24)
    parser.add_argument("--mib", type=float, default=19.0, help="size of each upload in MiB (default 19)")
    parser.add_argument("--parallel", type=int, default=4, help="uploads in flight at once (default 4)")
    parser.add_argument("--later", type=float, default=5.0, help="seconds after the burst to count again")
    parser.add_argument("--scored", type=int, default=5, help="Batch requests through gradio_client first")
    parser.add_argument("--repo", default=space_server.REPO, help="the checkout whose app is served (default: this)")
    args = parser.parse_args()

    from support.models import build_tiny

    line = b"source,reference,system\nThe council voted for a library.,A library.,A new library.\n"
    body = (line * (int(args.mib * 1024 * 1024) // len(line) + 1))[: int(args.mib * 1024 * 1024)]
    with tempfile.TemporaryDirectory(prefix="bartscore-uploads-") as workdir:
        checkpoint = build_tiny("bart", os.path.join(workdir, "tiny"))
        uploads = os.path.join(workdir, "gradio-uploads")
        environment = space_server.server_environment([f"GRADIO_TEMP_DIR={uploads}"])
        with space_server.served(checkpoint, workdir, repo=args.repo, environment=environment) as (url, server):
            left = scored_uploads_left(space_server.connect(url, server), workdir, uploads, args.scored)
            start = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
                codes = list(pool.map(lambda number: upload(url, body, number), range(args.files)))
            seconds = time.monotonic() - start
            after_files, after_bytes = folder_bytes(uploads)
            time.sleep(args.later)
            later_files, later_bytes = folder_bytes(uploads)
    stored = sum(code == 200 for code in codes)
    refused = {code: codes.count(code) for code in sorted(set(codes)) if code != 200}
    print(f"app: {os.path.abspath(args.repo)}")
    print(f"{args.scored} Batch requests through gradio_client left {left} of their uploads in the upload folder")
    print(f"one client sent {args.files} uploads of {args.mib:g} MiB in {seconds:.1f} s ({args.parallel} at once)")
    print(f"stored: {stored}; refused: {sum(refused.values())} {refused or ''}".rstrip())
    print(f"upload folder right after: {after_files} files, {after_bytes / 2**20:.1f} MiB")
    print(f"upload folder {args.later:g} s later: {later_files} files, {later_bytes / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
