"""Causal LMs behind inference servers, of the kinds bart_score.models.served.kinds registers.

    _transport  the servers' addresses, the API key, requests with a deadline, bounds and retries
    _http       _transport's HTTP: an httpx client whose sockets keep each request's deadline, and stop at once
    kinds       the registry of the kinds of server: each kind's detection, report, payload and parse
    _answers    what the servers answer, as every kind reads and checks it
    _server     a server asked what it serves, and the requests that score a condition's pairs on it
    scorer      ServedScorer: a served causal LM's scorer, planned as the local engine is

The package imports none of them, so that importing one does not load the others."""
