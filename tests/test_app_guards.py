"""What the Space guards against (space/guards.py and the places the Space uses it): models that cannot be loaded,
special tokens and lone surrogates in what users type, values of the wrong type sent to the API, markup in messages,
formulas in the CSV download, limits checked while an upload is read, and saved baselines that cannot be used. The
other guards are tested by concern: test_app_jobs.py (space/jobs.py), test_app_uploads.py (space/uploads.py,
space/clients.py) and test_app_routes.py (space/routes.py)."""

import csv
import os
import re
import shutil

import pandas as pd
import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from gradio_client import handle_file
from gradio_client.exceptions import AppError
from support.app_server import MAX_CHARS, event_functions
from support.lazy import LazyModule
from support.space_requests import FAITHFULNESS, SETTINGS, compare_arguments, settings_inputs

import bart_score
import bart_score.inputs
import space.batch
import space.guards
import space.settings
from bart_score.messages import FileName, Mention

# Gradio and what imports it, imported by the first test that uses them (support/lazy.py).
gr = LazyModule("gradio")
app = LazyModule("app")
space_feedback = LazyModule("space.feedback")


def event_function(demo, api_name):
    return event_functions(demo)[api_name]


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


@pytest.mark.slow
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
            compare(*compare_arguments(model=model))


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
    arguments = compare_arguments(prompt_choice="custom", prompt_phrase="In other <mask> words")
    with pytest.raises(AppError, match=re.escape(space_feedback.as_text("The custom prompt phrase contains <mask>"))):
        client.predict(*arguments, api_name="/compare")
    path = tmp_path / "outputs.csv"
    path.write_text("source,reference,good,bad\ns,r,fine,fine\ns,r,fine,<pad> <pad>\n", encoding="utf-8")
    with pytest.raises(AppError, match=re.escape(space_feedback.as_text("Row 2, column 'bad' contains <pad>"))):
        client.predict(*SETTINGS, handle_file(str(path)), api_name="/score_file")


@pytest.mark.parametrize(
    "arguments, message",
    [
        pytest.param(
            dict(source="A source \ud800"),
            r"The source holds '\\ud800' at character 9, a lone surrogate",
            marks=pytest.mark.slow,
        ),
        pytest.param(dict(references="ok\nr\udc80"), r"Reference 2 holds '\\udc80'", marks=pytest.mark.slow),
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
    _, _, _, rows, download, _, _ = client.predict(*FAITHFULNESS, handle_file(str(path)), api_name="/score_file")
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
    for server_only in (str(tmp_path), "/", "bartscore baseline", scorer.options.checkpoint):
        assert server_only not in message


# ---------------------------------------------------------------------------------------------------------------------
# Values of the wrong type sent to the API


WRONG_TEXTS = [["a", "b"], {"text": "a"}, 3, 2.5, True]


@pytest.mark.slow
@pytest.mark.parametrize("value", WRONG_TEXTS, ids=lambda value: type(value).__name__)
@pytest.mark.parametrize(
    "name, label",
    [
        ("source", "Source"),
        ("references", "References"),
        ("candidate_1", "Candidate 1"),
        ("candidate_6", "Candidate 6"),
        ("prompt_phrase", "Custom prompt phrase"),
    ],
)
def test_api_texts_of_another_type_are_refused_naming_the_field(client, name, label, value):
    custom = {"prompt_choice": "custom"} if name == "prompt_phrase" else {}  # the phrase is read for a custom prompt
    with pytest.raises(AppError) as raised:
        client.predict(*compare_arguments(**custom, **{name: value}), api_name="/compare")
    described = bart_score.inputs.describe(value)
    assert str(raised.value) == f"{label} must be text (a string), got {described}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, value, message",
    [
        ("model", ["tiny"], "Model must be one of its choices, given as a string, got a list"),
        ("directions", "faithfulness", "Directions must be a list of its choices, each a string, got a str"),
        ("directions", {"faithfulness": True}, "Directions must be a list of its choices, each a string, got a dict"),
        ("directions", ["faithfulness", 3], "Directions must be a list of its choices, each a string, got an int"),
        ("directions", None, "Directions must be a list of its choices, each a string, got None"),
        ("aggregation", 1, "Several references must be one of its choices, given as a string, got an int"),
        ("prompt_choice", ["none"], "Prompt must be one of its choices, given as a string, got a list"),
        ("prompt_side", {"side": "encoder"}, "Prompt side must be one of its choices, given as a string, got a dict"),
    ],
)
def test_api_choices_of_another_type_are_refused_naming_the_field(client, name, value, message):
    with pytest.raises(AppError, match=f"^{re.escape(message)}$"):
        client.predict(*compare_arguments(**{name: value}), api_name="/compare")


@pytest.mark.slow
def test_api_batch_settings_of_another_type_are_refused(client, tmp_path):
    path = tmp_path / "outputs.csv"
    path.write_text("source,sys\nThe cat sat.,A cat.\n", encoding="utf-8")
    with pytest.raises(
        AppError, match=r"^Rescaled scores too must be one of its choices, given as a string, got a list$"
    ):
        client.predict(*SETTINGS, handle_file(str(path)), ["none"], api_name="/score_file")
    with pytest.raises(AppError, match=r"^Custom prompt phrase must be text"):
        client.predict(
            *settings_inputs(directions=["faithfulness", "precision"], prompt_choice="custom", prompt_phrase=["x"]),
            handle_file(str(path)),
            api_name="/score_file",
        )
