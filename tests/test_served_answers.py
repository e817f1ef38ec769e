"""What a served model's server reports and answers, when it is hostile (issue 43): the tests' own inference server
(support/inference_server.py) made to say what a hostile one would through its rewrites.

- Strings it reports (its version, a model's name) reach no output raw: the API key blanked out, control characters
  and "|" escaped, cut to answers.MOST_REPORTED_CHARS, so that the signature always parses back.
- Values in messages are bounded: a 301-digit log-probability is shown to 6 significant digits, a long text or a
  list by its size.
- JSON nested 200,000 deep in any answer is one line naming the URL.
- A path the server reports never selects the tokenizer, and the refusal does not depend on what is at that path.
- Weights swapped under the same name and report are caught by the probe pair a score cache keeps, and the small
  drift a server's batches bring is not taken for a swap."""

import re
import shutil

import huggingface_hub
import pytest
import torch
from support.fast_subset import fast_cases
from support.fuzzing import memory_bound, time_bound
from support.inference_server import InferenceServer, TinyModel
from support.reference import causal_score
from transformers import AutoModelForCausalLM, AutoTokenizer

import bart_score
from bart_score.errors import BARTScoreError, CacheFileError, CheckpointLoadError, CheckpointNotFoundError
from bart_score.models.served import _transport as servers
from bart_score.models.served._answers import MOST_REPORTED_CHARS
from bart_score.models.served._server import PROBE_TOLERANCE
from bart_score.models.served._transport import API_KEY_ENV, API_KEY_FILE_ENV
from bart_score.scoring.score_cache import ResumableScorer
from bart_score.scoring.signature import MAX_SIGNATURE_CHARS, Signature

CONDITIONS = ["The cat sat on the mat and looked at the birds.", "A storm hit the coast on Monday."]
TARGETS = ["A cat sat.", "Storm hits coast."]
KEY = "sk-hostile-4e1d7a90c2"
# What a hostile server puts in the strings it reports: the key, a terminal's escapes (clear the screen, set the
# window's title, ring the bell), a carriage return and a line feed, a signature's line and field, a line separator.
FORGED = f"{KEY}\x1b[2J\x1b]0;owned\x07\r\nsignature: ckpt:forged|dirs:forged\u2028"
UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")  # a line feed is an output's own


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    monkeypatch.setattr(servers, "RETRY_DELAY", 0.01)
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.delenv(API_KEY_FILE_ENV, raising=False)


@pytest.fixture(autouse=True)
def bounded():
    """Each hostile case within 60 s and 3 GiB more memory, so that a regression fails instead of hanging."""
    with time_bound(60), memory_bound(3 << 30):
        yield


def serving(kind, tiny_opt, **options):
    return InferenceServer(kind, tiny_opt[0], model=tiny_opt[1], **options)


def scorer_on(server, tiny_opt, **options):
    return bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu", served_tokenizer=tiny_opt[0], **options)


def reference_scores(model, conditions=CONDITIONS, targets=TARGETS):
    return [causal_score(model.model, model.tokenizer, c, t) for c, t in zip(conditions, targets)]


# ---------------------------------------------------------------------------------------------------------------------
# Strings the server reports


def with_version(kind, version):
    """A rewrite of the answer that reports the server's version, for each kind."""
    field = {"vllm": "version", "tgi": "version", "llama.cpp": "build_info"}[kind]
    return lambda value: {**value, field: version}


VERSION_PATHS = {"vllm": ("GET", "/version"), "tgi": ("GET", "/info"), "llama.cpp": ("GET", "/props")}


@pytest.mark.parametrize("kind", fast_cases(sorted(VERSION_PATHS), ["tgi"]))
def test_strings_the_server_reports_reach_no_output_raw(kind, tiny_opt, tmp_path, monkeypatch, capfd):
    """A version of 200,000 characters (within the transport's bound on a probe's answer), and a model's name holding
    the API key, a terminal's escapes, a forged signature line and field: the signature parses back, within its
    bound; nothing the command line, the library or the cache writes holds the key or an escape; the model is still
    scored (its name sent as the server gave it)."""
    monkeypatch.setenv(API_KEY_ENV, KEY)
    sources, predictions, output = tmp_path / "sources.txt", tmp_path / "predictions.txt", tmp_path / "scores.tsv"
    sources.write_text("\n".join(CONDITIONS) + "\n")
    predictions.write_text("\n".join(TARGETS) + "\n")
    cache = tmp_path / "cache.jsonl"
    name = f"tiny|{FORGED}"
    with serving(kind, tiny_opt, key=KEY, name=name, root=name if kind == "tgi" else None) as server:
        server.rewrites[VERSION_PATHS[kind]] = with_version(kind, FORGED + "9" * 200_000)
        command = ["score", "-m", server.checkpoint, "--served-tokenizer", tiny_opt[0], "-s", str(sources)]
        status = bart_score.main([*command, "-t", str(predictions), "-d", "faithfulness", "-q", "-o", str(output)])
        scorer = scorer_on(server, tiny_opt)
        result = scorer.score_directions(TARGETS, sources=CONDITIONS)
        ResumableScorer(scorer, str(cache)).score(CONDITIONS, TARGETS)
    said = capfd.readouterr()
    assert status == 0
    assert result["faithfulness"] == pytest.approx(reference_scores(tiny_opt[1]), abs=1e-5)
    signature = result["signature"]
    assert Signature.parse(signature).format() == signature and len(signature) < MAX_SIGNATURE_CHARS // 8
    assert Signature.parse(signature).checkpoint == scorer.model_label
    assert "|dirs:forged" not in signature and "|signature:" not in signature
    written = [said.out, said.err, output.read_text(), cache.read_text(), signature, scorer.model_identity]
    for text in written:
        assert KEY not in text and not UNSHOWN.search(text), text[:500]
    assert "***" in scorer.model_label and "\\x1b[2J" in scorer.model_label
    version = next(field for field in scorer.signature_fields() if field.startswith("served:"))
    assert len(version) < 8 * MOST_REPORTED_CHARS and version.endswith("...")
    lines = (said.out + said.err).splitlines()
    assert [line.startswith("signature: ") for line in lines].count(True) == 1


def test_the_names_a_server_lists_are_shown_escaped_and_few(tiny_opt):
    def many_models(value):
        card = value["data"][0]
        return {**value, "data": [card, *({**card, "id": f"{FORGED}{i}"} for i in range(500))]}

    with serving("vllm", tiny_opt) as server:
        server.rewrites[("GET", "/v1/models")] = many_models
        with pytest.raises(BARTScoreError) as raised:
            scorer_on(server, tiny_opt)
    message = str(raised.value)
    assert "serves 501 models" in message and "and 493 more" in message
    assert not UNSHOWN.search(message) and len(message) < 4_000


@pytest.mark.slow
def test_llama_server_s_one_model_with_aliases_is_its_only_model(tiny_opt):
    def aliased(value):
        value["data"][0]["aliases"] = ["tiny-alias", "another"]
        return value

    with serving("llama.cpp", tiny_opt) as server:
        server.rewrites[("GET", "/v1/models")] = aliased
        scores = scorer_on(server, tiny_opt).score(CONDITIONS, TARGETS)
        by_alias = scorer_on(server, tiny_opt, served_model="another")
    assert scores == pytest.approx(reference_scores(tiny_opt[1]), abs=1e-5)
    assert by_alias.model_label.endswith("#another")


# ---------------------------------------------------------------------------------------------------------------------
# Values in messages


def vllm_last_log_prob(value):
    """A rewrite of vLLM's scoring answer: its first pair's last scored token's log-probability `value`."""

    def rewrite(answer):
        choice = answer["choices"][0]
        choice["prompt_logprobs"][-1][str(choice["prompt_token_ids"][-1])]["logprob"] = value
        return answer

    return rewrite


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (-(10**300), r"the log-probability -1e\+300: the probability underflowed"),
        (10**300, r"the log-probability 1e\+300, above 0"),
        (-(10**4000), r"the log-probability an integer of about 4,00\d digits"),
        (f"{KEY} {'-' * 100_000}", r"the log-probability '\*\*\* -+\.\.\.', which is not a number"),
        (list(range(2_000)), r"the log-probability a list of 2,000 items, which is not a number"),
        ([[[[-1.0]]]], r"the log-probability \[a list of 1 items\], which is not a number"),
    ],
    ids=["301 digits", "positive 301 digits", "4,001 digits", "a long text", "a long list", "nested lists"],
)
def test_a_value_the_server_gives_is_shown_bounded(value, said, tiny_opt, monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, KEY)
    with serving("vllm", tiny_opt, key=KEY) as server:
        scorer = scorer_on(server, tiny_opt)
        server.rewrites[("POST", "/v1/completions")] = vllm_last_log_prob(value)
        with pytest.raises(BARTScoreError, match=said) as raised:
            scorer.score(CONDITIONS[:1], TARGETS[:1])
    message = str(raised.value)
    assert len(message) < 2 * MOST_REPORTED_CHARS + 200 and KEY not in message and not re.search(r"\d{20}", message)


def test_a_token_id_the_server_gives_is_shown_bounded(tiny_opt, monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, KEY)

    def hostile_ids(answer):
        answer["choices"][0]["prompt_token_ids"][-1] = FORGED * 2_000
        return answer

    with serving("vllm", tiny_opt, key=KEY) as server:
        scorer = scorer_on(server, tiny_opt)
        server.rewrites[("POST", "/v1/completions")] = hostile_ids
        with pytest.raises(BARTScoreError, match=r"pair 0: the server's token \d+ of the pair is '\*\*\*") as raised:
            scorer.score(CONDITIONS[:1], TARGETS[:1])
    message = str(raised.value)
    assert KEY not in message and not UNSHOWN.search(message) and len(message) < 2 * MOST_REPORTED_CHARS + 200


# ---------------------------------------------------------------------------------------------------------------------
# JSON nested deep


DEEP = b"[" * 100_000 + b"]" * 100_000
ANSWERS = [
    ("vllm", "GET", "/version"),
    ("vllm", "GET", "/v1/models"),
    ("vllm", "POST", "/tokenize"),
    ("vllm", "POST", "/v1/completions"),
    ("sglang", "GET", "/get_model_info"),
    ("sglang", "POST", "/generate"),
    ("tgi", "GET", "/info"),
    ("tgi", "POST", "/tokenize"),
    ("llama.cpp", "GET", "/props"),
    ("llama.cpp", "POST", "/completion"),
]


@pytest.mark.parametrize(("kind", "method", "path"), ANSWERS)
def test_json_nested_deep_in_any_answer_is_one_line_naming_the_server(kind, method, path, tiny_opt):
    """Each kind's probes, tokenizer endpoint and scoring endpoint answering [[[...]]] 100,000 deep (a RecursionError
    without the URL before)."""
    with serving(kind, tiny_opt) as server:
        server.rewrites[(method, path)] = lambda value: DEEP
        with pytest.raises(BARTScoreError) as raised:
            scorer_on(server, tiny_opt).score(CONDITIONS[:1], TARGETS[:1])
    message = str(raised.value)
    assert f"127.0.0.1:{server.url.split(':')[2].split('/')[0]}" in message and "\n" not in message


# ---------------------------------------------------------------------------------------------------------------------
# The tokenizer


@pytest.mark.parametrize("kind", ["vllm", "sglang", "tgi", "llama.cpp"])
def test_a_path_the_server_reports_never_selects_the_tokenizer(kind, tiny_opt, tmp_path):
    """The tiny model's own folder (which would load) and a path where nothing is: the same refusal, which does not
    say whether anything is there."""
    messages = []
    for root in (tiny_opt[0], str(tmp_path / "nothing-here"), f"../{tmp_path.name}/nothing-here"):
        with serving(kind, tiny_opt, root=root) as server, pytest.raises(CheckpointLoadError) as raised:
            bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu")
        messages.append(str(raised.value).replace(server.url, "URL").replace(root, "ROOT"))
        assert raised.value.option == "served_tokenizer"
    assert messages[0] == messages[1] == messages[2]
    assert "which is not a Hub id: a path a server reports is of its own machine, and is never read here" in messages[0]


@pytest.mark.slow
def test_a_hub_id_the_server_reports_is_read_from_the_hugging_face_cache_alone(
    tiny_opt, tiny_checkpoint, tmp_path, monkeypatch
):
    """The Hub id's snapshot in the cache is read, not a folder of the same name here (a BART, which would be refused
    as a sequence-to-sequence model); a Hub id not in the cache is refused, saying so."""
    cache = tmp_path / "hub"
    revision = "0" * 40
    shutil.copytree(tiny_opt[0], cache / "models--tests--tiny-opt" / "snapshots" / revision)
    (cache / "models--tests--tiny-opt" / "refs").mkdir()
    (cache / "models--tests--tiny-opt" / "refs" / "main").write_text(revision)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    shutil.copytree(tiny_checkpoint, tmp_path / "here" / "tests" / "tiny-opt")
    monkeypatch.chdir(tmp_path / "here")
    with serving("vllm", tiny_opt, root="tests/tiny-opt") as server:
        scores = bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu").score(CONDITIONS, TARGETS)
    assert scores == pytest.approx(reference_scores(tiny_opt[1]), abs=1e-5)
    with (
        serving("vllm", tiny_opt, root="tests/not-cached") as server,
        pytest.raises(CheckpointNotFoundError, match=r"the Hub id 'tests/not-cached', not in .*; run `hf download"),
    ):
        bart_score.BARTScorer(checkpoint=server.checkpoint, device="cpu")


# ---------------------------------------------------------------------------------------------------------------------
# Weights swapped under the same name


@pytest.fixture(scope="module")
def other_weights(tiny_opt, tmp_path_factory):
    """The tiny OPT's architecture and tokenizer with other weights (drawn with a weight scale of 0.1), as a server
    that swaps its weights under the same name and root would serve them."""
    folder = tmp_path_factory.mktemp("other-opt")
    model = AutoModelForCausalLM.from_pretrained(tiny_opt[0], trust_remote_code=False)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.1)
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(tiny_opt[0], trust_remote_code=False).save_pretrained(folder)
    return TinyModel(str(folder))


def drifted(shift):
    """A rewrite of vLLM's scoring answer: every log-probability moved by `shift` towards 0 (a server's drift)."""

    def rewrite(answer):
        for choice in answer["choices"]:
            for entry in choice["prompt_logprobs"][1:]:
                for logprob in entry.values():
                    logprob["logprob"] = min(logprob["logprob"] + shift, 0.0)
        return answer

    return rewrite


@pytest.mark.slow
def test_weights_swapped_under_the_same_name_do_not_get_the_cached_scores(tiny_opt, other_weights, tmp_path):
    cache = str(tmp_path / "cache.jsonl")
    with serving("vllm", tiny_opt) as server:
        first = ResumableScorer(scorer_on(server, tiny_opt), cache).score(CONDITIONS, TARGETS)
    with serving("vllm", tiny_opt) as server:  # the same weights again, with the drift of a server's batches
        server.rewrites[("POST", "/v1/completions")] = drifted(PROBE_TOLERANCE / 2)
        resumed = ResumableScorer(scorer_on(server, tiny_opt), cache)
        assert resumed.score(CONDITIONS, TARGETS) == first and resumed.scored_pairs == 0
    with InferenceServer("vllm", tiny_opt[0], model=other_weights, root=tiny_opt[0]) as server:  # the same report
        swapped = scorer_on(server, tiny_opt)
        with pytest.raises(CacheFileError, match="the server's weights changed under the same name") as raised:
            ResumableScorer(swapped, cache).score(CONDITIONS, TARGETS)
        fresh = swapped.score(CONDITIONS, TARGETS)
    assert "\n" not in str(raised.value) and str(raised.value).count("per token (more than 0.1)") == 1
    assert fresh == pytest.approx(reference_scores(other_weights), abs=1e-5)
    assert max(abs(a - b) for a, b in zip(fresh, first)) > 0.5  # what the cache would have given instead


@pytest.mark.slow
def test_a_model_held_across_runs_is_probed_again_by_each_run(tiny_opt, other_weights, tmp_path):
    """A scorer kept while its server swaps the weights (a shared engine, a long-lived process): the next run's cache
    asks the probe again."""
    cache = str(tmp_path / "cache.jsonl")
    with serving("vllm", tiny_opt) as server:
        scorer = scorer_on(server, tiny_opt)
        ResumableScorer(scorer, cache).score(CONDITIONS, TARGETS)
        server.tiny = other_weights
        with pytest.raises(CacheFileError, match="the server's weights changed under the same name"):
            ResumableScorer(scorer, cache).score(CONDITIONS, TARGETS)
