"""The fuzz targets of a served model's answers (bart_score.models.served.kinds), one for each kind of server: what it
reports to the probes, its tokenizer endpoint, and its answer to a request for a pair's log-probabilities, each
through the real connection (bart_score.models.served._transport) to a server on 127.0.0.1 that answers what the input
says.

An input is each endpoint's answer: a status, and a body that is the kind's own valid answer (as the tests' inference
server gives it), that answer with up to three of its values made hostile (numbers of hundreds or thousands of digits,
NaN, the API key among a terminal's escapes, long texts and lists, values of another type), any JSON value, or bytes
that are not JSON or nest 100,000 deep. The call must end in log-probabilities (numbers not above 0, one per scored
token) or in an error of the family; and whatever it says, or reports, holds neither the API key nor a control
character."""

from __future__ import annotations

import copy
import http.server
import json
import re
import threading
from typing import Any

from hypothesis import strategies as st

from support.fuzzing import Target, register

KEY = "sk-fuzz-5d1c0b7e"
HOSTILE_TEXT = f"{KEY}\x1b[2J\x07\r\nsignature: ckpt:x|dirs:forged\u2028"
# The pair every input is asked for: its prefix, then its scored tokens; token 2 is the tokenizer's special one.
PREFIX, LABELS = (0, 5), (6, 7)
SEQUENCE = [*PREFIX, *LABELS]
_UNSHOWN = re.compile("[\x00-\x1f\x7f\u2028\u2029]")


def _openai_models(entry: dict[str, Any]) -> dict[str, Any]:
    return {"object": "list", "data": [entry]}


# Each kind's endpoints, with a valid answer of its (the shapes of support/inference_server.py).
VALID: dict[str, dict[tuple[str, str], Any]] = {
    "vllm": {
        ("GET", "/version"): {"version": "0.11.0"},
        ("GET", "/v1/models"): _openai_models({"id": "m", "root": "org/m", "parent": None, "max_model_len": 1024}),
        ("POST", "/tokenize"): {"count": 2, "tokens": [1, 3], "max_model_len": 1024},
        ("POST", "/v1/completions"): {
            "choices": [
                {
                    "index": 0,
                    "prompt_token_ids": SEQUENCE,
                    "prompt_logprobs": [
                        None,
                        {"5": {"logprob": -1.0}},
                        {"6": {"logprob": -2.0}},
                        {"7": {"logprob": -0.5}},
                    ],
                }
            ]
        },
    },
    "sglang": {
        ("GET", "/get_model_info"): {"model_path": "org/m", "tokenizer_path": "org/m", "is_generation": True},
        ("GET", "/v1/models"): _openai_models({"id": "m", "root": "org/m", "max_model_len": 1024}),
        ("POST", "/generate"): [
            {
                "meta_info": {
                    "input_token_logprobs": [[None, 0, None], [-1.0, 5, None], [-2.0, 6, None], [-0.5, 7, None]]
                }
            }
        ],
    },
    "tgi": {
        ("GET", "/info"): {"model_id": "org/m", "max_input_tokens": 1023, "max_total_tokens": 1024, "version": "3.3.6"},
        ("POST", "/tokenize"): [{"id": 0, "text": ""}, {"id": 1, "text": "a"}, {"id": 3, "text": "b"}],
        ("POST", "/generate"): {
            "details": {
                "prefill": [
                    {"id": 0, "logprob": None},
                    {"id": 5, "logprob": -1.0},
                    {"id": 6, "logprob": -2.0},
                    {"id": 7, "logprob": -0.5},
                ]
            }
        },
    },
    "llama.cpp": {
        ("GET", "/props"): {
            "default_generation_settings": {"n_ctx": 1024},
            "model_path": "/m.gguf",
            "build_info": "b1",
        },
        ("GET", "/v1/models"): _openai_models({"id": "m", "aliases": [], "meta": {"n_vocab": 50, "size": 4}}),
        ("POST", "/tokenize"): {"tokens": [1, 3]},
        ("POST", "/completion"): {
            "tokens": [6, 7, 2],
            "completion_probabilities": [
                {"id": 6, "logprob": -2.0, "top_logprobs": [{"id": 6, "logprob": -2.0}]},
                {"id": 7, "logprob": -0.5, "top_logprobs": [{"id": 7, "logprob": -0.5}]},
                {"id": 2, "logprob": -0.1, "top_logprobs": [{"id": 2, "logprob": -0.1}]},
            ],
        },
    },
}

_HOSTILE_VALUES = st.sampled_from(
    [
        10**300,
        -(10**300),
        -(10**4000),
        float("nan"),
        float("inf"),
        float("-inf"),
        -1e300,
        -0.0,
        0.5,
        True,
        None,
        "",
        HOSTILE_TEXT,
        [],
        {},
        [[[[[[-1.0]]]]]],
        {"id": HOSTILE_TEXT},
    ]
)
_HOSTILE_VALUES = st.one_of(
    _HOSTILE_VALUES, st.sampled_from([100_000, 2_000]).map(lambda n: "x" * n if n > 2_000 else list(range(n)))
)
# Bodies that are not JSON, or nest deeper than any answer (as a function of their depth, so that no strategy's repr
# holds them).
_RAW_BODIES = st.one_of(
    st.sampled_from([b"", b"not JSON", b'{"data": [', b"1" * 5_000]),
    st.sampled_from([2_000, 100_000]).map(lambda depth: b"[" * depth + b"]" * depth),
)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The place of every value within `value` (keys and indices from the top; itself too)."""
    places = [at]
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        places += _paths(child, (*at, key))
    return places


def _with_values(valid: Any, changes: list[tuple[int, Any]]) -> Any:
    """`valid` with the values at some places (each chosen by an index into _paths) replaced."""
    value = copy.deepcopy(valid)
    for index, replacement in changes:
        places = _paths(value)
        place = places[index % len(places)]
        if not place:
            value = copy.deepcopy(replacement)
            continue
        holder = value
        for key in place[:-1]:
            holder = holder[key]
        holder[place[-1]] = copy.deepcopy(replacement)  # never a value shared with another place, or itself
    return value


def _json_value() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))

    def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3))

    return st.recursive(scalars, containers, max_leaves=8)


def _changed(answer: tuple[int, Any], change: tuple[str, Any]) -> tuple[int, Any]:
    """An endpoint's (status, value) with one change: its status, its body (bytes), one of its values, or the whole."""
    status, value = answer
    what, made = change
    if what == "status":
        return made, value
    if what == "value":
        return status, _with_values(value, [made]) if not isinstance(value, bytes) else value
    return status, made


def _answers(kind: str) -> st.SearchStrategy[dict[tuple[str, str], tuple[int, bytes]]]:
    """Each endpoint's valid answer, with up to four changes, each to one endpoint's status, body or values."""
    endpoints = list(VALID[kind])
    change = st.one_of(
        st.tuples(st.just("status"), st.sampled_from([400, 401, 404, 429, 500])),
        st.tuples(st.just("body"), _RAW_BODIES),
        st.tuples(st.just("body"), _json_value()),
        st.tuples(st.just("value"), st.tuples(st.integers(0, 1 << 16), st.one_of(_HOSTILE_VALUES, _json_value()))),
    )

    def made(changes: list[tuple[int, tuple[str, Any]]]) -> dict[tuple[str, str], tuple[int, bytes]]:
        answers: dict[tuple[str, str], tuple[int, Any]] = {
            endpoint: (200, VALID[kind][endpoint]) for endpoint in endpoints
        }
        for index, one in changes:
            endpoint = endpoints[index % len(endpoints)]
            answers[endpoint] = _changed(answers[endpoint], one)
        return {
            endpoint: (status, value if isinstance(value, bytes) else json.dumps(value).encode())
            for endpoint, (status, value) in answers.items()
        }

    return st.lists(st.tuples(st.integers(0, 7), change), max_size=4).map(made)


class _CannedServer:
    """An HTTP server on 127.0.0.1, started once, that answers each endpoint what `answers` says (404 elsewhere)."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], tuple[int, bytes]] = {}
        canned = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def _answer(self, method: str) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, data = canned.answers.get((method, self.path), (404, b'{"error": "not found"}'))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]


_SERVER: list[_CannedServer] = []


def _canned_server() -> _CannedServer:
    if not _SERVER:
        _SERVER.append(_CannedServer())
    return _SERVER[0]


def _decode(ids: Any) -> str:
    return "".join(chr(ord("a") + token % 26) for token in ids)


def _scored(kind: str) -> Any:
    def run(answers: dict[tuple[str, str], tuple[int, bytes]]) -> list[list[float]]:
        from bart_score.errors import BARTScoreError
        from bart_score.models.served._answers import PROBE_TEXT, TokenFacts, printable
        from bart_score.models.served._transport import Connection, ServerAddress
        from bart_score.models.served.kinds import KINDS

        server = _canned_server()
        server.answers = answers
        url = f"http://127.0.0.1:{server.port}"
        address = ServerAddress(kind, url, "http", "127.0.0.1", server.port, "")
        connection = Connection(address, key=KEY, timeout=5.0, retries=0)
        facts = TokenFacts(_decode, frozenset({2}), (0,), plain=1, vocabulary=50)
        server_kind = KINDS[kind](connection)
        try:
            report = server_kind.report = server_kind.probe(None)
            for text in (report.model, report.version or ""):
                assert KEY not in printable(text, connection) and not _UNSHOWN.search(printable(text, connection))
            server_kind.facts = facts
            server_kind.tokenize(PROBE_TEXT)
            return server_kind.log_probs(PREFIX, [(0, LABELS)])
        except BARTScoreError as error:
            said = str(error)
            assert KEY not in said and not _UNSHOWN.search(said), said
            raise

    return run


def _check_scored(answers: Any, values: Any) -> None:
    assert isinstance(values, list) and len(values) == 1 and len(values[0]) == len(LABELS), values
    assert all(isinstance(value, float) and value <= 0.0 for value in values[0]), values


def _valid_with(kind: str, **bodies: bytes) -> dict[tuple[str, str], tuple[int, bytes]]:
    """The kind's valid answers, the endpoints named by their paths (without "/", "_" for "/") answering `bodies`."""
    answers = {endpoint: (200, json.dumps(value).encode()) for endpoint, value in VALID[kind].items()}
    for endpoint in answers:
        name = endpoint[1].strip("/").replace("/", "_")
        if name in bodies:
            answers[endpoint] = (200, bodies[name])
    return answers


_DEEP = b"[" * 100_000 + b"]" * 100_000
# Inputs that broke the targets before they were fixed: JSON 100,000 deep in a probe's answer (a RecursionError),
# a version that is not a string, llama-server's aliases that are not a list, a log-probability too large for a float.
FIXED = {
    "vllm": (_valid_with("vllm", version=_DEEP), _valid_with("vllm", version=b'{"version": ["0.11"]}')),
    "sglang": (_valid_with("sglang", get_model_info=_DEEP),),
    "tgi": (_valid_with("tgi", info=_DEEP),),
    "llama.cpp": (
        _valid_with("llama.cpp", props=_DEEP),
        _valid_with("llama.cpp", v1_models=b'{"data": [{"id": "m", "aliases": 5}]}'),
        _valid_with(
            "llama.cpp",
            completion=b'{"tokens": [6, 7], "completion_probabilities": [{"id": 6, "logprob": -1%s}]}' % (b"0" * 4000),
        ),
    ),
}

for _kind in VALID:
    register(
        Target(
            name=f"served-{_kind}",
            inputs=lambda thorough, kind=_kind: _answers(kind),
            run=_scored(_kind),
            check=_check_scored,
            fixed=FIXED[_kind],
            steered=False,
        )
    )
