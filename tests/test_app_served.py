"""The Space with a served model in its menu (BARTSCORE_APP_MODELS "name=vllm+URL;served_model=NAME", docs/models.md):
it starts whether or not the server answers, scores through the tests' own inference server
(support/inference_server.py, a tiny OPT behind vLLM's endpoints) as the engine does on the same model loaded here,
and names the model by its menu name wherever a visitor reads (results, signature, messages, the page's
configuration), never by the server's URL nor with its API key; a server that was down is asked again on a later
request. The browser's view of it is in test_app_browser.py."""

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from support import app_server
from support.inference_server import InferenceServer
from support.lazy import LazyModule
from support.space_inputs import CANDIDATES, REFERENCES, SOURCE
from support.space_requests import compare_arguments

import bart_score
import space.guards
import space.menu
import space.settings
from bart_score.models.served import _transport as servers
from bart_score.options import DEFAULT_REQUEST_TIMEOUT, DEFAULT_RETRIES

app = LazyModule("app")
space_handlers = LazyModule("space.handlers")

KEY = "sk-test-0123456789abcdef"  # the API key the tests' server wants, which no visitor may see
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def port():
    """A port no server listens on yet, which the module's menu entry names."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setattr(servers, "RETRY_DELAY", 0.01)
    monkeypatch.setenv(servers.API_KEY_ENV, KEY)
    monkeypatch.delenv(servers.API_KEY_FILE_ENV, raising=False)


def served_settings(url, tokenizer):
    """The menu: the served model, its tokenizer the tiny OPT's folder here (a path the server reports is its own
    machine's, never read here)."""
    return space.settings.settings_from_env(
        {
            "BARTSCORE_APP_MODELS": f"big=vllm+{url};served_model=tiny;served_tokenizer={tokenizer}",
            "BARTSCORE_APP_DEFAULT_MODEL": "big",
            "BARTSCORE_APP_DEVICE": "cpu",
        }
    )


def server_on(port, tiny_opt):
    return InferenceServer("vllm", tiny_opt[0], model=tiny_opt[1], key=KEY, port=port)


def url_of(port):
    return f"http://127.0.0.1:{port}/v1"


def assert_nothing_internal(text, port):
    """Neither the server's address (in any of the forms the library writes it) nor its API key."""
    for internal in (f"127.0.0.1:{port}", f"localhost:{port}", KEY, KEY[:12]):
        assert internal not in text, f"{internal!r} shown in {text[:300]!r}"


@pytest.fixture
def fresh_models():
    """No engine kept from another test: the served model is loaded (its server asked) by this test's request."""
    space.settings._scorers.clear()
    space.settings._unavailable.clear()
    yield
    space.settings._scorers.clear()
    space.settings._unavailable.clear()


@pytest.mark.slow
def test_a_served_model_is_in_the_menu_at_start_while_its_server_is_down(port, tiny_opt, fresh_models, caplog):
    """`BARTSCORE_APP_MODELS="big=vllm+URL;served_model=tiny" python app.py` ended with a traceback of 23 lines
    (HFValidationError: the start-up check looked the URL up in the Hugging Face cache)."""
    settings = served_settings(url_of(port), tiny_opt[0])
    assert "big" not in space.settings.check_models(settings)
    assert f"the server {url_of(port)} does not answer yet" in caplog.text  # the operator's log says so
    assert space.menu.model_kind(settings.models["big"]["checkpoint"]) == "causal language model"
    demo = app.build_demo(settings)
    menu = next(block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "model")
    assert ("big", "big") in menu.choices  # not "big (not available)"
    assert_nothing_internal(json.dumps(demo.get_config_file(), default=str), port)


@pytest.mark.slow
def test_python_app_py_starts_with_a_served_model_in_its_menu(port, tmp_path):
    """The issue's command, as an operator runs it, with the server down: the app serves its page, offering the
    served model under its menu name alone."""
    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        app_port = probe.getsockname()[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    environment = {
        **os.environ,
        "BARTSCORE_APP_MODELS": f"big=vllm+{url_of(port)};served_model=tiny",
        "BARTSCORE_APP_DEFAULT_MODEL": "big",
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(app_port),
        "PYTHONPATH": root,
    }
    with open(tmp_path / "app.log", "w+") as log:
        process = subprocess.Popen(
            [sys.executable, os.path.join(root, "app.py")],
            env=environment,
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            config = None
            deadline = time.monotonic() + 600  # the start is waited for by readiness; this only ends a hung one
            while config is None and process.poll() is None and time.monotonic() < deadline:
                try:
                    config = httpx.get(f"http://127.0.0.1:{app_port}/config", timeout=60).text
                except httpx.TransportError:
                    time.sleep(0.5)
            log.seek(0)
            output = log.read()  # what the app printed while it started and served
        finally:
            process.terminate()
            process.wait(timeout=60)
    assert config is not None, f"app.py did not serve its page (exit status {process.returncode}):\n{output}"
    assert "Traceback" not in output and "does not answer yet" in output
    assert '["big","big"]' in config  # offered under its menu name, not marked "(not available)"
    assert_nothing_internal(config, port)


@pytest.fixture(scope="module")
def served_url(port, tiny_opt):
    """The Space with the served model first in its menu, its server not started."""
    with app_server.serving(served_settings(url_of(port), tiny_opt[0])) as url:
        yield url


@pytest.fixture(scope="module")
def served_client(served_url):
    from gradio_client import Client

    return Client(served_url, analytics_enabled=False, verbose=False)


def compare(client, *candidates, source=SOURCE, references=""):
    boxes = list(candidates) + [""] * (6 - len(candidates))
    return client.predict(
        "big",
        list(bart_score.DIRECTIONS),
        "mean",
        "none",
        "",
        "encoder",
        source,
        references,
        *boxes,
        api_name="/compare",
    )


@pytest.mark.slow
def test_a_server_down_at_first_use_is_asked_again_and_scores_as_the_engine(
    served_client, port, tiny_opt, fresh_models
):
    """A served model whose server was down at its first use stayed "not available" after the server started; and
    its failures showed visitors the server's URL ("http://127.0.0.1:…/v1/completions failed 4 times …")."""
    from gradio_client.exceptions import AppError

    for _ in range(2):  # refused each time, never remembered as unavailable
        with pytest.raises(AppError) as refused:
            compare(served_client, *CANDIDATES[:2])
        assert "The model 'big' runs on an inference server, which cannot score this request now" in str(refused.value)
        assert_nothing_internal(str(refused.value), port)
    with server_on(port, tiny_opt) as server:
        verdict, rescaled, raw, chart, heatmap, signature = compare(
            served_client, *CANDIDATES[:2], references="\n".join(REFERENCES)
        )
        server.faults = ["503"] * 1000  # every attempt of the next request fails, retries included
        with pytest.raises(AppError) as failed:  # texts not scored yet: the engine asks the server for them
            compare(served_client, "A library will be built.", "The depot closes.")
    local = bart_score.BARTScorer(checkpoint=tiny_opt[0], device="cpu")
    expected = local.score_directions(
        CANDIDATES[:2], sources=[SOURCE] * 2, references=[REFERENCES] * 2, directions=list(bart_score.DIRECTIONS)
    )
    assert raw["headers"] == ["candidate", "faithfulness", "precision", "recall", "F"]
    for row, _ in enumerate(CANDIDATES[:2]):
        for column, direction in enumerate(bart_score.DIRECTIONS, start=1):
            assert float(raw["data"][row][column]) == pytest.approx(expected[direction][row], abs=TOLERANCE)
    assert signature.startswith("ckpt:big|") and "served:vllm" in signature
    assert "The model 'big' runs on an inference server" in str(failed.value)
    for shown in (verdict, json.dumps(rescaled), json.dumps(raw), chart, heatmap, signature, str(failed.value)):
        assert_nothing_internal(shown, port)


@pytest.mark.slow
def test_the_page_says_a_servers_failure_by_the_menu_name(port, tiny_opt, fresh_models, caplog):
    """The page's entry, the status line and the field it marks, with a server that wants another key (its answer
    quotes the key it was sent) and one that answers wrongly."""
    import asyncio

    settings = served_settings(url_of(port), tiny_opt[0])
    handlers = space_handlers.CompareHandlers(settings)
    inputs = compare_arguments(SOURCE, "", CANDIDATES[:2], model="big", directions=["faithfulness"])
    with InferenceServer("vllm", tiny_opt[0], model=tiny_opt[1], key="another-key", port=port):
        refused = asyncio.run(handlers.page(*inputs))
    with server_on(port, tiny_opt) as server:
        server.faults = ["malformed"]
        wrong = asyncio.run(handlers.page(*inputs))
    for outputs in (refused, wrong):
        status = outputs[8]
        assert "The model 'big' runs on an inference server, which cannot score this request now" in status
        assert_nothing_internal(status, port)
    assert KEY not in caplog.text  # the operator's log has the server's words, the key blanked out


def test_a_served_model_holds_the_shared_slot_a_bounded_time_unless_its_entry_says_otherwise():
    """A visitor's request holds the scoring slot while its server answers: the Space bounds a served model's requests
    (SERVED_MODEL_BOUNDS) below the library's defaults, an entry's own request_timeout, request_retries and
    concurrency are read as the command line reads them, and a local model's entry gets none of them."""
    from bart_score.options import EngineOptions

    library = EngineOptions(checkpoint="vllm+http://127.0.0.1:9/v1")
    settings = space.settings.settings_from_env(
        {
            "BARTSCORE_APP_MODELS": "big=vllm+http://127.0.0.1:9/v1;served_model=tiny,"
            "own=sglang+http://127.0.0.1:9;request_timeout=2.5;request_retries=0;concurrency=2,"
            "local=vanilla"
        }
    )
    big, own, local = (settings.models[name] for name in ("big", "own", "local"))
    attempts = big["request_retries"] + 1
    assert big["request_timeout"] * attempts <= 60
    assert big["request_timeout"] * attempts < DEFAULT_REQUEST_TIMEOUT * (DEFAULT_RETRIES + 1)
    assert library.request_timeout is None  # the library's default stays its own
    assert (own["request_timeout"], own["request_retries"], own["concurrency"]) == (2.5, 0, 2)
    assert not {"request_timeout", "request_retries", "concurrency"} & set(local)
    with pytest.raises(bart_score.InputError, match="request_timeout"):
        space.settings.settings_from_env({"BARTSCORE_APP_MODELS": "big=vllm+http://127.0.0.1:9/v1;request_timeout=1e9"})
