"""Causal LMs behind inference servers (vLLM, SGLang, TGI, llama.cpp's llama-server).

    transport  the servers' addresses, the API key, requests with a deadline, bounds and retries
    _http      transport's HTTP: an httpx client whose sockets keep each request's deadline, and stop at once
    kinds      what each kind of server reports, and how it gives log-probabilities
    model      a causal LM on a server, as the engine and the token policies see a model

The package imports none of them, so that importing one does not load the others."""
