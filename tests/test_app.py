"""The Gradio Space (app.py and space/): the operator's settings, and both tabs through the HTTP API with
gradio_client.

The app runs on the tiny checkpoint that the tests build, offered to the browser through BARTSCORE_APP_MODELS exactly
as an operator would offer a local checkpoint. Expected values come from the engine, called directly. The Space's
parts without a server are tested by concern: test_app_compare.py, test_app_batch.py, test_app_page.py."""

import json
import math
import re
import time

import numpy as np
import pandas as pd
import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from gradio_client import handle_file
from gradio_client.exceptions import AppError
from support.app_server import MAX_CHARS, MAX_ROWS, shown_signature
from support.lazy import LazyModule
from support.space_inputs import (
    CANDIDATES,
    DOCUMENTS,
    OUTPUT_ROWS,
    REFERENCES,
    SOURCE,
    write_documents_csv,
    write_outputs_csv,
)
from support.space_pages import TOLERANCE, bars_of
from support.space_requests import REFERENCE_LINES, candidate_boxes, settings_inputs, write

import bart_score
import space.batch
import space.candidates
import space.form
import space.settings
import space.wiring
from bart_score.baselines import files as baseline_files
from bart_score.baselines.build import build_baseline

# Gradio and what imports it, imported by the first test that uses them (support/lazy.py).
app = LazyModule("app")


# ---------------------------------------------------------------------------------------------------------------------
# Operator settings


def test_allowlist_has_the_built_in_variants_and_the_operators_models():
    settings = space.settings.settings_from_env(
        {
            "BARTSCORE_APP_MODELS": " tiny = /models/tiny , hub=org/bart-x,"
            "mb=org/mbart;source_lang=de_DE;target_lang=en_XX"
        }
    )
    assert settings.models == {
        "vanilla": {"checkpoint": "vanilla"},
        "cnn": {"checkpoint": "cnn"},
        "tiny": {"checkpoint": "/models/tiny"},
        "hub": {"checkpoint": "org/bart-x"},
        "mb": {"checkpoint": "org/mbart", "source_lang": "de_DE", "target_lang": "en_XX"},
    }
    assert settings.default_model == "cnn"
    assert settings.device is None
    assert (settings.max_chars, settings.max_rows) == (
        space.settings.DEFAULT_MAX_CHARS,
        space.settings.DEFAULT_MAX_ROWS,
    )


def test_cnn_para_is_offered_only_when_its_weights_file_exists(tmp_path):
    assert "cnn-para" not in space.settings.settings_from_env({}).models
    assert (
        "cnn-para"
        not in space.settings.settings_from_env({bart_score.PARA_WEIGHTS_ENV: str(tmp_path / "bart.pth")}).models
    )
    (tmp_path / "bart.pth").write_bytes(b"weights")
    assert (
        "cnn-para" in space.settings.settings_from_env({bart_score.PARA_WEIGHTS_ENV: str(tmp_path / "bart.pth")}).models
    )


@pytest.mark.parametrize(
    "environ, message",
    [
        ({"BARTSCORE_APP_MODELS": "tiny"}, "entry 'tiny' is not of the form name=checkpoint"),
        ({"BARTSCORE_APP_MODELS": "=/models/tiny"}, "not of the form name=checkpoint"),
        ({"BARTSCORE_APP_MODELS": "x=/m;colour=red"}, "'colour=red' is not one of option=value with the options"),
        ({"BARTSCORE_APP_DEFAULT_MODEL": "tiny"}, "BARTSCORE_APP_DEFAULT_MODEL is 'tiny', which is not one of"),
        ({"BARTSCORE_APP_MAX_ROWS": "many"}, "BARTSCORE_APP_MAX_ROWS must be a positive integer"),
        ({"BARTSCORE_APP_MAX_CHARS": "0"}, "BARTSCORE_APP_MAX_CHARS must be a positive integer"),
    ],
)
def test_malformed_operator_settings_stop_the_app_at_start(environ, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        space.settings.settings_from_env(environ)


@pytest.mark.parametrize(
    "name, value",
    [
        ("BARTSCORE_APP_MAX_CHARS", "abc"),
        ("BARTSCORE_APP_MAX_ROWS", "٣"),
        ("BARTSCORE_APP_MAX_PAIRS", "0"),
        ("BARTSCORE_APP_DEVICE", "cuda:x"),
        ("BARTSCORE_APP_MODELS", "x"),
        ("BARTSCORE_APP_DEFAULT_MODEL", "nope"),
        ("BARTSCORE_APP_TRUSTED_PROXIES", "proxy.internal"),
        ("BARTSCORE_APP_LONG_SOURCE", "everything"),
    ],
)
def test_a_bad_setting_ends_the_app_with_one_line_naming_it(monkeypatch, capsys, name, value):
    """A bad setting in app.py's environment printed a full traceback."""
    operator_settings = app.operator_settings  # app imported (and its settings read) before the setting is made
    monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as raised:
        operator_settings()
    assert raised.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"app.py: error: {name}") and repr(value) in lines[0]


@pytest.mark.slow
def test_python_app_py_with_a_bad_setting_prints_one_line(tmp_path):
    import os
    import subprocess
    import sys

    environment = {**os.environ, "BARTSCORE_APP_MAX_CHARS": "5k", "PYTHONPATH": os.path.dirname(space.__path__[0])}
    finished = subprocess.run(
        [sys.executable, os.path.join(os.path.dirname(space.__path__[0]), "app.py")],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,  # only a hung start reaches it: the import of Gradio and torch takes minutes at a load of 20
    )
    assert finished.returncode == 2
    assert finished.stderr.splitlines() == [
        "app.py: error: BARTSCORE_APP_MAX_CHARS must be a positive integer, got '5k'"
    ]


def test_only_allowlisted_names_reach_the_engine():
    settings = space.settings.settings_from_env({})
    with pytest.raises(ValueError, match="Unknown model '/etc'; choose one of vanilla, cnn"):
        space.settings.menu_scorer(settings, "/etc")


@pytest.mark.slow
def test_scoring_jobs_are_given_no_estimate_from_earlier_ones(app_settings):
    """Batch's status read "processing | 101.2/0.5s": Gradio's estimate of a job is the mean duration of the event's
    earlier jobs (a refused one's half second), which Gradio shows for an event it holds a record of."""
    demo = app.build_demo(app_settings)
    queue = demo._queue
    scoring = [fn for fn in demo.fns.values() if fn.concurrency_id == app.SCORING_SLOT]
    assert {fn.api_name for fn in scoring} >= {"compare", "score_file"} and len(scoring) == 4  # the API's, the page's
    other = next(fn for fn in demo.fns.values() if fn.concurrency_id != app.SCORING_SLOT)
    for fn in [*scoring, other]:
        queue.process_time_per_fn[fn].add(0.5)  # as Gradio records a job that ended
    assert [fn in queue.process_time_per_fn for fn in scoring] == [False] * 4  # no estimate: none is shown
    assert other in queue.process_time_per_fn and queue.process_time_per_fn[other].avg_time == 0.5


@pytest.mark.slow
def test_building_the_app_loads_no_model(app_settings):
    space.settings._scorers.clear()
    app.build_demo(app_settings)
    assert space.settings._scorers == {}


# ---------------------------------------------------------------------------------------------------------------------
# The Compare tab through the API


def compare(client, *candidates, source=SOURCE, references=REFERENCE_LINES, **settings):
    return client.predict(
        *settings_inputs(**settings), source, references, *candidate_boxes(*candidates), api_name="/compare"
    )


DIRECTION_HEADERS = ["faithfulness", "precision", "recall", "F"]


@pytest.mark.slow
def test_api_compare_gives_the_engines_scores_with_the_best_marked_and_where_they_fall(client, copier):
    boxes = [CANDIDATES[0], "", CANDIDATES[1], CANDIDATES[2]]  # the blank second box is skipped
    verdict, rescaled, raw, chart, heatmap, signature = compare(client, *boxes, model="copier")
    expected = copier.score_directions(
        CANDIDATES,
        references=[REFERENCES] * 3,
        sources=[SOURCE] * 3,
        rescale="corpus",
        corpus_points=bart_score.CorpusPoints(unrelated_texts=space.candidates.UNRELATED_TEXTS),
    )
    names = ["Candidate 1", "Candidate 3", "Candidate 4"]
    for table in (rescaled, raw):
        assert table["headers"] == ["candidate", *DIRECTION_HEADERS]
        assert [row[0] for row in table["data"]] == [*names, "copy", "unrelated"]
    for column, direction in enumerate(bart_score.DIRECTIONS, start=1):
        points = expected["reference_points"][direction]
        shown = [row[column] for row in raw["data"]]
        assert shown == pytest.approx([*expected[direction], points["copy"], points["unrelated"]], abs=1e-6)
        shown = [row[column] for row in rescaled["data"]]
        assert shown == pytest.approx([*expected[f"{direction}_rescaled"], 1.0, 0.0], abs=1e-6)
        best = max(range(3), key=lambda i: expected[f"{direction}_rescaled"][i])
        assert rescaled["metadata"]["styling"][best][column] == space.candidates.BEST_STYLE
        assert rescaled["metadata"]["display_value"][best][column] == f"{expected[f'{direction}_rescaled'][best]:.3f}"
        assert raw["metadata"]["display_value"][best][column] == f"{expected[direction][best]:.4f}"
    assert signature == shown_signature(expected["signature"], copier, "copier") and "|rescale:corpus-" in signature

    # The verdict names the candidate that each direction puts first, with the engine's 0–1 values.
    firsts = {d: max(range(3), key=lambda i: expected[f"{d}_rescaled"][i]) for d in bart_score.DIRECTIONS}
    for index in firsts.values():
        assert names[index] in verdict
    lead = firsts["faithfulness"]
    assert f"{expected['faithfulness_rescaled'][lead]:.2f}".replace("-", "−") in verdict

    bars = {(candidate, direction): (value, score) for direction, candidate, value, score, _, _ in bars_of(chart)}
    assert len(bars) == 12
    assert bars[("Candidate 4", "recall")] == pytest.approx(
        (expected["recall_rescaled"][2], expected["recall"][2]), abs=1e-6
    )

    tokens = copier.score_tokens([SOURCE] * 3, CANDIDATES)
    shown = [
        [float(v) for v in re.findall(r'data-logprob="([^"]+)"', block)]
        for block in heatmap.split('<div class="candidate"')[1:]
    ]
    assert [len(values) for values in shown] == [len(t) for t in tokens]
    for values, pair in zip(shown, tokens):
        assert values == pytest.approx([lp for _, lp in pair], abs=1e-5)


@pytest.mark.slow
def test_api_compare_with_a_model_that_tells_no_copy_apart_shows_no_scale_and_says_why(client, scorer):
    """The tests' random BART scores copies of the candidates below the candidates given unrelated texts: faithfulness
    and precision (and so f_score, the mean of rescaled precision and recall) get no rescaled values (and no bars),
    and the chart says why."""
    _, rescaled, _, chart, _, _ = compare(client, *CANDIDATES)
    for column in (1, 2, 4):
        assert [row[column] for row in rescaled["metadata"]["display_value"]][:3] == ["–"] * 3
    assert {direction for direction, *_ in bars_of(chart)} == {"recall"}
    assert "No bars for faithfulness, precision, F" in chart


@pytest.mark.slow
def test_api_compare_passes_every_setting_to_the_engine(client, scorer):
    _, _, raw, _, heatmap, signature = compare(
        client,
        CANDIDATES[0],
        CANDIDATES[1],
        source="",
        directions=["recall", "f_score"],
        aggregation="max",
        prompt_choice="custom",
        prompt_phrase="In other words",
        prompt_side="decoder",
    )
    expected = scorer.score_directions(
        CANDIDATES[:2],
        references=[REFERENCES] * 2,
        directions=["recall", "f_score"],
        aggregation="max",
        prompt=["In other words"],
        prompt_side="decoder",
    )
    assert raw["headers"] == ["candidate", "recall", "F"]
    assert [row[1] for row in raw["data"][:2]] == pytest.approx(expected["recall"], abs=1e-6)
    assert [row[2] for row in raw["data"][:2]] == pytest.approx(expected["f_score"], abs=1e-6)
    assert signature.replace(re.search(r"\|rescale:[^|]+", signature)[0], "") == shown_signature(
        expected["signature"], scorer
    )
    assert "prompt:custom-" in signature and "agg:max" in signature
    assert "given the first reference" in heatmap


@pytest.mark.slow
def test_api_candidates_have_names_of_their_own(client):
    parameters = client.view_api(print_info=False, return_format="dict")["named_endpoints"]["/compare"]["parameters"]
    assert [parameter["parameter_name"] for parameter in parameters] == [
        *(setting.name for setting in space.wiring.SettingsInputs.parameters()),  # test_app_wiring.py pins them
        "source",
        "references",
        *(f"candidate_{number}" for number in range(1, space.form.MAX_CANDIDATES + 1)),
    ]
    by_name = client.predict(
        model="tiny",
        directions=["faithfulness"],
        source=SOURCE,
        references="",
        candidate_1="",
        candidate_2=CANDIDATES[0],
        candidate_5=CANDIDATES[1],
        api_name="/compare",
    )
    assert [row[0] for row in by_name[2]["data"][:2]] == ["Candidate 2", "Candidate 5"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(candidates=["only one"]), "Enter at least 2 candidates to compare (found 1)"),
        (
            dict(candidates=["a", "b" * (MAX_CHARS + 1)]),
            f"Candidate 2 has {MAX_CHARS + 1} characters; the limit is {MAX_CHARS}",
        ),
        (dict(source="s" * (MAX_CHARS + 1)), f"The source has {MAX_CHARS + 1} characters"),
        (dict(references="\n".join(["r"] * 9)), "At most 8 references are allowed (found 9)"),
        (  # escaped: HTML
            dict(source="", directions=["faithfulness", "recall"]),
            "direction 'faithfulness' (source -&gt; prediction) needs Source, which",
        ),
        (dict(directions=[]), "Choose at least one direction"),
        (dict(prompt_choice="custom", prompt_phrase="  "), "Enter a custom prompt phrase"),
        (dict(model="missing"), "The model 'missing' is not available on this server; choose another model"),
    ],
)
def test_api_compare_explains_user_mistakes_and_keeps_running(client, arguments, message):
    candidates = arguments.pop("candidates", CANDIDATES[:2])
    with pytest.raises(AppError, match=re.escape(message)) as raised:
        compare(client, *candidates, **arguments)
    assert "Traceback" not in str(raised.value)
    _, table, *_ = compare(client, *CANDIDATES[:2])  # the app still answers
    assert len(table["data"]) == 2 + 2  # the candidates and the two reference points


@pytest.mark.slow
def test_api_compare_refuses_a_model_outside_the_allowlist(client, tiny_checkpoint):
    loaded = dict(space.settings._scorers)
    for model in (tiny_checkpoint, "facebook/bart-large"):
        # Gradio refuses a value outside the menu before the app runs (menu_scorer checks again, tested above).
        choices = ["vanilla", "cnn", "tiny", "missing", "copier"]
        with pytest.raises(AppError, match=re.escape(f"{model} is not in the list of choices: {choices}")):
            compare(client, *CANDIDATES[:2], model=model)
    assert space.settings._scorers == loaded  # nothing was loaded for it


# ---------------------------------------------------------------------------------------------------------------------
# The Batch tab through the API


def interval_text(mean, low, high, digits=2):
    """A summary cell as the page shows it: "−2.51 [−2.85, −2.20]"."""
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]".replace("-", "−")


def by_system(rows, system, column):
    """One column of the per-row table for one system, in row order."""
    position = rows["headers"].index(column)
    return [row[position] for row in rows["data"] if row[rows["headers"].index("system")] == system]


@pytest.mark.slow
def test_api_batch_gives_rows_system_summary_significance_and_csv(client, scorer, tmp_path):
    path = write_outputs_csv(tmp_path / "outputs.csv", OUTPUT_ROWS)
    summary, rescaled_summary, pairs, rows, download, signature, intervals = client.predict(
        *settings_inputs(directions=["faithfulness", "f_score"]), handle_file(path), api_name="/score_file"
    )

    sources = [row[1] for row in OUTPUT_ROWS]
    references = [[r for r in row[2:4] if r] for row in OUTPUT_ROWS]
    expected = {
        name: scorer.score_directions(
            [row[column] for row in OUTPUT_ROWS],
            references=references,
            sources=sources,
            directions=["faithfulness", "f_score"],
        )
        for column, name in ((4, "good"), (5, "bad"), (6, "odd"))
    }

    # One row per input row and system, with its texts, so that it can be sorted to find the worst rows.
    assert rows["headers"] == ["row", "id", "system", "output", "faithfulness", "F", "source", "references"]
    assert [row[:3] for row in rows["data"][:3]] == [[1, "doc0", "good"], [1, "doc0", "bad"], [1, "doc0", "odd"]]
    assert by_system(rows, "odd", "output") == [row[6] for row in OUTPUT_ROWS]
    assert by_system(rows, "good", "source") == sources
    assert by_system(rows, "bad", "references") == ["\n".join(refs) for refs in references]
    assert by_system(rows, "good", "faithfulness") == pytest.approx(expected["good"]["faithfulness"], abs=TOLERANCE)
    assert by_system(rows, "odd", "F") == pytest.approx(expected["odd"]["f_score"], abs=TOLERANCE)

    # The summary: systems x directions, the mean in the data, the mean with its interval on the page.
    assert summary["headers"] == ["system", "faithfulness", "F"]
    assert [row[0] for row in summary["data"]] == ["good", "bad", "odd"]
    assert rescaled_summary["data"] == [] or rescaled_summary["headers"] == ["system"]
    for column, (direction, label) in enumerate((("faithfulness", "faithfulness"), ("f_score", "F")), start=1):
        # compare_systems on the scores the app shows: separate engine calls agree only within TOLERANCE.
        stats = bart_score.compare_systems({name: by_system(rows, name, label) for name in expected})
        assert [row[column] for row in summary["data"]] == pytest.approx(
            [system["mean"] for system in stats["systems"]], abs=1e-9
        )
        assert [row[column] for row in summary["metadata"]["display_value"]] == [
            interval_text(system["mean"], system["ci_low"], system["ci_high"]) for system in stats["systems"]
        ]
        best = max(range(3), key=lambda index: stats["systems"][index]["mean"])
        assert [row[column] for row in summary["metadata"]["styling"]] == [
            "font-weight: bold" if index == best else "" for index in range(3)
        ]
        shown_pairs = [row for row in pairs["data"] if row[0] == direction]
        assert [row[1:3] for row in shown_pairs] == [["good", "bad"], ["good", "odd"], ["bad", "odd"]]
        for row, pair in zip(shown_pairs, stats["pairs"]):
            assert row[3:6] == pytest.approx([pair["delta"], pair["bootstrap_p"], pair["t_test_p"]], abs=1e-9)
            assert row[6] == (pair["winner"] or "no significant difference")
    assert pairs["headers"][3:7] == ["Δ mean (A − B)", "bootstrap p", "t-test p", "better"]
    assert signature == shown_signature(expected["good"]["signature"], scorer)

    for column, direction in enumerate(("faithfulness", "f_score"), start=1):
        panel = intervals.split(f'data-direction="{direction}"')[1].split('<div class="panel"')[0]
        means = [float(v) for v in re.findall(r'data-mean="([^"]+)"', panel)]
        assert means == pytest.approx([row[column] for row in summary["data"]], abs=1e-6)
    downloaded = pd.read_csv(download)
    assert list(downloaded.columns) == ["row", "id"] + [
        f"{s}/{d}" for s in ("good", "bad", "odd") for d in ("faithfulness", "f_score")
    ]
    assert list(downloaded["good/faithfulness"]) == pytest.approx(by_system(rows, "good", "faithfulness"), abs=1e-9)


@pytest.mark.slow
def test_api_batch_rescales_as_the_library_and_the_command_line_do(
    in_process, client, copier, copying_checkpoint, tmp_path
):
    path = write_documents_csv(tmp_path / "documents.csv")
    directions = ["faithfulness", "recall"]
    summary, rescaled_summary, _, rows, _, signature, intervals = client.predict(
        *settings_inputs(model="copier", directions=directions), handle_file(path), "corpus", api_name="/score_file"
    )
    corpus = bart_score.read_table_corpus(path)
    per_system, expected_signature = bart_score.score_corpus(copier, corpus, directions=directions, rescale="corpus")
    assert signature == shown_signature(expected_signature, copier, "copier") and "|rescale:corpus-" in signature
    code, stdout, stderr = in_process(
        "score",
        "-m",
        copying_checkpoint,
        "-i",
        path,
        "-d",
        ",".join(directions),
        "--rescale",
        "corpus",
        "-q",
        "-f",
        "jsonl",
    )
    assert code == 0, stderr
    from_cli = [json.loads(line) for line in stdout.splitlines()]
    columns = {"faithfulness": "faithfulness", "faithfulness_rescaled": "faithfulness 0–1", "recall": "recall"}
    columns["recall_rescaled"] = "recall 0–1"
    for name in ("close", "far"):
        for key, label in columns.items():
            shown = by_system(rows, name, label)
            assert shown == pytest.approx(per_system[name][key], abs=TOLERANCE), key
            assert [row[key] for row in from_cli if row["system"] == name] == pytest.approx(shown, abs=TOLERANCE)
    for key, label in columns.items():
        table = rescaled_summary if key.endswith("_rescaled") else summary
        means = [row[table["headers"].index(label.removesuffix(" 0–1"))] for row in table["data"]]
        assert means == pytest.approx([np.mean(per_system[n][key]) for n in ("close", "far")], abs=TOLERANCE)
    # The plot shows the rescaled directions, with the reference points that fall on its axis.
    assert re.findall(r'<div class="panel" data-direction="([^"]+)"', intervals) == [
        "faithfulness_rescaled",
        "recall_rescaled",
    ]
    assert intervals.count('<g class="system"') == 4 and "0: unrelated" in intervals


@pytest.mark.slow
def test_api_batch_rescales_with_the_saved_baseline_or_says_there_is_none(client, copier, tmp_path, monkeypatch):
    monkeypatch.setenv(baseline_files.BASELINE_FOLDER_ENV, str(tmp_path / "baselines"))
    path = write_documents_csv(tmp_path / "documents.csv")
    inputs = [*settings_inputs(model="copier", directions=["faithfulness"]), handle_file(path), "baseline"]
    with pytest.raises(
        AppError, match=r"saved baseline of model 'copier' is not possible: there is no saved"
    ) as raised:
        client.predict(*inputs, api_name="/score_file")
    assert "/" not in str(raised.value) and "bartscore baseline" not in str(raised.value)
    texts = [text for row in DOCUMENTS for text in row]
    corpus_file = tmp_path / "texts.txt"
    corpus_file.write_text("\n".join(texts) + "\n", encoding="utf-8")
    document = build_baseline(copier, texts=texts, corpus_file=str(corpus_file))
    baseline_files.write_baseline(document, baseline_files.default_baseline_path(document["settings"]))
    _, rescaled_summary, _, _, _, signature, _ = client.predict(*inputs, api_name="/score_file")
    assert f"|rescale:baseline-{document['id']}|" in signature
    per_system, _ = bart_score.score_corpus(
        copier, bart_score.read_table_corpus(path), directions=["faithfulness"], rescale="baseline"
    )
    means = [row[1] for row in rescaled_summary["data"]]
    assert means == pytest.approx([np.mean(per_system[n]["faithfulness_rescaled"]) for n in ("close", "far")], 1e-5)


@pytest.mark.slow
def test_api_batch_reports_progress_while_scoring(client, tmp_path):
    rows = [
        [
            f"r{i}",
            f"Report {i}: " + " ".join(["the city report says the market was high"] * 12),
            REFERENCES[0],
            "",
            CANDIDATES[0],
            CANDIDATES[1],
            CANDIDATES[2],
        ]
        for i in range(MAX_ROWS)
    ]
    job = client.submit(
        *settings_inputs(directions=["faithfulness"]),
        handle_file(write_outputs_csv(tmp_path / "many.csv", rows)),
        api_name="/score_file",
    )
    seen = set()
    deadline = time.monotonic() + 300
    while not job.done():
        assert time.monotonic() < deadline, "the scoring job did not finish in 300 s"
        for unit in job.status().progress_data or []:
            seen.add((unit.desc, unit.length))
        time.sleep(0.01)
    assert len(job.result()[3]["data"]) == 3 * MAX_ROWS  # a row per input row and system
    # The engine's progress (one step per distinct pair: 300 sources x 3 outputs) reaches the browser's bar.
    assert ("BARTScore", 3 * MAX_ROWS) in seen


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, content, message",
    [
        ("latin1.csv", "source,sys\ncaf\xe9,x\n".encode("latin-1"), "latin1.csv is not UTF-8 text"),
        ("empty.csv", b"", "empty.csv is empty"),
        ("columns.csv", "text,output\nx,y\n", "columns.csv needs a 'source' column and/or reference columns"),
        (
            "rows.jsonl",
            "".join(json.dumps({"source": "s", "sys": "o"}) + "\n" for _ in range(MAX_ROWS + 1)),
            f"rows.jsonl has more than {MAX_ROWS} rows; the limit is {MAX_ROWS}",
        ),
        ("refs.csv", "source,sys\na,b\n", "direction 'precision' needs the file's reference columns, which were not"),
    ],
)
def test_api_batch_explains_malformed_uploads_and_keeps_running(client, tmp_path, name, content, message):
    directions = ["faithfulness", "precision"]  # a choice of the user's (every direction asks for what the file has)
    with pytest.raises(AppError, match=re.escape(message)) as raised:
        client.predict(
            *settings_inputs(directions=directions), handle_file(write(tmp_path, name, content)), api_name="/score_file"
        )
    assert "Traceback" not in str(raised.value)
    assert f"/{name}" not in str(raised.value)  # the file's name, not the path of Gradio's temporary copy
    good = write(tmp_path, "good.jsonl", json.dumps({"source": "a b c", "sys": "a b"}) + "\n")
    summary, *_ = client.predict(
        *settings_inputs(directions=["faithfulness"]), handle_file(good), api_name="/score_file"
    )
    assert summary["headers"] == ["system", "faithfulness"] and summary["data"][0][0] == "sys"
    assert math.isfinite(summary["data"][0][1])


@pytest.mark.slow
def test_api_batch_without_an_upload_asks_for_one(client):
    with pytest.raises(AppError, match=r"Upload a \.csv or \.jsonl file first"):
        client.predict(*settings_inputs(), None, api_name="/score_file")


@pytest.mark.slow
def test_hidden_helper_events_are_not_part_of_the_api(client):
    assert set(client.view_api(print_info=False, return_format="dict")["named_endpoints"]) == {
        "/compare",
        "/score_file",
    }


def test_p_values_are_shown_rounded_but_never_as_zero():
    assert space.batch.p_value_text(0.012345) == "0.0123"
    assert space.batch.p_value_text(3e-7) == "< 0.0001"
