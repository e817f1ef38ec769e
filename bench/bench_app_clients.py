#!/usr/bin/env python
"""How the Space names a client, and what a bad setting prints, for one checkout (--repo) of the app.

- IPv6: `--addresses` addresses of one /64 (one host's usual share) send a request each; it prints how many clients
  the per-client limits see among them.
- A forwarded address that is not an IP address: requests from a trusted proxy (10.0.0.0/8), each forwarding
  another made-up name, pass through uvicorn's own rewrite; it prints how many clients the limits see, or that they
  are refused.
- A trusted range of 0.0.0.0/0: what the log says while the server starts.
- A bad setting: `python app.py` with BARTSCORE_APP_MAX_CHARS=5k; its exit status and how many lines it printed.

    python bench/bench_app_clients.py
    git archive <commit> | tar -x -C /tmp/before && python bench/bench_app_clients.py --repo /tmp/before
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap

import _setup  # noqa: F401
import space_server

# Run in a child process inside the checkout: the module that names clients moved (uploads.py, then clients.py).
CLIENTS = textwrap.dedent(
    """
    import asyncio, ipaddress, logging, sys
    sys.path.insert(0, {repo!r})
    try:
        from space import clients as names
    except ImportError:
        from space import uploads as names
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    def scope(peer, forwarded=None):
        headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
        return {{"type": "http", "method": "GET", "path": "/", "client": (peer, 5000), "headers": headers}}

    network = ipaddress.ip_network("2001:db8:1:2::/64")
    peers = [str(network[number * 2**40 + 1]) for number in range({addresses})]
    keys = {{names.client_of(scope(peer)) for peer in peers}}
    print(f"{{len(peers)}} addresses of one /64: {{len(keys)}} client(s) for the limits")

    trusted = names.trusted_proxies("10.0.0.0/8")
    seen = []

    async def app(scope, receive, send):
        seen.append(names.client_of(scope, trusted))

    rewrite = ProxyHeadersMiddleware(app, trusted_hosts="10.0.0.0/8")
    for number in range({addresses}):
        asyncio.run(rewrite(scope("10.0.0.1", f"made-up-name-{{number}}"), None, None))
    refused = sum(key is None for key in seen)
    print(
        f"{{len(seen)}} requests forwarding made-up names: {{len(set(seen) - {{None}})}} client(s) for the limits, "
        f"{{refused}} refused"
    )

    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stdout)
    print("trusting 0.0.0.0/0 while the server starts logs:")
    with names.uvicorn_trusting(names.trusted_proxies("0.0.0.0/0")):
        pass
    print("(end of the log)")
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--addresses", type=int, default=1000)
    parser.add_argument("--repo", default=space_server.REPO, help="the checkout whose app is measured (default: this)")
    args = parser.parse_args()
    repo = os.path.abspath(args.repo)
    print(f"app: {repo}")
    with tempfile.TemporaryDirectory(prefix="bartscore-clients-") as workdir:
        script = CLIENTS.format(repo=repo, addresses=args.addresses)
        subprocess.run([sys.executable, "-c", script], cwd=workdir, check=True)
        environment = space_server.server_environment(["BARTSCORE_APP_MAX_CHARS=5k", f"PYTHONPATH={repo}"])
        finished = subprocess.run(
            [sys.executable, os.path.join(repo, "app.py")], env=environment, cwd=workdir, capture_output=True, text=True
        )
    lines = finished.stderr.splitlines()
    print(f"python app.py with BARTSCORE_APP_MAX_CHARS=5k: exit status {finished.returncode}, {len(lines)} line(s)")
    print(f"  last line: {lines[-1] if lines else ''}")


if __name__ == "__main__":
    main()
