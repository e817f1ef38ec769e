"""What the Space guards against (space/guards.py and the places the Space uses it): models that cannot be loaded,
special tokens and lone surrogates in what users type, values of the wrong type sent to the API, markup in messages,
formulas in the CSV download, limits checked while an upload is read, uploads that would fill the disk
(space/uploads.py), scoring computations that a cancelled job would leave running (space/jobs.py), Gradio's own routes
and bodies read whole (space/routes.py), and clients named by made-up addresses (space/clients.py)."""

import asyncio
import csv
import json
import os
import re
import shutil
import threading
import time

import pandas as pd
import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from gradio_client import handle_file
from gradio_client.exceptions import AppError
from gradio_client.utils import Status
from support.app_server import MAX_CHARS, event_functions
from support.lazy import LazyModule

import bart_score
import bart_score.inputs
import space.batch
import space.clients
import space.form
import space.guards
import space.jobs
import space.routes
import space.settings
import space.uploads
from bart_score.messages import FileName, Mention

# Gradio and what imports it, imported by the first test that uses them (support/lazy.py).
gr = LazyModule("gradio")
app = LazyModule("app")
space_feedback = LazyModule("space.feedback")


def event_function(demo, api_name):
    return event_functions(demo)[api_name]


SETTINGS = ["tiny", ["faithfulness", "precision"], "mean", "none", "", "encoder"]
FAITHFULNESS = ["tiny", ["faithfulness"], "mean", "none", "", "encoder"]


def compare_arguments(source="A council voted for a new library.", references="A library.", candidates=("a", "b")):
    return [*SETTINGS, source, references, *candidates, *[""] * (space.form.MAX_CANDIDATES - len(candidates))]


# ---------------------------------------------------------------------------------------------------------------------
# Models that cannot be loaded


def tiny_copy(tiny_checkpoint, folder, damage=None):
    """A copy of the tiny checkpoint, optionally damaged by `damage(folder)`."""
    shutil.copytree(tiny_checkpoint, folder)
    if damage:
        damage(str(folder))
    return str(folder)


def truncate_weights(folder):
    path = os.path.join(folder, "model.safetensors")
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:
        handle.write(data[: len(data) // 2])


def link_tokenizer_to_dev_zero(folder):
    os.remove(os.path.join(folder, "tokenizer.json"))
    os.symlink("/dev/zero", os.path.join(folder, "tokenizer.json"))


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda folder: os.remove(os.path.join(folder, "config.json")), r"without a config\.json"),
        (lambda folder: os.remove(os.path.join(folder, "model.safetensors")), r"has no weights file"),
        (lambda folder: os.remove(os.path.join(folder, "tokenizer.json")), r"has 0 ordinary vocabulary entries"),
        (link_tokenizer_to_dev_zero, r"^tokenizer\.json of the checkpoint '.*' is not a regular file"),
    ],
    ids=["config", "weights", "vocabulary", "device"],
)
def test_a_menu_folder_without_its_files_is_found_at_start(tiny_checkpoint, tmp_path, damage, problem):
    folder = tiny_copy(tiny_checkpoint, tmp_path / "model", damage)
    assert re.search(problem, space.guards.checkpoint_problem(folder, {"reachable": False}))


def test_menu_models_that_cannot_be_loaded_are_marked_at_start_and_fail_fast(
    tiny_checkpoint, tmp_path, empty_hf_cache, monkeypatch
):
    settings = space.settings.settings_from_env(
        {
            "BARTSCORE_APP_MODELS": f"tiny={tiny_checkpoint},gone={tmp_path / 'gone'}",
            "BARTSCORE_APP_DEFAULT_MODEL": "cnn",  # a Hub model that is not in the (empty) cache, offline
            "BARTSCORE_APP_DEVICE": "cpu",
        }
    )
    demo = app.build_demo(settings)
    (menu,) = [block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "model"]
    assert menu.choices == [
        ("vanilla (not available)", "vanilla"),
        ("cnn (not available)", "cnn"),
        ("tiny", "tiny"),
        ("gone (not available)", "gone"),
    ]
    assert menu.value == "tiny"  # the page opens on a model that can be loaded
    monkeypatch.setattr(bart_score, "BARTScorer", lambda options: pytest.fail("an unavailable model was loaded"))
    compare = event_function(demo, "compare")
    for model in ("cnn", "gone"):
        with pytest.raises(gr.Error, match=f"The model '{model}' is not available on this server"):
            compare(model, *compare_arguments()[1:])


def test_a_model_outside_the_cache_offline_is_named_by_its_hub_id(empty_hf_cache):
    problem = space.guards.checkpoint_problem("vanilla", {"reachable": False})
    assert problem.startswith("facebook/bart-large is not in the Hugging Face cache") and "HF_HUB_OFFLINE" in problem


def settings_with(model, checkpoint):
    return space.settings.settings_from_env(
        {"BARTSCORE_APP_MODELS": f"{model}={checkpoint}", "BARTSCORE_APP_DEVICE": "cpu"}
    )


def test_damaged_weights_are_reported_by_menu_name_without_a_path_and_remembered(
    tiny_checkpoint, tmp_path, monkeypatch
):
    folder = tiny_copy(tiny_checkpoint, tmp_path / "broken", truncate_weights)
    settings = settings_with("broken", folder)
    message = "The model 'broken' cannot be loaded: its files on this server are damaged or incomplete"
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        space.settings.menu_scorer(settings, "broken")
    assert str(tmp_path) not in str(raised.value)
    monkeypatch.setattr(bart_score, "BARTScorer", lambda options: pytest.fail("a failed model was loaded again"))
    with pytest.raises(ValueError, match=re.escape(message)):
        space.settings.menu_scorer(settings, "broken")


@pytest.mark.parametrize(
    "error, reason, remembered",
    [
        (MemoryError(), "the server does not have enough free memory to load it now", False),
        (PermissionError(13, "Permission denied", "/srv/models/x/model.safetensors"), "its files cannot be read", True),
        (
            ValueError("'/srv/models/x' is a 't5' model"),
            "its files on this server are not a checkpoint that BARTScore can use",
            True,
        ),
        (KeyError("encoder.layers.0"), "it failed to load (the server's log says why)", True),
    ],
)
def test_each_kind_of_load_failure_says_what_is_wrong(tmp_path, monkeypatch, error, reason, remembered):
    def failing(options):
        raise error

    checkpoint = str(tmp_path / f"model-{type(error).__name__}")
    settings = settings_with("mine", checkpoint)
    monkeypatch.setattr(bart_score, "BARTScorer", failing)
    with pytest.raises(ValueError, match=re.escape(f"The model 'mine' cannot be loaded: {reason}")) as raised:
        space.settings.menu_scorer(settings, "mine")
    assert "/srv" not in str(raised.value) and str(tmp_path) not in str(raised.value)
    assert (space.settings._scorer_key(settings, "mine") in space.settings._unavailable) == remembered


def test_the_signature_names_a_server_folder_by_its_menu_name(tiny_checkpoint):
    fields = "dirs:faithfulness|agg:mean|nrefs:-|prompt:none|policy:bart|maxlen:1024"
    shown = space.guards.public_signature(f"ckpt:{tiny_checkpoint}|{fields}", "tiny", tiny_checkpoint)
    assert shown == f"ckpt:tiny|{fields}"
    hub = "ckpt:facebook/bart-large-cnn|dirs:faithfulness"
    assert space.guards.public_signature(hub, "cnn", "cnn") == hub  # a Hub id is no server path, and matches the CLI


def test_running_out_of_memory_while_scoring_is_a_message():
    def out_of_memory():
        raise MemoryError()

    outcome = space_feedback.attempt(out_of_memory)
    assert outcome.problem.startswith("The server ran out of memory for this request")


# ---------------------------------------------------------------------------------------------------------------------
# What users type


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(candidates=("fine", "<pad><pad><pad>")), "Candidate 2 contains <pad>, one of the model's special tokens"),
        (dict(source="A source </s> with an end"), "The source contains </s>"),
        (dict(references="ok\nA <s> reference"), "Reference 2 contains <s>"),
        (dict(candidates=("<unk> first", "b")), "Candidate 1 contains <unk>"),
    ],
)
def test_special_tokens_in_compare_are_refused_naming_the_field_and_token(client, arguments, message):
    with pytest.raises(AppError, match=re.escape(space_feedback.as_text(message))):
        client.predict(*compare_arguments(**arguments), api_name="/compare")


@pytest.mark.slow
def test_special_tokens_in_a_custom_prompt_phrase_or_an_upload_are_refused(client, tmp_path):
    arguments = compare_arguments()
    arguments[3:5] = ["custom", "In other <mask> words"]
    with pytest.raises(AppError, match=re.escape(space_feedback.as_text("The custom prompt phrase contains <mask>"))):
        client.predict(*arguments, api_name="/compare")
    path = tmp_path / "outputs.csv"
    path.write_text("source,reference,good,bad\ns,r,fine,fine\ns,r,fine,<pad> <pad>\n", encoding="utf-8")
    with pytest.raises(AppError, match=re.escape(space_feedback.as_text("Row 2, column 'bad' contains <pad>"))):
        client.predict(*SETTINGS, handle_file(str(path)), api_name="/score_file")


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(source="A source \ud800"), r"The source holds '\\ud800' at character 9, a lone surrogate"),
        (dict(references="ok\nr\udc80"), r"Reference 2 holds '\\udc80'"),
        (dict(candidates=("a", "b\udfff")), r"Candidate 2 holds '\\udfff'"),
    ],
)
def test_lone_surrogates_in_compare_are_named(app_settings, arguments, message):
    compare = event_function(app.build_demo(app_settings), "compare")
    with pytest.raises(gr.Error) as raised:
        compare(*compare_arguments(**arguments))
    assert re.search(message, raised.value.message)


@pytest.mark.slow
def test_markup_in_what_users_send_is_shown_as_text(client, tmp_path):
    path = tmp_path / "markup.csv"
    markup = '<img src=x onerror="alert(1)"><a href="https://example.com">click</a>'
    path.write_text(f"{markup},other\nx,y\n", encoding="utf-8")
    with pytest.raises(AppError) as raised:
        client.predict(*SETTINGS, handle_file(str(path)), api_name="/score_file")
    message = str(raised.value)
    assert "&lt;img src=x onerror=" in message and "&lt;a href=" in message
    assert "<img" not in message and "<a " not in message


# ---------------------------------------------------------------------------------------------------------------------
# The CSV download


def test_spreadsheet_formulas_are_neutralised_and_numbers_kept():
    cells = ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=x", "\r=x", "-5", "+3.25", "1e-3", "text", "a=b", ""]
    assert [space.guards.spreadsheet_cell(c) for c in cells] == [
        "'=1+1",
        "'+cmd|' /C calc'!A0",
        "'-2+3",
        "'@SUM(A1)",
        "'\t=x",
        "'\r=x",
        "-5",
        "+3.25",
        "1e-3",
        "text",
        "a=b",
        "",
    ]
    assert space.guards.spreadsheet_cell(-2.5) == -2.5


@pytest.mark.slow
def test_the_downloaded_csv_carries_no_formulas_and_keeps_scores_numeric(client, tmp_path):
    path = tmp_path / "outputs.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "source", "reference", '=HYPERLINK("http://x")', "@sys"])
        writer.writerow(["=cmd|' /C calc'!A0", "The cat sat.", "A cat.", "A cat sat.", "Cats."])
        writer.writerow(["-7", "The dog ran.", "A dog.", "A dog ran.", "Dogs."])
    _, _, _, rows, download, _, _ = client.predict(
        *["tiny", ["faithfulness"], "mean", "none", "", "encoder"], handle_file(str(path)), api_name="/score_file"
    )
    with open(download, newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    header, *lines = table
    assert header == ["row", "id", '\'=HYPERLINK("http://x")/faithfulness', "'@sys/faithfulness"]
    assert [line[1] for line in lines] == ["'=cmd|' /C calc'!A0", "-7"]
    for line in [header, *lines]:
        assert not any(cell.startswith(("=", "+", "@")) for cell in line)
    scores = pd.read_csv(download)
    assert [pd.api.types.is_float_dtype(scores[column]) for column in scores.columns[2:]] == [True, True]
    first_system = [row[4] for row in rows["data"] if row[2] == '=HYPERLINK("http://x")']
    assert [float(line[2]) for line in lines] == pytest.approx(first_system, abs=1e-9)
    assert all(float(line[2]) < 0 for line in lines)  # negative scores stay numbers, not neutralised text


def test_a_long_upload_is_refused_while_reading(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("source,sys\n" + "s,o\n" * 100_000, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape("rows.csv has more than 10 rows; the limit is 10")):
        space.batch.parse_upload(str(path), max_rows=10, max_chars=MAX_CHARS)


# ---------------------------------------------------------------------------------------------------------------------
# No server path in any message


@pytest.mark.parametrize(
    "error, shown",
    [
        (  # bart_score's: a file by its name alone, said from the data (FileName), the message otherwise as it is
            bart_score.InputError(FileName("/srv/data/x.json"), " is empty; see https://hf.co/a/b and/or 1/2/3"),
            "x.json is empty; see https://hf.co/a/b and/or 1/2/3",
        ),
        (  # and an option or input by the label of the field that gives it
            bart_score.InputError("direction 'recall' needs ", Mention("references"), ", which were not given"),
            "direction 'recall' needs References, which were not given",
        ),
        (
            FileNotFoundError(2, "No such file or directory", "/tmp/gradio/abc/file.csv"),
            "The server could not read or write a file for this request (No such file or directory); the server's "
            "log says more",
        ),
        (  # bart_score's errors about the server's own files are the server's to mend
            bart_score.CheckpointLoadError("cannot read /srv/models/x/config.json"),
            "The server could not read or write a file for this request; the server's log says more",
        ),
        (  # another library's words are not read: a general sentence, the details in the log
            ValueError("no file at /srv/data/x.json"),
            "The request failed on the server (ValueError); the server's log says why",
        ),
        (KeyError("/srv/a/b"), "The request failed on the server (KeyError); the server's log says why"),
        (MemoryError(), "The server ran out of memory for this request; send fewer or shorter texts"),
    ],
)
def test_messages_to_browser_users_never_show_a_server_path(error, shown):
    assert space.guards.public_message(error) == shown


def test_each_tab_names_the_inputs_as_it_gives_them():
    """The Compare tab's boxes, the Batch tab's file columns and its rescaling choices; the file an upload error
    names by the name the user uploaded."""
    error = bart_score.InputError("needs ", Mention("sources"), "; or ", Mention("rescale", "corpus"))
    assert space.guards.public_message(error) == "needs Source; or rescale='corpus'"  # Compare has no rescaling field
    batch = space.guards.public_message(error, space.batch.BATCH_PAGE)
    assert batch == 'needs the file\'s source column; or Rescaled scores too: "yes, reference points from this file"'


@pytest.mark.parametrize(
    "error",
    [
        FileNotFoundError(2, "No such file or directory", "/srv/secret/file"),
        IndexError("list index out of range"),
        ValueError("cannot read /srv/secret/file"),
    ],
)
def test_every_error_in_a_handler_becomes_a_message_without_a_path(error):
    def failing():
        raise error

    outcome = space_feedback.attempt(failing)
    assert outcome.problem and "/srv" not in outcome.problem
    with pytest.raises(gr.Error) as raised:
        space_feedback.answer(outcome)
    assert raised.value.message and "/srv" not in raised.value.message
    assert raised.value.print_exception is False


# ---------------------------------------------------------------------------------------------------------------------
# The saved baseline: missing, malformed or made for other settings, told without its path or the command


@pytest.fixture(scope="module")
def score_file(app_settings):
    return event_function(app.build_demo(app_settings), "score_file")


def documents_file(tmp_path):
    path = tmp_path / "documents.csv"
    path.write_text("source,reference,A,B\nthe cat sat,the dog,a,b\nthe rain fell,a road,c,d\n", encoding="utf-8")
    return str(path)


def baseline_path(scorer):
    from bart_score.baselines import files as baseline_files

    return baseline_files.default_baseline_path(baseline_files.baseline_settings(scorer, "none"))


BASELINE_TEXTS = ["the cat sat", "the rain fell", "a road", "the dog"]


def saved_baseline(model, scorer, folder, **options):
    """A valid baseline made with `model`, saved where the tiny model's (`scorer`) is looked for."""
    from bart_score.baselines import files as baseline_files
    from bart_score.baselines.build import build_baseline

    corpus_file = folder / "texts.txt"
    corpus_file.write_text("\n".join(BASELINE_TEXTS) + "\n", encoding="utf-8")
    document = build_baseline(model, texts=BASELINE_TEXTS, corpus_file=str(corpus_file), **options)
    baseline_files.write_baseline(document, baseline_path(scorer))


def other_models_baseline(copier, scorer, folder):
    saved_baseline(copier, scorer, folder)


def only_faithfulness_baseline(copier, scorer, folder):
    """The tiny model's own baseline, without points for precision."""
    saved_baseline(scorer, scorer, folder, directions=["faithfulness"])


def write_text(scorer, text):
    os.makedirs(os.path.dirname(baseline_path(scorer)), exist_ok=True)
    with open(baseline_path(scorer), "w", encoding="utf-8") as handle:
        handle.write(text)


@pytest.mark.parametrize(
    "make, problem",
    [
        (None, "there is no saved baseline for it with these settings"),
        (lambda copier, scorer, folder: write_text(scorer, "{not json"), "its saved baseline file is damaged"),
        (
            lambda copier, scorer, folder: write_text(scorer, '{"format": "other"}'),
            "its saved baseline file is damaged",
        ),
        (other_models_baseline, "its saved baseline was made with other settings"),
        (only_faithfulness_baseline, "its saved baseline has no reference points for precision"),
    ],
)
def test_a_saved_baseline_that_cannot_be_used_is_explained_without_paths(
    score_file, scorer, copier, tmp_path, monkeypatch, make, problem
):
    from bart_score.baselines import files as baseline_files

    folder = tmp_path / "server-only-baselines"
    monkeypatch.setenv(baseline_files.BASELINE_FOLDER_ENV, str(folder))
    if make:
        make(copier, scorer, tmp_path)
    with pytest.raises(gr.Error) as raised:
        score_file(*SETTINGS, documents_file(tmp_path), "baseline")
    message = raised.value.message
    assert message.startswith(f"Rescaling with the saved baseline of model 'tiny' is not possible: {problem}")
    assert "reference points from this file" in message
    for server_only in (str(tmp_path), "/", "bartscore baseline", scorer.checkpoint):
        assert server_only not in message


# ---------------------------------------------------------------------------------------------------------------------
# Values of the wrong type sent to the API


WRONG_TEXTS = [["a", "b"], {"text": "a"}, 3, 2.5, True]


@pytest.mark.slow
@pytest.mark.parametrize("value", WRONG_TEXTS, ids=lambda value: type(value).__name__)
@pytest.mark.parametrize(
    "position, label", [(6, "Source"), (7, "References"), (8, "Candidate 1"), (13, "Candidate 6"), (4, None)]
)
def test_api_texts_of_another_type_are_refused_naming_the_field(client, position, label, value):
    arguments = compare_arguments()
    if label is None:  # the custom prompt phrase
        arguments[3], label = "custom", "Custom prompt phrase"
    arguments[position] = value
    with pytest.raises(AppError) as raised:
        client.predict(*arguments, api_name="/compare")
    described = bart_score.inputs.describe(value)
    assert str(raised.value) == f"{label} must be text (a string), got {described}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "position, value, message",
    [
        (0, ["tiny"], "Model must be one of its choices, given as a string, got a list"),
        (1, "faithfulness", "Directions must be a list of its choices, each a string, got a str"),
        (1, {"faithfulness": True}, "Directions must be a list of its choices, each a string, got a dict"),
        (1, ["faithfulness", 3], "Directions must be a list of its choices, each a string, got an int"),
        (1, None, "Directions must be a list of its choices, each a string, got None"),
        (2, 1, "Several references must be one of its choices, given as a string, got an int"),
        (3, ["none"], "Prompt must be one of its choices, given as a string, got a list"),
        (5, {"side": "encoder"}, "Prompt side must be one of its choices, given as a string, got a dict"),
    ],
)
def test_api_choices_of_another_type_are_refused_naming_the_field(client, position, value, message):
    arguments = compare_arguments()
    arguments[position] = value
    with pytest.raises(AppError, match=f"^{re.escape(message)}$"):
        client.predict(*arguments, api_name="/compare")


@pytest.mark.slow
def test_api_batch_settings_of_another_type_are_refused(client, tmp_path):
    path = tmp_path / "outputs.csv"
    path.write_text("source,sys\nThe cat sat.,A cat.\n", encoding="utf-8")
    with pytest.raises(
        AppError, match=r"^Rescaled scores too must be one of its choices, given as a string, got a list$"
    ):
        client.predict(*SETTINGS, handle_file(str(path)), ["none"], api_name="/score_file")
    with pytest.raises(AppError, match=r"^Custom prompt phrase must be text"):
        client.predict(*SETTINGS[:3], "custom", ["x"], "encoder", handle_file(str(path)), api_name="/score_file")


# ---------------------------------------------------------------------------------------------------------------------
# One scoring computation at a time, cancelled jobs included


@pytest.mark.slow
def test_submit_and_cancel_rounds_never_run_two_scoring_computations_at_once(client, app_settings, monkeypatch):
    """Each round submits a job and cancels it once the queue has given it the slot (which frees the slot at once).
    The engine's computation is made slow, and counted while it runs: at most one runs at any moment, a cancelled
    job that had not started never starts, and the last job still gets its own result."""

    def submit(first_candidate):
        return client.submit(*compare_arguments(candidates=(first_candidate, "b")), api_name="/compare")

    submit("warm up").result()  # the model is loaded (the server runs in this process: the same engine object)
    engine = space.settings.menu_scorer(app_settings, "tiny")
    score, lock = engine.score, threading.Lock()
    running, peak, started = 0, 0, []

    def slow_score(conditions, targets, *args, **kwargs):
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            started.append(targets[0])  # the first candidate: faithfulness's pairs come first
        try:
            time.sleep(4)
            return score(conditions, targets, *args, **kwargs)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(engine, "score", slow_score)
    for number in range(3):
        job = submit(f"cancelled {number}")
        deadline = time.monotonic() + 60
        while job.status().code not in (Status.PROCESSING, Status.PROGRESS):
            assert time.monotonic() < deadline, "the job was never given the slot"
            time.sleep(0.02)
        time.sleep(0.3)
        job.cancel()
    verdict, _, raw, *_ = submit("kept").result(timeout=120)
    deadline = time.monotonic() + 60
    while running:
        assert time.monotonic() < deadline, "a computation went on"
        time.sleep(0.05)
    assert peak == 1
    assert started == ["cancelled 0", "kept"]  # the jobs cancelled while they waited never computed
    assert [row[0] for row in raw["data"][:2]] == ["Candidate 1", "Candidate 2"] and "Candidate" in verdict


def test_work_waits_for_the_computation_before_it_and_a_cancelled_wait_never_runs():
    order, gate = [], threading.Event()

    def work(name):
        order.append(f"{name} starts")
        if name == "first":
            gate.wait(10)
        order.append(f"{name} ends")
        return name

    async def scenario():
        first = asyncio.ensure_future(space.jobs.run_exclusively(work, "first"))
        await asyncio.sleep(0.1)
        second = asyncio.ensure_future(space.jobs.run_exclusively(work, "second"))
        third = asyncio.ensure_future(space.jobs.run_exclusively(work, "third"))
        await asyncio.sleep(0.1)
        first.cancel()  # running: it ends its computation, and nothing starts beside it
        second.cancel()  # waiting: it never starts
        await asyncio.sleep(0.1)
        assert order == ["first starts"]
        gate.set()
        return await third

    assert asyncio.run(scenario()) == "third"
    assert order == ["first starts", "first ends", "third starts", "third ends"]


def test_a_job_cancelled_by_its_event_id_never_runs_or_stops_at_its_models_next_call():
    import torch

    layer = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    space.jobs.stoppable(layer)
    space.jobs.stoppable(layer)  # once is enough
    calls, started = [], threading.Event()

    def work():
        for _ in range(500):
            calls.append(layer(torch.zeros(1, 2)))
            started.set()
            time.sleep(0.01)
        return "finished"

    async def scenario():
        space.jobs.cancel("cancelled-before-it-ran")
        with pytest.raises(space.jobs.JobCancelled):
            await space.jobs.run_exclusively(pytest.fail, "never run", job="cancelled-before-it-ran")
        running = asyncio.ensure_future(space.jobs.run_exclusively(work, job="running"))
        await asyncio.to_thread(started.wait, 30)
        space.jobs.cancel("running")
        with pytest.raises(space.jobs.JobCancelled):
            await running
        ran = len(calls)
        return ran, await space.jobs.run_exclusively(work, job="not cancelled")

    ran, result = asyncio.run(scenario())
    assert ran < 10 and result == "finished"  # the cancelled computation stopped within a call or two
    assert space.jobs.was_cancelled("running") and not space.jobs.was_cancelled("not cancelled")
    layer(torch.zeros(1, 2))  # outside a job the model runs as ever


def batch_probe_file(path, rows=300, systems=4):
    """A file whose scoring takes many model calls: distinct sources and long outputs."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", *(f"system_{number}" for number in range(systems))])
        for row in range(rows):
            outputs = [
                f"It rose {row} {number}. " + "The market was high and the city grew. " * 8 for number in range(systems)
            ]
            writer.writerow([f"Report {row}: the city report says the market was high.", *outputs])
    return str(path)


@pytest.mark.slow
def test_a_job_cancelled_right_after_submit_stops(client, app_settings, tmp_path):
    """gradio_client's cancel, sent right after submit, did not reach the server: the job ran to its end."""
    from gradio_client.utils import Status

    compare = [*FAITHFULNESS, "A source.", "", "a", "b", *[""] * 4]
    client.predict(*compare, api_name="/compare")  # the model is loaded (the same engine object)
    engine = space.settings.menu_scorer(app_settings, "tiny")
    calls = []

    def slow(module, inputs):
        calls.append(time.monotonic())
        time.sleep(0.02)

    hook = engine.model.get_decoder().register_forward_pre_hook(slow)
    upload = handle_file(batch_probe_file(tmp_path / "outputs.csv"))
    try:
        client.predict(*compare, api_name="/compare")
        compare_calls = len(calls)
        client.predict(*FAITHFULNESS, upload, api_name="/score_file")
        whole = len(calls) - compare_calls
        calls.clear()
        job = client.submit(*FAITHFULNESS, upload, api_name="/score_file")
        job.cancel()
        # answered once the scoring thread is free: after the cancelled job's computation stopped
        verdict, *_ = client.predict(*compare, api_name="/compare")
        ran = len(calls) - compare_calls  # the cancelled job's model calls
    finally:
        hook.remove()
    assert whole >= 100 and ran < whole / 10, (whole, ran)
    assert job.status().code in (Status.CANCELLED, Status.FINISHED) and "Candidate" in verdict


# ---------------------------------------------------------------------------------------------------------------------
# Uploads kept within limits


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def stored_file(folder, name, size):
    """A file as Gradio stores an upload: in a folder of its own."""
    path = folder / f"sha-{name}" / name
    path.parent.mkdir(parents=True)
    path.write_bytes(b"x" * size)
    return str(path)


def upload(ledger, client, path, size):
    assert ledger.admit(client, size) is None
    ledger.settle(client, size, [path])


def test_a_client_keeps_only_its_newest_uploads_and_older_ones_are_deleted(tmp_path):
    ledger = space.uploads.UploadLedger(per_client=2, bytes_per_client=100, overall=10, bytes_overall=1000)
    paths = [stored_file(tmp_path, f"f{i}.csv", 10) for i in range(3)]
    for path in paths:
        upload(ledger, "1.2.3.4", path, 10)
    assert list(ledger.stored()) == paths[1:]
    assert not os.path.exists(paths[0]) and not os.path.exists(os.path.dirname(paths[0]))
    other = stored_file(tmp_path, "other.csv", 10)
    upload(ledger, "5.6.7.8", other, 10)  # another client's uploads are its own
    assert list(ledger.stored()) == [*paths[1:], other]


def test_an_upload_past_a_clients_bytes_is_refused_before_it_is_read_or_makes_room(tmp_path):
    ledger = space.uploads.UploadLedger(per_client=5, bytes_per_client=100, overall=10, bytes_overall=1000)
    assert ledger.admit("a", 101).status == 413
    assert ledger.admit("a", None).status == 411
    old = stored_file(tmp_path, "old.csv", 60)
    upload(ledger, "a", old, 60)
    assert ledger.admit("a", 60) is None  # its oldest upload is deleted to make room
    assert not os.path.exists(old)
    refusal = ledger.admit("a", 60)  # the first request is still under way: its bytes are reserved
    assert refusal.status == 429 and "under way" in refusal.message
    ledger.settle("a", 60, [])
    assert ledger.admit("a", 60) is None


def test_uploads_past_the_servers_limits_are_refused_and_old_ones_expire(tmp_path):
    clock = Clock()
    ledger = space.uploads.UploadLedger(
        per_client=2, bytes_per_client=100, overall=3, bytes_overall=1000, seconds=60, clock=clock
    )
    paths = [stored_file(tmp_path, f"f{i}.csv", 10) for i in range(3)]
    for number, path in enumerate(paths):
        upload(ledger, f"client {number}", path, 10)
    refusal = ledger.admit("client 4", 10)
    assert refusal.status == 503 and "try again in a few minutes" in refusal.message
    clock.now += 61
    assert ledger.admit("client 4", 10) is None  # the expired uploads were deleted first
    assert ledger.stored() == {} and not any(os.path.exists(path) for path in paths)
    ledger.settle("client 4", 10, [])
    big = space.uploads.UploadLedger(per_client=5, bytes_per_client=100, overall=50, bytes_overall=150)
    upload(big, "a", stored_file(tmp_path, "a.csv", 90), 90)
    assert big.admit("b", 90).status == 503


def test_an_upload_two_clients_sent_is_kept_while_either_holds_it(tmp_path):
    ledger = space.uploads.UploadLedger(per_client=1, bytes_per_client=100, overall=10, bytes_overall=1000)
    shared = stored_file(tmp_path, "same.csv", 10)
    upload(ledger, "a", shared, 10)
    upload(ledger, "b", shared, 10)
    upload(ledger, "a", stored_file(tmp_path, "newer.csv", 10), 10)  # a's only slot: its older upload goes
    assert os.path.exists(shared)  # b holds it still
    upload(ledger, "b", stored_file(tmp_path, "newer-b.csv", 10), 10)
    assert not os.path.exists(shared)


def request_scope(path="/gradio_api/upload", method="POST", peer="127.0.0.1", headers=()):
    return {"type": "http", "method": method, "path": path, "client": (peer, 5000), "headers": list(headers)}


def test_the_temporary_folder_has_a_total_cap_over_everything_in_it(tmp_path):
    folder = tmp_path / "gradio"
    results = stored_file(folder, "bartscore-results.csv", 900)  # not an upload: a result's download
    ledger = space.uploads.UploadLedger(per_client=5, bytes_per_client=500, overall=10, bytes_overall=1000)
    assert ledger.admit("a", 200) is None  # the ledger alone counts its uploads only
    ledger.settle("a", 200, [])
    capped = space.uploads.UploadLedger(
        per_client=5, bytes_per_client=500, overall=10, bytes_overall=1000, folder=str(folder)
    )
    assert capped.admit("a", 200).status == 503
    assert capped.admit("a", 100) is None
    os.remove(results)
    assert capped.admit("b", 400) is None


def test_an_upload_is_released_by_the_ledger_and_nothing_else_is(tmp_path):
    ledger = space.uploads.UploadLedger()
    kept, other = stored_file(tmp_path, "kept.csv", 10), stored_file(tmp_path, "other.csv", 10)
    upload(ledger, "a", kept, 10)
    ledger.release(other)  # not an upload the ledger recorded: never deleted
    ledger.release(kept)
    assert os.path.exists(other) and not os.path.exists(kept) and ledger.stored() == {}


@pytest.mark.slow
def test_an_api_requests_upload_is_deleted_when_the_request_ends(client, tmp_path, monkeypatch):
    """gradio_client sends its file with every request: kept after it, each would stay until it expired."""
    stored = []
    settle = space.uploads.SERVER_LEDGER.settle

    def recording(who, length, paths):
        stored.extend(paths)
        settle(who, length, paths)

    monkeypatch.setattr(space.uploads.SERVER_LEDGER, "settle", recording)
    scored = tmp_path / "outputs.csv"
    scored.write_text("source,sys\nThe cat sat.,A cat.\n", encoding="utf-8")
    client.predict(*FAITHFULNESS, handle_file(str(scored)), api_name="/score_file")
    refused = tmp_path / "refused.csv"
    refused.write_text("reference,sys\nThe cat sat.,A cat.\n", encoding="utf-8")  # faithfulness needs a source
    with pytest.raises(AppError, match="needs the file's source column"):
        client.predict(*FAITHFULNESS, handle_file(str(refused)), api_name="/score_file")
    assert len(stored) == 2 and not any(os.path.exists(path) for path in stored)
    assert not set(stored) & set(space.uploads.SERVER_LEDGER.stored())


def test_the_guard_sees_the_upload_route_and_reads_content_length():
    assert space.uploads.is_upload_request(request_scope())
    assert space.uploads.is_upload_request(request_scope("/space/gradio_api//upload/"))
    assert not space.uploads.is_upload_request(request_scope(method="GET"))
    assert not space.uploads.is_upload_request(request_scope("/gradio_api/queue/join"))
    assert space.uploads.content_length(request_scope(headers=[(b"content-length", b"12")])) == 12
    assert space.uploads.content_length(request_scope(headers=[(b"content-length", b"-1")])) is None


PROXIES = space.clients.trusted_proxies("10.0.0.0/8, 192.168.1.1 2001:db8::/32")


def forwarded(*values):
    return [(b"x-forwarded-for", value.encode()) for value in values]


@pytest.mark.parametrize(
    ("peer", "headers", "trusted", "client"),
    [
        # without trusted proxies the peer is the client, whatever it claims, from any address
        ("10.0.0.1", forwarded("203.0.113.7"), (), "10.0.0.1"),
        ("127.0.0.1", forwarded("203.0.113.7, 198.51.100.1"), (), "127.0.0.1"),
        ("93.184.216.34", forwarded("203.0.113.7"), PROXIES, "93.184.216.34"),
        # behind a trusted proxy: what it appended, not the first address (which the client wrote)
        ("10.0.0.1", forwarded("203.0.113.7"), PROXIES, "203.0.113.7"),
        ("10.0.0.1", forwarded("1.1.1.1, 2.2.2.2, 198.51.100.9"), PROXIES, "198.51.100.9"),
        # a chain of trusted proxies is walked from the right, over several header lines
        ("10.0.0.1", forwarded("1.1.1.1, 198.51.100.9", "192.168.1.1, 10.2.3.4"), PROXIES, "198.51.100.9"),
        ("10.0.0.1", forwarded("10.9.9.9, 10.2.3.4"), PROXIES, "10.9.9.9"),  # all trusted: the farthest
        ("10.0.0.1", [], PROXIES, "10.0.0.1"),  # the proxy's own request
        # an entry that is not an address was not written by a trusted proxy: no client is named (the request is
        # refused)
        ("10.0.0.1", forwarded("198.51.100.9, not-an-address, 10.2.3.4"), PROXIES, None),
        ("10.0.0.1", forwarded("not-an-address"), PROXIES, None),
        ("not-an-address", [], PROXIES, None),  # what uvicorn made of that entry, as the guard sees it
        ("10.0.0.1", forwarded("198.51.100.9:5000"), PROXIES, "198.51.100.9"),  # ports are not part of a client
        # an IPv6 client is its /64, which one host is commonly given whole
        ("2001:db8::1", forwarded("[2001:db8:1::5]:443, 2001:db9::7"), PROXIES, "2001:db9::/64"),
        ("2001:db9:0:1:ffff:ffff:ffff:ffff", [], (), "2001:db9:0:1::/64"),
        ("2001:db9:0:2::1", [], (), "2001:db9:0:2::/64"),
        ("::ffff:10.0.0.1", forwarded("::ffff:198.51.100.9"), PROXIES, "198.51.100.9"),  # IPv4 over IPv6 is IPv4
        ("192.168.1.2", forwarded("203.0.113.7"), PROXIES, "192.168.1.2"),  # a neighbour of a trusted proxy
    ],
)
def test_the_client_is_the_address_the_nearest_trusted_proxy_appended(peer, headers, trusted, client):
    assert space.clients.client_of(request_scope(peer=peer, headers=headers), trusted) == client


@pytest.mark.parametrize("value", ["10.0.0.0/33", "10.0.0.1/8", "proxy.internal", "10.0.0.0/8;", "::1::2"])
def test_a_trusted_proxies_setting_that_is_not_addresses_stops_the_app_naming_it(value):
    with pytest.raises(ValueError, match=r"BARTSCORE_APP_TRUSTED_PROXIES: .* is not an IP address or network"):
        space.settings.settings_from_env({"BARTSCORE_APP_TRUSTED_PROXIES": value})
    assert space.settings.settings_from_env({}).trusted_proxies == ()
    parsed = space.settings.settings_from_env({"BARTSCORE_APP_TRUSTED_PROXIES": " 10.0.0.0/8,,::1 "}).trusted_proxies
    assert [str(network) for network in parsed] == ["10.0.0.0/8", "::1/128"]


@pytest.mark.parametrize(
    ("value", "warned"),
    [
        ("0.0.0.0/0", ["0.0.0.0/0"]),
        ("10.0.0.0/7, 10.0.0.0/8", ["10.0.0.0/7"]),
        ("::/0, 2001:db8::/31, 2001:db8::/32, fd00::/8", ["::/0", "2001:db8::/31", "fd00::/8"]),
        ("127.0.0.1, 10.0.0.0/8, 2001:db8::/32", []),
    ],
)
def test_a_trusted_range_wider_than_a_slash_8_is_warned_about_at_start(monkeypatch, caplog, value, warned):
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    with space.clients.uvicorn_trusting(space.clients.trusted_proxies(value)):
        pass
    messages = [record.getMessage() for record in caplog.records if "wider than" in record.getMessage()]
    assert [re.search(r"names (\S+), wider than", message)[1] for message in messages] == warned
    assert all("BARTSCORE_APP_TRUSTED_PROXIES" in message for message in messages)


@pytest.mark.parametrize("trusted", [(), PROXIES], ids=["no proxy", "trusted proxies"])
@pytest.mark.parametrize("operator_value", [None, "*"])
def test_uvicorn_rewrites_the_client_as_the_upload_guard_reads_it(monkeypatch, trusted, operator_value):
    """uvicorn rewrites the client from X-Forwarded-For before the guard sees it; while the app starts it trusts the
    app's proxies only, and an operator's own FORWARDED_ALLOW_IPS comes back afterwards."""
    import uvicorn
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    if operator_value is None:
        monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    else:
        monkeypatch.setenv("FORWARDED_ALLOW_IPS", operator_value)
    with space.clients.uvicorn_trusting(trusted):
        allowed = uvicorn.Config(app=None).forwarded_allow_ips
    assert os.environ.get("FORWARDED_ALLOW_IPS") == operator_value
    seen = []

    async def app_behind(scope, receive, send):
        seen.append(space.clients.client_of(scope, trusted))

    middleware = ProxyHeadersMiddleware(app_behind, trusted_hosts=allowed)
    for peer, header in [
        ("127.0.0.1", "203.0.113.7"),
        ("10.0.0.1", "1.1.1.1, 198.51.100.9"),
        ("10.0.0.1", "1.1.1.1, 198.51.100.9, 10.2.3.4"),
        ("93.184.216.34", "203.0.113.7"),
    ]:
        scope = request_scope(peer=peer, headers=forwarded(header))
        asyncio.run(middleware(dict(scope), None, None))
        assert seen[-1] == space.clients.client_of(scope, trusted)


class StoringApp:
    """Gradio's upload route as the guard sees it: stores the request's body in a folder of its own and answers
    with the stored path (a JSON list)."""

    def __init__(self, folder):
        self.folder, self.count = folder, 0

    async def __call__(self, scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.count += 1
        path = self.folder / f"upload-{self.count}" / "file.csv"
        path.parent.mkdir()
        path.write_bytes(body)
        answer = f'["{path}"]'.encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": answer})


def guarded_upload(guard, peer, claimed=None, body=b"source,sys\n1,x\n"):
    """Sends one upload through the guard from `peer`, with an X-Forwarded-For of `claimed`; (status, paths)."""
    headers = [(b"content-length", str(len(body)).encode())]
    headers += forwarded(claimed) if claimed else []
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(guard(request_scope(peer=peer, headers=headers), receive, send))
    status = sent[0]["status"]
    return status, (json.loads(sent[-1]["body"]) if status == 200 else [])


@pytest.mark.parametrize(
    ("peer", "trusted", "appended"),
    [("127.0.0.1", (), ""), ("10.0.0.1", PROXIES, ", 198.51.100.1")],
    ids=["no proxy", "behind a trusted proxy"],
)
def test_made_up_forwarded_addresses_do_not_give_a_client_more_uploads(tmp_path, caplog, peer, trusted, appended):
    ledger = space.uploads.UploadLedger(per_client=2)
    guard = space.uploads.UploadGuard(StoringApp(tmp_path), ledger, trusted)
    paths = []
    for number in range(8):  # the probe: 8 uploads, each claiming another address
        status, stored = guarded_upload(guard, peer, f"203.0.113.{number}{appended}")
        assert status == 200
        paths += stored
    kept = [path for path in paths if os.path.exists(path)]
    assert kept == paths[-2:] and list(ledger.stored()) == kept
    # an ignored header is logged once, for the operator (who may have a proxy to trust)
    ignored = [record for record in caplog.records if "X-Forwarded-For, which is ignored" in record.getMessage()]
    assert len(ignored) == (0 if trusted else 1)


@pytest.mark.parametrize(
    ("trusted", "user", "other"),
    [
        ((), ("198.51.100.1", None), ("203.0.113.9", "198.51.100.1")),
        # the other client's proxy appends its real address after the one it claims
        (PROXIES, ("10.0.0.1", "198.51.100.1"), ("10.0.0.1", "198.51.100.1, 203.0.113.9")),
    ],
    ids=["direct", "behind a trusted proxy"],
)
def test_a_client_claiming_another_users_address_cannot_evict_their_upload(tmp_path, trusted, user, other):
    ledger = space.uploads.UploadLedger(per_client=2)
    guard = space.uploads.UploadGuard(StoringApp(tmp_path), ledger, trusted)
    _, [kept] = guarded_upload(guard, *user)
    for _ in range(4):
        assert guarded_upload(guard, *other)[0] == 200
    assert os.path.exists(kept)
    corpus = space.batch.parse_upload(kept, max_rows=10, max_chars=MAX_CHARS)  # the user's file is still scored
    assert corpus.systems == {"sys": ["x"]}


def post_upload(url, name, body, headers=None):
    import httpx

    return httpx.post(
        f"{url}gradio_api/upload", files=[("files", (name, body, "text/csv"))], headers=headers, timeout=60
    )


@pytest.mark.slow
def test_the_served_app_takes_no_forwarded_address_from_a_client_it_does_not_trust(app_url):
    """The probe on the server itself (uvicorn's own proxy-header rewrite included): 8 uploads from one client, each
    claiming another address, keep only its newest 2."""
    paths = []
    for number in range(8):
        response = post_upload(
            app_url,
            f"claimed-{number}.csv",
            f"source,sys\n{number},x\n".encode(),
            {"X-Forwarded-For": f"203.0.113.{number}"},
        )
        assert response.status_code == 200
        paths += response.json()
    assert [path for path in paths if os.path.exists(path)] == paths[-space.uploads.UPLOADS_PER_CLIENT :]


@pytest.mark.slow
def test_the_served_app_keeps_a_clients_newest_uploads_and_refuses_a_request_too_large(app_url, tmp_path):
    import http.client
    import urllib.parse

    kept = []
    for number in range(space.uploads.UPLOADS_PER_CLIENT + 1):
        response = post_upload(app_url, f"upload-{number}.csv", f"source,sys\n{number},x\n".encode())
        assert response.status_code == 200
        kept.extend(response.json())
    assert not os.path.exists(kept[0]) and all(os.path.exists(path) for path in kept[1:])
    address = urllib.parse.urlsplit(app_url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    connection.putrequest("POST", "/gradio_api/upload")
    connection.putheader("Content-Type", "multipart/form-data; boundary=x")
    connection.putheader("Content-Length", str(space.uploads.UPLOAD_BYTES_PER_CLIENT + 1))
    connection.endheaders()
    response = connection.getresponse()  # answered before the body is sent
    assert response.status == 413 and b"at most" in response.read()
    connection.close()


def test_an_upload_the_server_no_longer_holds_is_asked_for_again(tmp_path):
    with pytest.raises(space.form.FieldError, match=r"gone\.csv is no longer on the server; upload it again"):
        space.batch.parse_upload(str(tmp_path / "gone.csv"), max_rows=10, max_chars=MAX_CHARS)


# ---------------------------------------------------------------------------------------------------------------------
# Every route Gradio serves: bounded (its body, each client's requests) or turned off

# Every route of the served app, by method and path as Gradio declares them, and what the Space makes of it: the kind
# of limits it is served under (space/routes.py), or None when it is turned off. A route a later Gradio adds fails
# test_every_route_gradio_serves_is_bounded_or_off until it is listed here.
GRADIO_ROUTES = {
    ("GET", "/"): "page",
    ("HEAD", "/"): "page",
    ("GET", "/config"): "page",
    ("GET", "/config/"): "page",
    ("GET", "/gradio_api/info"): "page",
    ("GET", "/gradio_api/info/"): "page",
    ("GET", "/gradio_api/startup-events"): "page",
    ("GET", "/assets/{path:path}"): "files",
    ("GET", "/static/{path:path}"): "files",
    ("GET", "/favicon.ico"): "files",
    ("GET", "/theme.css"): "files",
    ("GET", "/gradio_api/theme.css"): "files",
    ("GET", "/robots.txt"): "files",
    ("POST", "/gradio_api/queue/join"): "event",
    ("POST", "/gradio_api/run/{api_name}"): "event",
    ("POST", "/gradio_api/run/{api_name}/"): "event",
    ("POST", "/gradio_api/api/{api_name}"): "event",
    ("POST", "/gradio_api/api/{api_name}/"): "event",
    ("POST", "/gradio_api/call/{api_name}"): "event",
    ("POST", "/gradio_api/call/{api_name}/"): "event",
    ("POST", "/gradio_api/call/v2/{api_name}"): "event",
    ("POST", "/gradio_api/call/v2/{api_name}/"): "event",
    ("GET", "/gradio_api/queue/data"): "stream",
    ("GET", "/gradio_api/heartbeat/{session_hash}"): "stream",
    ("GET", "/gradio_api/call/{api_name}/{event_id}"): "stream",
    ("GET", "/gradio_api/call/v2/{api_name}/{event_id}"): "stream",
    ("GET", "/gradio_api/upload_progress"): "stream",
    ("POST", "/gradio_api/cancel"): "control",
    ("POST", "/gradio_api/reset"): "control",
    ("POST", "/gradio_api/reset/"): "control",
    ("POST", "/gradio_api/upload"): "upload",
    ("GET", "/gradio_api/file={path_or_url:path}"): "download",
    ("HEAD", "/gradio_api/file={path_or_url:path}"): "download",
    # what the Space never uses
    ("POST", "/gradio_api/process_recording"): None,  # screen recordings
    ("POST", "/gradio_api/component_server"): None,  # components' server functions
    ("POST", "/gradio_api/component_server/"): None,
    ("GET", "/gradio_api/file/{path:path}"): None,
    ("GET", "/gradio_api/proxy={url_path:path}"): None,
    ("HEAD", "/gradio_api/proxy={url_path:path}"): None,
    ("GET", "/gradio_api/stream/{session_hash}/{run}/{component_id}/playlist-file"): None,
    ("GET", "/gradio_api/stream/{session_hash}/{run}/{component_id}/playlist.m3u8"): None,
    ("GET", "/gradio_api/stream/{session_hash}/{run}/{component_id}/{segment_id}.{ext}"): None,
    ("POST", "/gradio_api/stream/{event_id}"): None,
    ("POST", "/gradio_api/stream/{event_id}/close"): None,
    ("GET", "/gradio_api/queue/status"): None,
    ("GET", "/gradio_api/custom_component/{id}/{environment}/{type}/{file_name}"): None,
    ("GET", "/gradio_api/deep_link"): None,
    ("GET", "/gradio_api/dev/reload"): None,
    ("GET", "/gradio_api/app_id"): None,
    ("GET", "/gradio_api/app_id/"): None,
    ("GET", "/gradio_api/login_check"): None,
    ("GET", "/gradio_api/login_check/"): None,
    ("GET", "/gradio_api/openapi.json"): None,
    ("GET", "/openapi.json"): None,
    ("HEAD", "/openapi.json"): None,
    ("POST", "/login"): None,
    ("POST", "/login/"): None,
    ("GET", "/logout"): None,
    ("GET", "/gradio_api/user"): None,
    ("GET", "/gradio_api/user/"): None,
    ("GET", "/gradio_api/token"): None,
    ("GET", "/gradio_api/token/"): None,
    ("GET", "/gradio_api/runs"): None,  # the run history's page (the app serves without its routes)
    ("GET", "/gradio_api/runs/"): None,
    ("GET", "/gradio_api/vibe-code"): None,
    ("POST", "/gradio_api/vibe-code"): None,
    ("GET", "/gradio_api/vibe-code/"): None,
    ("POST", "/gradio_api/vibe-code/"): None,
    ("POST", "/gradio_api/vibe-edit"): None,
    ("POST", "/gradio_api/vibe-edit/"): None,
    ("POST", "/gradio_api/undo-vibe-edit"): None,
    ("POST", "/gradio_api/undo-vibe-edit/"): None,
    ("POST", "/gradio_api/vibe-starter-queries"): None,
    ("POST", "/gradio_api/vibe-starter-queries/"): None,
    ("GET", "/svelte/{path:path}"): None,  # server-side rendering's files (the app serves without it)
    ("GET", "/manifest.json"): None,  # an installable app's (pwa is off)
    ("GET", "/pwa_icon"): None,
    ("GET", "/pwa_icon/{size}"): None,
    ("GET", "/monitoring"): None,
    ("GET", "/monitoring/summary"): None,
    ("GET", "/monitoring/{key}"): None,
}


def served_routes(routes):
    """(method, path) of every route of a FastAPI app, those of its included routers too."""
    for route in routes:
        if hasattr(route, "effective_route_contexts"):  # an included router (FastAPI)
            yield from served_routes(route.effective_route_contexts())
        else:
            for method in getattr(route, "methods", None) or ["WEBSOCKET"]:
                yield method, route.path


def example_path(template):
    """A path the template matches: each parameter one segment, "a/b" for the rest of a path."""
    return re.sub(r"\{[^}:]+:path\}", "a/b", re.sub(r"\{[^}:]+\}", "x", template))


@pytest.mark.slow
def test_every_route_gradio_serves_is_bounded_or_off(app_settings):
    """The probes found Gradio's own routes unbounded: process_recording kept every recording, component_server and
    call/compare read any body whole. Each route the served app has is listed here with its kind, or as off."""
    import socket

    demo = app.build_demo(app_settings)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app.launch(demo, app_settings, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        served = set(served_routes(demo.app.routes))
    finally:
        demo.close()
    unlisted = sorted(served - set(GRADIO_ROUTES))
    assert not unlisted, f"Gradio serves routes the Space has not bounded or turned off: {unlisted}"
    gone = sorted(set(GRADIO_ROUTES) - served)
    assert not gone, f"routes listed that Gradio no longer serves: {gone}"
    limits = space.routes.kinds(MAX_CHARS)
    for (method, template), kind in GRADIO_ROUTES.items():
        assert space.routes.route_kind(method, example_path(template)) == kind, (method, template)
        if kind is not None:
            assert limits[kind].per_minute > 0 and limits[kind].body_bytes >= 0
    assert {kind for kind in GRADIO_ROUTES.values() if kind} == set(limits)


def test_a_path_no_route_serves_is_refused_before_anything_reads_it():
    for method, path in [
        ("GET", "/gradio_api/process_recording"),
        ("POST", "/gradio_api/upload/"),
        ("POST", "/gradio_api/queue/join/x"),
        ("GET", "/assets"),
        ("PUT", "/gradio_api/upload"),
        ("GET", "/gradio_api/mcp/schema"),  # a route Gradio adds when its MCP server is on
    ]:
        assert space.routes.route_kind(method, path) is None, (method, path)


class ReadingApp:
    """An application that reads a request's whole body into memory, as Gradio's routes do, and counts what it got."""

    def __init__(self):
        self.bodies = []

    async def __call__(self, scope, receive, send):
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise RuntimeError("the client went away")  # as Starlette's ClientDisconnect
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.bodies.append(len(body))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def guard_request(guard, path, *, method="POST", peer="127.0.0.1", headers=(), body=b"", chunk=65536, limit=None):
    """Sends one request through the guard, its body in chunks; (status, body, bytes the guard pulled)."""
    pulled, sent = 0, []
    chunks = [body[start : start + chunk] for start in range(0, len(body), chunk)] or [b""]

    async def receive():
        nonlocal pulled
        if pulled >= len(chunks):
            return {"type": "http.disconnect"}
        pulled += 1
        return {"type": "http.request", "body": chunks[pulled - 1], "more_body": pulled < len(chunks)}

    async def send(message):
        sent.append(message)

    scope = request_scope(path, method, peer, headers)
    asyncio.run(guard(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:]), sum(map(len, chunks[:pulled]))


def test_a_body_past_its_routes_limit_is_refused_at_once_or_as_it_arrives():
    """The probe sent call/compare 200 MB of JSON and component_server 950 MB: the guard reads at most the limit."""
    application = ReadingApp()
    limits = space.routes.kinds(MAX_CHARS)
    guard = space.routes.RouteGuard(application, limits)
    event_limit = limits["event"].body_bytes
    assert event_limit == space.routes.event_body_bytes(MAX_CHARS) < 200 * 2**20
    # a body within the limit reaches the application whole
    assert guard_request(guard, "/gradio_api/call/compare", body=b"x" * event_limit)[0] == 200
    assert application.bodies == [event_limit]
    # its Content-Length says it is too long: refused before a byte is read
    headers = [(b"content-length", str(200 * 2**20).encode())]
    status, message, pulled = guard_request(guard, "/gradio_api/call/compare", headers=headers, body=b"x" * 1000)
    assert (status, pulled) == (413, 0) and f"at most {event_limit:,} bytes".encode() in message
    # without one (chunked): refused once the limit is passed, what was read never held whole
    status, message, pulled = guard_request(guard, "/gradio_api/call/compare", body=b"x" * (8 * 2**20))
    assert status == 413 and event_limit < pulled <= event_limit + 65536
    assert application.bodies == [event_limit]  # the application never got the rest
    # a route with no body takes none; a route that is off is never run
    assert guard_request(guard, "/config", method="GET", body=b"x")[0] == 413
    status, _, pulled = guard_request(guard, "/gradio_api/component_server", body=b"x" * (8 * 2**20))
    assert (status, pulled) == (404, 0)


def test_each_client_has_a_budget_of_requests_of_each_kind_refilled_over_a_minute():
    clock = Clock()
    budgets = space.routes.ClientBudgets(clock=clock)
    limits = space.routes.RouteKind(body_bytes=0, per_minute=60)

    def request(client="1.2.3.4", kind="event"):
        refusal = budgets.admit(client, kind, limits)
        if refusal is None:
            budgets.release(client)
        return refusal

    assert [request() for _ in range(60)] == [None] * 60
    refusal = request()
    assert refusal.status == 429 and refusal.retry_after == 1 and "try again in 1 s" in refusal.message
    assert request(kind="page") is None  # each kind has its own budget
    assert request(client="5.6.7.8") is None  # and each client
    clock.now += 10  # refilled at a request a second
    assert [request() for _ in range(11)] == [None] * 10 + [request()] and request().status == 429
    clock.now += 3600  # never more than a minute's worth
    assert sum(request() is None for _ in range(100)) == 60


def test_a_client_has_a_bounded_number_of_requests_under_way():
    budgets = space.routes.ClientBudgets()
    limits = space.routes.RouteKind(body_bytes=0, per_minute=10_000)
    for _ in range(space.routes.REQUESTS_IN_FLIGHT):
        assert budgets.admit("1.2.3.4", "stream", limits) is None
    assert "under way" in budgets.admit("1.2.3.4", "stream", limits).message
    budgets.release("1.2.3.4")
    assert budgets.admit("1.2.3.4", "stream", limits) is None


def test_the_budgets_kept_are_bounded():
    budgets = space.routes.ClientBudgets(tracked=100)
    limits = space.routes.RouteKind(body_bytes=0, per_minute=1)
    for number in range(1000):
        budgets.admit(f"10.0.{number // 256}.{number % 256}", "event", limits)
        budgets.release(f"10.0.{number // 256}.{number % 256}")
    assert len(budgets._budgets) == 100 and not budgets._in_flight


def test_an_ipv6_host_has_one_budget_for_its_whole_64():
    """One host with a /64 had 2**64 budgets: a request from each of its addresses started a new one."""
    application = ReadingApp()
    budgets = space.routes.ClientBudgets(clock=Clock())  # no refill while the requests are sent, however slowly
    guard = space.routes.RouteGuard(application, space.routes.kinds(MAX_CHARS), budgets=budgets)
    per_minute = space.routes.kinds(MAX_CHARS)["page"].per_minute
    statuses = [
        guard_request(guard, "/config", method="GET", peer=f"2001:db8:1:2:{number:x}::1")[0]
        for number in range(per_minute + 5)
    ]
    assert statuses.count(200) == per_minute and statuses[-5:] == [429] * 5
    assert guard_request(guard, "/config", method="GET", peer="2001:db8:1:3::1")[0] == 200  # another /64


def test_a_forwarded_address_that_is_not_an_ip_address_is_refused(monkeypatch):
    """uvicorn makes the forwarded entry the client whatever it is; the limits keyed on that text."""
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    application = ReadingApp()
    guard = space.routes.RouteGuard(application, space.routes.kinds(MAX_CHARS), PROXIES)
    served = ProxyHeadersMiddleware(guard, trusted_hosts="10.0.0.0/8")
    for claimed in ["not-an-address", "a-new-name-each-time-1", "198.51.100.1, garbage"]:
        status, message, _ = guard_request(served, "/config", method="GET", peer="10.0.0.1", headers=forwarded(claimed))
        assert status == 400 and b"X-Forwarded-For" in message and b"not an IP address" in message
    assert guard_request(served, "/config", method="GET", peer="10.0.0.1", headers=forwarded("198.51.100.1"))[0] == 200
    assert application.bodies == [0]


def test_an_event_that_names_a_file_by_url_is_refused_before_gradio_reads_it():
    """Gradio downloads an input file given by a URL into its temporary folder, of any size, past the upload limits."""
    application = ReadingApp()
    guard = space.routes.RouteGuard(application, space.routes.kinds(MAX_CHARS))
    by_url = {"path": "https://example.com/huge.csv", "meta": {"_type": "gradio.FileData"}}
    uploaded = {"path": "/tmp/gradio/abc/outputs.csv", "meta": {"_type": "gradio.FileData"}}
    for path in ("/gradio_api/queue/join", "/gradio_api/call/score_file"):
        body = json.dumps({"data": [*FAITHFULNESS, by_url, "none"], "fn_index": 3}).encode()
        status, message, _ = guard_request(guard, path, body=body, chunk=50)
        assert status == 400 and b"not named by a URL" in message
    assert application.bodies == []  # the application never got the body's end
    body = json.dumps({"data": [*FAITHFULNESS, uploaded, "none"]}).encode()
    assert guard_request(guard, "/gradio_api/call/score_file", body=body)[0] == 200
    assert guard_request(guard, "/gradio_api/call/compare", body=b'{"data": ["https://example.com"]}')[0] == 200


@pytest.mark.slow
def test_the_served_app_downloads_no_file_named_by_url(app_url, monkeypatch):
    import gradio.processing_utils
    import httpx

    downloads = []

    async def recording_download(url, cache_dir):
        downloads.append(url)
        raise AssertionError("the server downloaded a file a client named")

    monkeypatch.setattr(gradio.processing_utils, "async_ssrf_protected_download", recording_download)
    by_url = {"path": "https://example.com/huge.csv", "meta": {"_type": "gradio.FileData"}}
    data = [*FAITHFULNESS, by_url, "none"]
    response = httpx.post(f"{app_url}gradio_api/call/score_file", json={"data": data}, timeout=30)
    assert response.status_code == 400 and "not named by a URL" in response.text and not downloads


def test_a_cancel_or_reset_passes_its_event_id_on():
    cancelled = []
    guard = space.routes.RouteGuard(ReadingApp(), space.routes.kinds(MAX_CHARS), on_cancel=cancelled.append)
    guard_request(guard, "/gradio_api/reset", body=b'{"event_id": "abc123"}')
    guard_request(guard, "/gradio_api/cancel", body=b'{"event_id": "def456", "session_hash": "s", "fn_index": 3}')
    guard_request(guard, "/gradio_api/cancel", body=b'{"event_id": null, "session_hash": "s", "fn_index": 3}')
    guard_request(guard, "/gradio_api/reset", body=b"[not json")
    guard_request(guard, "/gradio_api/queue/join", body=b'{"event_id": "not-a-cancel"}')
    assert cancelled == ["abc123", "def456"]


def raw_request(url, method, path, headers, body=b""):
    """(status, body) of one request written by hand, over a fresh connection."""
    import http.client
    import urllib.parse

    address = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        connection.putrequest(method, path)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        if body:
            connection.send(body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.slow
def test_the_served_app_refuses_the_probes_of_gradios_own_routes(app_url):
    """process_recording kept each 19 MB recording; component_server read 950 MB whole; call/compare took 200 MB of
    JSON. Each is answered before its body is sent."""
    big = {"Content-Type": "multipart/form-data; boundary=x", "Content-Length": str(950 * 2**20)}
    for path in ("/gradio_api/process_recording", "/gradio_api/component_server"):
        assert raw_request(app_url, "POST", path, big) == (404, b"Not Found")
    json_body = {"Content-Type": "application/json", "Content-Length": str(200 * 2**20)}
    status, message = raw_request(app_url, "POST", "/gradio_api/call/compare", json_body)
    assert status == 413 and b"at most" in message
    # chunked, just past the limit: refused once the limit is passed
    limit = space.routes.event_body_bytes(MAX_CHARS)
    payload = b"x" * (limit + 1)
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(payload), payload)
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    assert raw_request(app_url, "POST", "/gradio_api/call/compare", headers, chunked)[0] == 413


@pytest.mark.slow
def test_the_served_app_stores_nothing_of_a_recording_sent_whole(app_url, tmp_path, monkeypatch):
    """The probe itself: a 19 MB recording sent whole to process_recording, whose form reader wrote it to the
    temporary folder and never deleted it, request after request."""
    import tempfile

    import gradio.routes
    import httpx

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the form reader writes (the server is in-process)
    folders = (str(tmp_path), gradio.routes.DEFAULT_TEMP_DIR)  # and where the route writes its copy

    def stored():
        return sorted((parent, name) for folder in folders for parent, _, names in os.walk(folder) for name in names)

    before = stored()
    recording = {"video": ("recording.webm", b"\x1a\x45\xdf\xa3" + bytes(19 * 2**20), "video/webm")}
    for _ in range(3):
        response = httpx.post(f"{app_url}gradio_api/process_recording", files=recording, timeout=60)
        assert response.status_code == 404
    assert stored() == before


@pytest.fixture
def private_app_url(app_settings):
    """A Space of its own, whose clients' budgets a test may spend."""
    from support import app_server

    with app_server.serving(app_settings) as url:
        yield url


@pytest.mark.slow
def test_the_served_app_gives_a_client_its_budget_of_requests(private_app_url):
    """A client's requests of one kind are admitted until its budget is spent, then refused with Retry-After; the
    budget refills at per_minute a minute while they are sent, so the count admitted is per_minute plus what refilled
    in the time they took, however slowly a loaded machine serves them (a fixed count failed at a load of 6 to 20)."""
    import httpx

    per_minute = space.routes.kinds(MAX_CHARS)["control"].per_minute  # a kind the server's start never uses
    statuses = []
    with httpx.Client(base_url=private_app_url, timeout=60) as http:
        started = time.monotonic()
        while 429 not in statuses and len(statuses) <= 10 * per_minute:
            refusal = http.post("/gradio_api/reset", json={"event_id": "budget"})
            statuses.append(refusal.status_code)
        took = time.monotonic() - started
        cancel = http.post("/gradio_api/cancel", json={"event_id": "budget", "session_hash": "s", "fn_index": 0})
        gap = time.monotonic() - started - took
        other_kind = http.get("/config")
    admitted = len(statuses) - 1
    assert statuses[-1] == 429 and set(statuses[:-1]) == {200}, statuses
    assert per_minute <= admitted <= per_minute + 1 + took * per_minute / 60
    assert int(refusal.headers["retry-after"]) >= 1
    # the cancel route spends the same budget: refused, unless a request's worth refilled before it came
    assert cancel.status_code == 429 or gap >= 60 / per_minute
    assert other_kind.status_code == 200


@pytest.mark.slow
def test_the_rest_routes_cannot_skip_the_queue(app_url):
    """With the REST routes open (Gradio opens them off Hugging Face), POST /gradio_api/run/compare ran a scoring
    job outside the queue and its size limit."""
    import httpx

    response = httpx.post(f"{app_url}gradio_api/run/compare", json={"data": compare_arguments()}, timeout=30)
    assert response.status_code == 404 and "join the queue" in response.text
