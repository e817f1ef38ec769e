#!/usr/bin/env python
"""Time and peak memory of the command line against a hostile inference server, at the most concurrency, for this
checkout and, with --before, another one side by side.

The server (tests/support/hostile_server.py) answers the probes as the tests' vLLM does, and every scoring request
with: `flood`, 250 MiB of `[[],[],...]` (issue 43's probe); `fill`, the costliest answer this checkout's bound lets
through (a string of ASCII letters and one character beyond U+FFFF, which decoded take 4 bytes each); or `drip`, a
byte every 0.1 s. 64 conditions are scored with --concurrency 32 (MAX_CONCURRENCY), --request-timeout 2 and
--request-retries 0, each command under `/usr/bin/time -v`, `prlimit --as` (--cap-gib) and `timeout` (--timeout); the
figures printed are its wall time, its peak resident memory, its exit status and the lines it wrote to stderr.

    python bench/bench_served_hostile.py [--before /path/to/an/older/checkout] [--cap-gib 4] [--timeout 120]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

from _setup import REPO
from support.hostile_server import HostileProxy, drip, fill, flood
from support.inference_server import InferenceServer
from support.models import build_tiny, prebuilt

KEY = "sk-Qz7Wv9Lp2Rt5Ny8Kd4Hm"


def run(checkout, proxy, checkpoint, folder, cap_gib, timeout):
    sources, outputs = os.path.join(folder, "sources.txt"), os.path.join(folder, "outputs.txt")
    with open(sources, "w", encoding="utf-8") as handle:
        handle.writelines(f"Condition number {n} says the cat sat on mat {n}.\n" for n in range(64))
    with open(outputs, "w", encoding="utf-8") as handle:
        handle.writelines(f"A cat sat, {n}.\n" for n in range(64))
    command = [
        *("/usr/bin/time", "-v", "prlimit", f"--as={cap_gib << 30}", "timeout", str(timeout)),
        *(sys.executable, os.path.join(checkout, "bartscore.py"), "score", "-m", f"vllm+{proxy.url}/v1"),
        *("--served-tokenizer", checkpoint, "-s", sources, "-t", outputs, "-d", "faithfulness", "-q"),
        *("--concurrency", "32", "--request-timeout", "2", "--request-retries", "0"),
    ]
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "BARTSCORE_SERVER_API_KEY": KEY}
    completed = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=folder)
    said, _, usage = completed.stderr.rpartition("\tCommand being timed:")  # time -v's report comes last
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", usage).group(1)) / 1024
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", usage).group(1)
    seconds = sum(float(part) * 60**power for power, part in enumerate(reversed(wall.split(":"))))
    lines = [line for line in said.splitlines() if line.strip() and not line.startswith("Command ")]  # time's own
    return completed.returncode, seconds, peak, lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="an older checkout to measure beside this one")
    parser.add_argument("--cap-gib", type=int, default=4, help="the address-space limit of each command (GiB)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds before a command is killed")
    args = parser.parse_args()
    checkouts = {"after": REPO, **({"before": os.path.abspath(args.before)} if args.before else {})}
    with tempfile.TemporaryDirectory(prefix="bench-served-hostile-") as folder:
        checkpoint = prebuilt(os.path.join(folder, "opt"), build_tiny, family="opt")
        with InferenceServer("vllm", checkpoint) as upstream:
            for hostile in (flood, fill, drip):
                for name, checkout in sorted(checkouts.items(), reverse=True):
                    with HostileProxy(upstream.url.removesuffix("/v1"), "/v1/completions", hostile) as proxy:
                        status, seconds, peak, lines = run(
                            checkout, proxy, checkpoint, folder, args.cap_gib, args.timeout
                        )
                    shown = "key shown" if any(KEY[:8] in line for line in lines) else "key not shown"
                    last = lines[-1][:200] if lines else ""
                    print(
                        f"{hostile.__name__:5} {name:6}: exit {status}, {seconds:.1f} s, peak {peak:.0f} MiB, "
                        f"{len(lines)} lines, {shown}; {last}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
