"""The Gradio Space (app.py and space/): its pure functions, and both tabs through the HTTP API with gradio_client.

The app runs on the tiny checkpoint that the tests build, offered to the browser through BARTSCORE_APP_MODELS exactly
as an operator would offer a local checkpoint. Expected values come from the engine, called directly."""

import asyncio
import csv
import dataclasses
import html
import inspect
import json
import math
import re
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from gradio_client import handle_file
from gradio_client.exceptions import AppError
from support.app_server import MAX_CHARS, MAX_ROWS, event_functions, shown_signature
from support.cli import run_cli
from support.contrast import contrast
from support.lazy import LazyModule
from support.reference import reference_directions, reference_points
from support.space_inputs import (
    CANDIDATES,
    DOCUMENTS,
    OUTPUT_ROWS,
    REFERENCES,
    SOURCE,
    write_documents_csv,
    write_outputs_csv,
)

import bart_score
import bart_score.inputs
import space.batch
import space.candidates
import space.examples
import space.form
import space.heatmap
import space.menu
import space.naming
import space.plots
import space.settings
import space.verdict
import space.wiring
from bart_score.baselines import files as baseline_files
from bart_score.baselines.build import build_baseline

# Gradio and what imports it, imported by the first test that uses them (support/lazy.py).
gr = LazyModule("gradio")
app = LazyModule("app")
space_feedback = LazyModule("space.feedback")
space_handlers = LazyModule("space.handlers")

TOLERANCE = 1e-5  # scores from separate engine calls agree within this (batching changes float rounding)


# ---------------------------------------------------------------------------------------------------------------------
# Fixtures: the app as an operator would run it, on a free port


def settings_inputs(
    model="tiny", directions=bart_score.DIRECTIONS, aggregation="mean", prompt="none", phrase="", side="encoder"
):
    return [model, list(directions), aggregation, prompt, phrase, side]


def candidate_boxes(*texts):
    return list(texts) + [""] * (space.form.MAX_CANDIDATES - len(texts))


def assert_close(actual, expected):
    assert actual == pytest.approx(expected, abs=1e-6)


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


def test_building_the_app_loads_no_model(app_settings):
    space.settings._scorers.clear()
    app.build_demo(app_settings)
    assert space.settings._scorers == {}


# ---------------------------------------------------------------------------------------------------------------------
# Reading the Compare tab's inputs


def test_references_are_the_non_blank_lines():
    assert space.form.parse_references("  first \n\n\tsecond\n  \n") == ["first", "second"]
    assert space.form.parse_references(None) == []


def test_prompt_choices_map_to_the_engines_prompt_argument():
    assert space.form.parse_prompt("none", "ignored") is None
    assert space.form.parse_prompt("summary", "") == "summary"
    assert space.form.parse_prompt("custom", "  paraphrase ") == ["paraphrase"]  # a phrase, not the set of that name
    with pytest.raises(ValueError, match="Enter a custom prompt phrase"):
        space.form.parse_prompt("custom", "   ")
    with pytest.raises(ValueError, match="Unknown prompt 'poetry'"):
        space.form.parse_prompt("poetry", "")
    with pytest.raises(ValueError, match="The custom prompt phrase has 201 characters; the limit is 200"):
        space.form.parse_prompt("custom", "p" * 201)


# The phrases each pair is scored under (ScoringOptions.prompts), as the pair counts take them.
NO_PROMPT = (None,)
SUMMARY = bart_score.PROMPT_SETS["summary"]  # 70 phrases


def test_files_that_need_too_much_work_are_refused_before_scoring():
    corpus = bart_score.Corpus(
        sources=["s"] * 10, references=[["r1", "r2"]] * 10, systems={"a": ["x"] * 10, "b": ["y"] * 10}
    )
    # per row: faithfulness 1 + precision 2 + recall 2 = 5 pairs; x 10 rows x 2 systems = 100 pairs
    space.batch.check_work(corpus, ["faithfulness", "f_score"], NO_PROMPT, max_pairs=100)
    space.batch.check_work(corpus, ["precision"], SUMMARY, max_pairs=2 * 10 * 2 * 70)
    with pytest.raises(ValueError, match=r"needs 7,000 scored pairs"):
        space.batch.check_work(corpus, ["faithfulness", "recall", "precision"], SUMMARY, max_pairs=6_999)
    with pytest.raises(ValueError, match=r"needs 100 scored pairs .* the limit here is 99\. Use fewer rows"):
        space.batch.check_work(corpus, bart_score.DIRECTIONS, NO_PROMPT, max_pairs=99)


# Pieces of text in which a sentence splitter may find sentence ends: punctuation of every kind, list markers, quotes,
# brackets, abbreviations, numbers and every line break Python knows.
HOSTILE_PIECES = [
    *["word", "The", "cat", "a", "B", "1", "2.5", "Hello", "é", "Ünter", "١", "x", "A", "Z", "http://x.com"],
    *[".", ". ", "! ", "? ", "?!", "...", "…", "。", "!", "?", ";", ":", "-", "—", "*", "_", "&", "§", "%", "$", "#"],
    *["Dr.", "e.g.", "U.S.", "5 p.m.", "No.", "Mr.", "1. ", "a) ", "i. ", "• ", "1)", "iv.", "b)", "c.", "2)", "3."],
    *["(a)", "(1)", "ii)", "[1]", "(ab)", '"', "'", "“", "”", "’", "‘", "(", ")", "（", "）", "「", "」", "[", "]"],
    *["{", "}", "<", ">", "/", "\\", "ȸ", "☉", " ", "  ", "\t", "\n", "\n\n", "\r", "\x0b", "\x0c", "\x85", "\u2028"],
]


def test_the_sentence_bound_never_counts_fewer_sentences_than_the_splitter():
    """The Batch tab's pair count for source windows (check_work) rests on this bound; the reference is the splitter
    itself, on seeded hostile texts and on prose."""
    pytest.importorskip("pysbd")
    rng = np.random.default_rng(28)
    texts = [
        "".join(rng.choice(HOSTILE_PIECES) + rng.choice(["", " ", " ", "\n"]) for _ in range(rng.integers(1, 50)))
        for _ in range(300)
    ]
    # texts longer than the splitter's pieces, with no sentence end for thousands of characters: it cuts them
    long_runs = ["x" * 5000, "word " * 1000, ("a" * 1999 + " ") * 3, "Ph.D. " * 800, "a. " + "b" * 4500 + ". c"]
    for text in [*texts, *long_runs, SOURCE, *REFERENCES, *CANDIDATES]:
        assert space.batch.sentence_bound(text) >= len(bart_score.split_sentences(text)), repr(text[:80])
    assert space.batch.sentence_bound(" ".join(["a."] * 2000)) == 2000 + 5  # 5999 characters: 5 places to cut
    assert space.batch.sentence_bound("") == space.batch.sentence_bound(" . ") == 0
    # on plain prose it counts what the splitter does; a full stop or bracket that ends no sentence adds one
    prose = " ".join([SOURCE, *CANDIDATES])
    assert space.batch.sentence_bound(prose) == len(bart_score.split_sentences(prose)) == 5
    assert space.batch.sentence_bound("Dr. Smith paid $3.5 million (in 2024).") == 5


def one_letter_sentences_file(path, rows=20, systems=6, sentences=1666):
    """The probe of issue 28: a 600 KB file within every limit but the pairs, each output `sentences` one-letter
    sentences."""
    output = " ".join(["a."] * sentences)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", *(f"system_{number}" for number in range(systems))])
        writer.writerows([f"Source {row}.", *[output] * systems] for row in range(rows))
    return str(path)


def test_a_long_source_upload_is_counted_and_refused_without_splitting_a_sentence(tmp_path, monkeypatch):
    """Splitting 120 outputs of 1666 sentences each held the scoring thread for 81 s before the refusal."""

    def no_splitting(text):
        raise AssertionError("sentences are split while the request is checked")

    monkeypatch.setattr(bart_score, "split_sentences", no_splitting)
    monkeypatch.setattr(bart_score.long_documents.windows, "split_sentences", no_splitting)
    long_source = space.settings.settings_from_env({"BARTSCORE_APP_LONG_SOURCE": "windows;retriever=bm25"}).long_source
    corpus = space.batch.parse_upload(one_letter_sentences_file(tmp_path / "probe.csv"), max_rows=20, max_chars=5000)
    # 120 outputs x (1666 sentences + 4 places where the splitter may cut 4997 characters) x 3 windows each, for
    # faithfulness, and the 20 sources' one sentence each
    with pytest.raises(ValueError, match=r"may need up to 601,220 scored pairs .* 3 source windows .* limit here is"):
        space.batch.check_work(corpus, ["faithfulness"], NO_PROMPT, 20_000, long_source=long_source)
    small = space.batch.parse_upload(
        one_letter_sentences_file(tmp_path / "small.csv", rows=2, systems=2, sentences=5), max_rows=20, max_chars=5000
    )
    space.batch.check_work(small, ["faithfulness"], NO_PROMPT, 2 * 2 * 5 * 3 + 2, long_source=long_source)
    with pytest.raises(ValueError, match=r"may need up to 62 scored pairs"):
        space.batch.check_work(small, ["faithfulness"], NO_PROMPT, 61, long_source=long_source)
    # no faithfulness, no windows
    space.batch.check_work(corpus, ["precision"], NO_PROMPT, 20_000, long_source=long_source)


def long_sources_file(path, rows=1000):
    """The probe: 1,000 rows within every limit, each source "Ph.D. " repeated to 5,000 characters (distinct)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", "system"])
        writer.writerows([("Ph.D. " * 833)[:4990] + f" {row}.", "The council met."] for row in range(rows))
    return str(path)


def test_a_long_source_upload_is_refused_by_its_sources_sentences_before_the_scoring_thread(
    tiny_checkpoint, tmp_path, monkeypatch
):
    """1,000 sources of "Ph.D. " repeated held the scoring thread for about 310 s: only the outputs were counted."""
    settings = space.settings.settings_from_env(
        {
            "BARTSCORE_APP_MODELS": f"tiny={tiny_checkpoint}",
            "BARTSCORE_APP_DEFAULT_MODEL": "tiny",
            "BARTSCORE_APP_LONG_SOURCE": "windows;retriever=bm25",
        }
    )
    path = long_sources_file(tmp_path / "sources.csv")
    source = next(iter(pd.read_csv(path)["source"]))
    sentences_per_source = len(bart_score.split_sentences(source))  # the splitter as the reference, on one source

    def never(*args, **kwargs):
        raise AssertionError("the request reached what its check should have kept it from")

    monkeypatch.setattr(bart_score, "split_sentences", never)
    monkeypatch.setattr(bart_score.long_documents.windows, "split", never)
    monkeypatch.setattr(space_handlers, "run_exclusively", never)  # the scoring thread's queue
    monkeypatch.setattr(space_handlers, "menu_scorer", never)
    with pytest.raises(gr.Error) as raised:
        asyncio.run(space_handlers.BatchHandlers(settings).api(*settings_inputs(directions=["faithfulness"]), path))
    needed = int(re.search(r"may need up to ([\d,]+) scored pairs", raised.value.message)[1].replace(",", ""))
    assert needed >= 1000 * sentences_per_source >= 800_000
    assert "one pair for each sentence of a distinct source" in raised.value.message


def test_blank_candidate_boxes_are_skipped_and_the_others_keep_their_numbers():
    assert space.form.collect_candidates(["a", " ", "", " d \n"], MAX_CHARS) == [
        ("Candidate 1", "a"),
        ("Candidate 4", "d"),
    ]


@pytest.mark.parametrize(
    "texts, message",
    [
        (["only one", "", ""], "Enter at least 2 candidates to compare (found 1)"),
        (["", "  "], "Enter at least 2 candidates to compare (found 0)"),
        (["x"] * 7, "At most 6 candidates can be compared (found 7)"),
        (["ok", "y" * (MAX_CHARS + 1)], f"Candidate 2 has {MAX_CHARS + 1} characters; the limit is {MAX_CHARS}"),
    ],
)
def test_candidate_mistakes_are_explained(texts, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        space.form.collect_candidates(texts, MAX_CHARS)


def test_the_form_relies_on_the_librarys_check_of_the_directions_against_the_inputs_given():
    options, notes = space.form.form_options(
        ["f_score", "faithfulness"], "mean", None, "encoder", has_source=True, has_references=True
    )
    assert options.directions == ("faithfulness", "f_score") and notes == []  # the library's order
    with pytest.raises(space.form.FieldError, match="Choose at least one direction") as refused:
        space.form.form_options([], "mean", None, "encoder", has_source=True, has_references=True)
    assert refused.value.field == "directions"
    for directions, has_source, has_references, lacking in [
        (["faithfulness"], False, True, r"direction 'faithfulness' \(source -> prediction\) needs sources, which"),
        (["precision", "recall"], True, False, "direction 'precision' needs references, which"),
        (["recall"], True, False, "direction 'recall' needs references, which"),
    ]:
        with pytest.raises(bart_score.InputError, match=lacking) as refused:
            space.form.form_options(
                directions, "mean", None, "encoder", has_source=has_source, has_references=has_references
            )
        assert refused.value.option == "directions"  # which marks the directions field
    with pytest.raises(bart_score.InputError, match="needs sources, references or both"):
        space.form.form_options(bart_score.DIRECTIONS, "mean", None, "encoder", has_source=False, has_references=False)
    with pytest.raises(ValueError, match="At most 8 references"):
        space.form.check_references(["r"] * 9, MAX_CHARS)


@pytest.mark.parametrize(
    "has_source, has_references, scored, compare_note, batch_note",
    [
        (True, True, bart_score.DIRECTIONS, None, None),
        (
            True,
            False,
            ("faithfulness",),
            "precision, recall and F were left out: they need References",
            "precision, recall and F were left out: they need the file's reference columns",
        ),
        (
            False,
            True,
            ("precision", "recall", "f_score"),
            "faithfulness was left out: it needs Source",
            "faithfulness was left out: it needs the file's source column",
        ),
    ],
)
def test_every_direction_ticked_scores_those_the_inputs_allow_and_says_which_were_left_out(
    has_source, has_references, scored, compare_note, batch_note
):
    """A source and candidates pasted were refused under the page's default, every direction ticked ("direction
    'precision' needs References"), where the command line scores what the inputs allow."""
    for naming, note in [(space.naming.COMPARE_PAGE, compare_note), (space.batch.BATCH_PAGE, batch_note)]:
        options, notes = space.form.form_options(
            bart_score.DIRECTIONS,
            "mean",
            None,
            "encoder",
            has_source=has_source,
            has_references=has_references,
            naming=naming,
        )
        assert options.directions == scored and notes == ([note] if note else [])
    # what the command line scores for the same inputs, its directions left out
    assert scored == bart_score.ScoringOptions().directions_for(has_references=has_references, has_sources=has_source)
    with pytest.raises(ValueError, match=f"Reference 2 has {MAX_CHARS + 1} characters"):
        space.form.check_references(["r", "r" * (MAX_CHARS + 1)], MAX_CHARS)


# ---------------------------------------------------------------------------------------------------------------------
# The comparison and its presentation


@pytest.mark.filterwarnings("ignore:BARTScore. .* cannot be rescaled")  # the random model tells no copy apart
def test_comparison_gives_the_engines_scores_and_tokens(scorer):
    candidates = list(zip(["A", "B", "C"], CANDIDATES))
    comparison = space.candidates.compare_candidates(
        scorer,
        source=SOURCE,
        references=REFERENCES,
        candidates=candidates,
        directions=list(bart_score.DIRECTIONS),
        aggregation="max",
    )
    expected = scorer.score_directions(
        CANDIDATES,
        references=[REFERENCES] * 3,
        sources=[SOURCE] * 3,
        aggregation="max",
        rescale="corpus",
        corpus_points=bart_score.CorpusPoints(unrelated_texts=space.candidates.UNRELATED_TEXTS),
    )
    for direction in bart_score.DIRECTIONS:
        assert comparison.scores[direction] == pytest.approx(expected[direction], abs=TOLERANCE)
    assert comparison.signature == expected["signature"] and "|rescale:corpus-" in comparison.signature
    # The heatmap's tokens are those of faithfulness: their mean is each candidate's faithfulness score.
    assert comparison.tokens_given == "the source"
    for tokens, score in zip(comparison.tokens, expected["faithfulness"]):
        assert tokens[0][0] == "<s>" and tokens[-1][0] == "</s>"
        assert sum(log_prob for _, log_prob in tokens) / len(tokens) == pytest.approx(score, abs=1e-5)


def test_comparison_reference_points_are_copies_and_texts_given_unrelated_texts(copier, copier_reference_model):
    comparison = space.candidates.compare_candidates(
        copier,
        source=SOURCE,
        references=REFERENCES,
        candidates=list(zip(["A", "B", "C"], CANDIDATES)),
        directions=list(bart_score.DIRECTIONS),
    )
    unrelated = space.candidates.UNRELATED_TEXTS
    faithfulness = reference_points(
        *copier_reference_model, [(u, c) for u in unrelated for c in CANDIDATES], CANDIDATES
    )
    recall = reference_points(*copier_reference_model, [(u, r) for u in unrelated for r in REFERENCES], REFERENCES)
    expected = {
        "faithfulness": faithfulness,
        "precision": faithfulness,  # precision's targets are the candidates too
        "recall": recall,
        "f_score": ((faithfulness[0] + recall[0]) / 2, (faithfulness[1] + recall[1]) / 2),
    }
    raw = reference_directions(*copier_reference_model, CANDIDATES, [REFERENCES] * 3, [SOURCE] * 3)
    by_hand = {}
    for direction, (low, high) in expected.items():
        points = comparison.reference_points[direction]
        assert [points["unrelated"], points["copy"]] == pytest.approx([low, high], abs=TOLERANCE)
        assert high > low
        by_hand[direction] = [(x - low) / (high - low) for x in raw[direction]]
    by_hand["f_score"] = [(p + r) / 2 for p, r in zip(by_hand["precision"], by_hand["recall"])]
    for direction, rescaled in by_hand.items():
        assert comparison.rescaled[direction] == pytest.approx(rescaled, abs=1e-4)


@pytest.mark.filterwarnings("ignore:BARTScore. .* cannot be rescaled")
def test_without_a_source_the_heatmap_conditions_on_the_first_reference(scorer):
    comparison = space.candidates.compare_candidates(
        scorer,
        source="",
        references=REFERENCES,
        candidates=[("A", CANDIDATES[0]), ("B", CANDIDATES[1])],
        directions=["precision"],
    )
    assert comparison.tokens_given == "the first reference"
    expected = scorer.score([REFERENCES[0]] * 2, CANDIDATES[:2])
    means = [sum(lp for _, lp in tokens) / len(tokens) for tokens in comparison.tokens]
    assert means == pytest.approx(expected, abs=1e-5)


def made_up_comparison():
    return space.candidates.Comparison(
        names=["Candidate 1", "Candidate 2", "Candidate 3"],
        scores={"faithfulness": [-2.0, -1.5, -3.0], "f_score": [-1.0, -4.0, -1.0]},
        # f_score's copy scores below its unrelated texts: no scale, so NaN
        rescaled={"faithfulness": [0.5, 0.75, 0.0], "f_score": [math.nan] * 3},
        reference_points={"faithfulness": {"unrelated": -3.0, "copy": -1.0}, "f_score": {"unrelated": -2, "copy": -3}},
        signature="sig",
        tokens=[[("<s>", -0.5), ("<b>&", -3.25), (' "q"', -12.0), ("</s>", -1.0)], [("x", -1.0)], [("y", -2.0)]],
        tokens_given="the source",
        special_tokens={"<s>", "</s>"},
    )


def shown_table(styler):
    """The table as the browser gets it: Gradio's data, display values and cell styles."""
    return gr.Dataframe(interactive=False).postprocess(styler)


def test_tables_mark_the_best_candidate_of_each_direction_in_their_scale_including_ties():
    comparison = made_up_comparison()
    rescaled = shown_table(space.candidates.scores_table(comparison, "rescaled"))
    raw = shown_table(space.candidates.scores_table(comparison, "raw"))
    assert rescaled.headers == raw.headers == ["candidate", "faithfulness", "F"]
    best = space.candidates.BEST_STYLE
    marked = [[h for h, style in zip(rescaled.headers, row) if style == best] for row in rescaled.metadata["styling"]]
    assert marked == [[], ["faithfulness"], [], [], []]  # F has no scale: no 0–1 value is best
    marked = [[h for h, style in zip(raw.headers, row) if style == best] for row in raw.metadata["styling"]]
    assert marked == [["F"], ["faithfulness"], ["F"], [], []]  # a tie marks both
    assert rescaled.metadata["display_value"][1][1:] == ["0.750", "–"]
    assert raw.metadata["display_value"][1][1:] == ["-1.5000", "-4.0000"]
    # The data keep the engine's numbers; only the page's text is rounded.
    assert [row[1] for row in raw.data[:3]] == [-2.0, -1.5, -3.0]


def test_the_best_mark_sits_next_to_the_candidate_first_in_the_most_directions():
    comparison = made_up_comparison()
    # Candidate 2 is first on faithfulness (0–1) and ties on nothing else; F ranks raw: 1 and 3 tie
    assert space.candidates.winners(comparison) == {"faithfulness": [1], "f_score": [0, 2]}
    assert space.candidates.leading_candidate(comparison) is None  # three candidates first once each: no single best
    comparison.scores["f_score"] = [-1.0, -0.5, -4.0]
    assert space.candidates.leading_candidate(comparison) == 1
    shown = shown_table(space.candidates.scores_table(comparison, "raw"))
    assert [row[0] for row in shown.metadata["display_value"]] == [
        "Candidate 1",
        "Candidate 2 ★ best",
        "Candidate 3",
        "copy",
        "unrelated",
    ]
    assert [row[0] for row in shown.data][:3] == ["Candidate 1", "Candidate 2", "Candidate 3"]


def test_tables_end_with_each_directions_reference_points():
    comparison = made_up_comparison()
    rescaled = shown_table(space.candidates.scores_table(comparison, "rescaled"))
    raw = shown_table(space.candidates.scores_table(comparison, "raw"))
    assert [row[0] for row in raw.data[3:]] == ["copy", "unrelated"]
    assert [row[1:] for row in raw.metadata["display_value"][3:]] == [["-1.0000", "-3.0000"], ["-3.0000", "-2.0000"]]
    # f_score has no scale: its copy scores below unrelated texts
    assert [row[1:] for row in rescaled.metadata["display_value"][3:]] == [["1.000", "–"], ["0.000", "–"]]
    assert all("italic" in style for row in raw.metadata["styling"][3:] for style in row)
    with pytest.raises(ValueError, match="scale must be one of"):
        space.candidates.scores_table(comparison, "log")


def bars_of(page):
    """(direction, candidate, 0–1 value, raw score, bottom %, height %) for each bar of the chart's HTML."""
    return [
        (d, html.unescape(c), float(v), float(r), float(b), float(h))
        for d, c, v, r, b, h in re.findall(
            r'data-direction="([^"]+)" data-candidate="([^"]+)" data-value="([^"]+)" data-score="([^"]+)" '
            r'style="left: [^;]+; width: [^;]+; bottom: ([^%]+)%; height: ([^%]+)%',
            page,
        )
    ]


def test_chart_has_a_bar_per_direction_and_candidate_grouped_by_direction_from_zero():
    comparison = made_up_comparison()
    comparison.rescaled["faithfulness"] = [0.5, 1.25, -0.25]
    page = space.plots.bar_chart(comparison)
    bars = bars_of(page)
    # f_score has no scale: no bars, and a note says why
    assert [(d, c, v, r) for d, c, v, r, _, _ in bars] == [
        ("faithfulness", "Candidate 1", 0.5, -2.0),
        ("faithfulness", "Candidate 2", 1.25, -1.5),
        ("faithfulness", "Candidate 3", -0.25, -3.0),
    ]
    assert "No bars for F: a copy does not score above an unrelated text there" in page
    # The axis runs from -0.3 to 1.3 (whole tenths holding 0, 1 and every value); bars start at 0.
    low, high = space.plots.chart_limits([0.5, 1.25, -0.25])
    assert (low, high) == (-0.3, 1.3)
    zero = (0 - low) / (high - low) * 100
    for _, _, value, _, bottom, height in bars:
        assert height == pytest.approx(abs(value) / (high - low) * 100, abs=0.01)
        assert bottom == pytest.approx(zero if value >= 0 else zero - height, abs=0.01)
    assert 'aria-label="faithfulness, Candidate 2: 1.250 on the 0–1 scale (raw score -1.5000)"' in page
    assert page.count('tabindex="0"') == 3  # each bar can be reached by keyboard
    assert space.plots.chart_limits([]) == (0.0, 1.0)


def test_the_chart_escapes_candidate_names():
    comparison = made_up_comparison()
    comparison.names[0] = '<b>"A"</b>'
    page = space.plots.bar_chart(comparison)
    assert "<b>" not in page and "&lt;b&gt;&quot;A&quot;&lt;/b&gt;" in page


def test_heatmap_escapes_tokens_shows_values_on_hover_and_sets_special_tokens_apart():
    page = space.heatmap.token_heatmap(made_up_comparison())
    assert "&lt;b&gt;&amp;" in page and "<b>&" not in page
    spans = re.findall(
        r'<span class="token( special)?" style="background: ([^"]+)" title="([^"]+)" '
        r'data-logprob="([^"]+)" data-shown="([^"]+)">([^<]*)</span>',
        page,
    )
    assert len(spans) == 6
    first = spans[:4]
    assert [bool(special) for special, *_ in first] == [True, False, False, True]
    assert [float(value) for *_, value, _, _ in first] == [-0.5, -3.25, -12.0, -1.0]
    assert [shown for *_, shown, _ in first] == ["−0.50", "−3.25", "−12.00", "−1.00"]  # printed by the checkbox
    assert first[1][2] == "&#x27;&lt;b&gt;&amp;&#x27;: log p = -3.2500"
    assert first[2][2] == "&#x27; &quot;q&quot;&#x27;: log p = -12.0000"
    # Colours deepen with unlikeliness and saturate at the floor, the same scale for every candidate.
    assert first[2][1] == space.heatmap.token_colour(space.heatmap.HEATMAP_FLOOR) == space.heatmap.token_colour(-50)
    assert space.heatmap.token_colour(0) != space.heatmap.token_colour(-3.25) != space.heatmap.token_colour(-12.0)
    assert "given the source" in page and '<input type="checkbox">' in page


def test_the_heatmaps_mean_is_the_tables_score_or_says_what_it_is_instead():
    comparison = made_up_comparison()  # tokens given the source, faithfulness chosen, no prompt
    assert space.heatmap.mean_label(comparison, 0) == (
        "faithfulness -2.0000: the mean of these log-probabilities, as in the table"
    )
    comparison.prompt = "summary"
    phrases = len(bart_score.PROMPT_SETS["summary"])
    assert space.heatmap.mean_label(comparison, 0) == (
        f"mean log-probability -4.1875 (the table's faithfulness is scored with the 'summary' prompt set ({phrases} "
        f"phrases, averaged); the table's faithfulness is -2.0000)"
    )
    comparison.prompt = ["In short"]
    assert "scored with the prompt phrase 'In short'" in space.heatmap.mean_label(comparison, 0)
    comparison.prompt, comparison.tokens_given, comparison.references = None, "the first reference", 3
    comparison.aggregation = "max"
    assert space.heatmap.mean_label(comparison, 0) == (
        "mean log-probability -4.1875 (precision is not among the directions chosen)"
    )
    comparison.scores["precision"] = [-2.5, -1.0, -1.0]
    assert space.heatmap.mean_label(comparison, 0) == (
        "mean log-probability -4.1875 (the table's precision combines the 3 references by their max; the table's "
        "precision is -2.5000)"
    )
    comparison.references = 1
    assert space.heatmap.mean_label(comparison, 0).startswith("precision -2.5000: the mean of these")


def test_heatmap_marks_the_first_bytes_of_a_split_character_and_shows_the_character_whole(scorer):
    comparison = space.candidates.Comparison(
        names=["Candidate 1"],
        scores={},
        rescaled={},
        reference_points={},
        signature="",
        tokens=scorer.score_tokens(["A source."], ["Café 😀"]),
        tokens_given="the source",
        special_tokens=set(scorer.tokenizer.all_special_tokens),
    )
    page = space.heatmap.token_heatmap(comparison)
    texts = re.findall(r'<span class="token[^"]*"[^>]*>([^<]*)</span>', page)
    assert "".join(texts) == "<s>Café 😀</s>".replace("<", "&lt;").replace(">", "&gt;")
    assert 'class="token fragment"' in page and "part of the next character: log p = " in page


def test_a_direction_without_a_scale_is_a_note(scorer):
    """The tests' random BART scores copies of these candidates below the candidates given unrelated texts."""
    outcome = space_feedback.attempt(
        lambda: space.candidates.compare_candidates(
            scorer, source=SOURCE, references=[], candidates=list(zip("ABC", CANDIDATES)), directions=["faithfulness"]
        )
    )
    assert outcome.problem is None
    assert any(note.startswith("BARTScore: faithfulness cannot be rescaled") for note in outcome.notes)
    assert all(math.isnan(value) for value in outcome.value.rescaled["faithfulness"])


ACTIONS = (f"(shown as {space.batch.MISSING_SHOWN}): read its raw scores", "; read its raw scores instead")


@pytest.mark.filterwarnings("ignore:BARTScore. .* cannot be rescaled")  # the random models' scales
@pytest.mark.filterwarnings("ignore:BARTScore. .* reference points barely differ")
@pytest.mark.parametrize("model", ["tiny", "copier"])
@pytest.mark.parametrize("example", list(space.examples.EXAMPLES))
def test_the_examples_show_only_notes_a_user_can_act_on(app_settings, model, example):
    """Every Compare of the examples showed "1000 reference pairs were asked for, but the texts give only 21 distinct
    ones": the Space asks for them, and all there are are scored. The engine still says it; the page does not. What
    the page does show (the random models' scales) ends with what its user can do."""
    chosen = space.examples.EXAMPLES[example]
    arguments = [
        *settings_inputs(model, chosen["directions"], "mean", chosen["prompt"], "", chosen["prompt_side"]),
        chosen["source"],
        chosen["references"],
        candidate_boxes(*chosen["candidates"]),
    ]
    handlers = space_handlers.CompareHandlers(dataclasses.replace(app_settings, max_chars=5000))
    with pytest.warns(UserWarning, match=r"1000 reference pairs were asked for, but the texts give only \d+"):
        handlers.compute(handlers.check(*arguments))
    outcome = asyncio.run(space_handlers.outcome_of(handlers.check, handlers.compute, *arguments))
    assert outcome.problem is None
    for note in outcome.notes:
        assert note.endswith(ACTIONS), note


def test_an_uploads_reference_points_show_no_note_about_their_number(app_settings, tmp_path):
    rows = "".join(
        f"Source {row} about {topic}.,Out {row} on {topic}.,Other {row}.\n" for row, topic in enumerate("ab")
    )
    path = batch_file(tmp_path, "small.csv", "source,A,B\n" + rows)
    arguments = (*settings_inputs("copier", ["faithfulness"]), path, "corpus")
    handlers = space_handlers.BatchHandlers(app_settings)
    outcome = asyncio.run(space_handlers.outcome_of(handlers.check, handlers.compute, *arguments))
    assert outcome.problem is None and not [note for note in outcome.notes if "reference pairs" in note]


def test_the_engines_advice_to_library_callers_becomes_the_pages():
    unordered = bart_score.baselines.rescale.ReferencePoints(unrelated=-2.0, copy=-3.0)
    degenerate = bart_score.baselines.rescale.ReferencePoints(unrelated=-3.0, copy=-2.99)
    with pytest.warns(UserWarning) as caught:
        bart_score.baselines.rescale.rescaled_scores(
            {"faithfulness": [-2.5], "recall": [-2.9]}, {"faithfulness": unordered, "recall": degenerate}
        )
    nan, barely = (warning.message for warning in caught)
    # the data the page reads: the NaN one says what its rescaled scores are; the other keeps its remedy apart
    assert nan.remedy == () and barely.remedy == ("make the reference points from more varied texts",)
    assert [space_feedback.note_for_users(warning) for warning in (nan, barely)] == [
        "BARTScore: faithfulness cannot be rescaled: a copy scores -3.0000 on average and an unrelated text -2.0000, "
        "so this model does not tell a copy from an unrelated text here; its rescaled scores are NaN (shown as –): "
        "read its raw scores",
        "BARTScore: the rescaling's recall reference points barely differ (a copy scores -2.9900 on average, an "
        "unrelated text -3.0000: 0.01 apart, under 5% of their size), so each unit of raw score is 100 rescaled units "
        "and rescaled scores fall far outside 0..1; read its raw scores instead",
    ]
    truncated = "BARTScore truncated 1 distinct source text(s) and 0 distinct target text(s) to max_length=1024 tokens"
    shown = space_feedback.note_for_users(bart_score.TokenizationWarning(truncated))
    assert shown == truncated  # shorter texts: the user can act on it
    fewer = bart_score.errors.FewerReferencePairsWarning("BARTScore: 1000 reference pairs were asked for")
    assert space_feedback.note_for_users(fewer) is None  # hidden by its class: the Space asks for more than it needs


def test_engine_truncation_notices_become_notes_and_errors_become_messages_naming_the_field(scorer):
    long_source = "é" * MAX_CHARS  # two byte-level tokens a character: past the 1024-token limit
    outcome = space_feedback.attempt(lambda: scorer.score_directions(CANDIDATES[:2], sources=[long_source] * 2))
    assert [note for note in outcome.notes if note.startswith("BARTScore truncated 1 distinct source text")]
    no_directions = ([], "mean", None, "encoder")
    outcome = space_feedback.attempt(
        lambda: space.form.form_options(*no_directions, has_source=True, has_references=False)
    )
    assert (outcome.problem, outcome.field, outcome.value) == ("Choose at least one direction", "directions", None)
    # the library's own InputError marks the field that sets the option it names
    outcome = space_feedback.attempt(lambda: bart_score.ScoringOptions(prompt=["  "]))
    assert (outcome.problem, outcome.field) == ("Custom prompt phrase is blank", "prompt-phrase")  # by its label
    outcome = space_feedback.attempt(lambda: scorer.score_directions(CANDIDATES[:2], sources=["a source", 7]))
    assert outcome.field == "source" and outcome.problem.startswith("Source is an int"), outcome.problem
    with pytest.warns(UserWarning, match="^A note$"):  # gr.Warning outside a request is a UserWarning
        assert space_feedback.answer(space_feedback.Outcome(value=1, notes=["A note"])) == 1
    with pytest.raises(gr.Error) as raised:
        space_feedback.answer(space_feedback.Outcome(problem="Bad <b>"))
    assert raised.value.message == "Bad &lt;b&gt;" and raised.value.print_exception is False


def test_the_notes_are_the_librarys_tokenization_and_rescaling_warnings_picked_by_category():
    """Not its long-source notes (about the operator's settings), nor another library's warnings."""

    def work():
        warnings.warn("BARTScore truncated 1 distinct source text(s)", bart_score.TokenizationWarning, stacklevel=1)
        warnings.warn("BARTScore: recall cannot be rescaled", bart_score.RescaleWarning, stacklevel=1)
        warnings.warn("long_source='windows': 1 sentence(s) were cut", bart_score.LongSourceWarning, stacklevel=1)
        warnings.warn("`torch_dtype` is deprecated! Use `dtype` instead!", UserWarning, stacklevel=1)  # transformers
        return 1

    outcome = space_feedback.attempt(work)
    assert outcome.notes == [
        "BARTScore truncated 1 distinct source text(s)",
        "BARTScore: recall cannot be rescaled (shown as –): read its raw scores",
    ]


# ---------------------------------------------------------------------------------------------------------------------
# Uploaded files


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return str(path)


def parse(path, max_rows=MAX_ROWS, max_chars=MAX_CHARS):
    return space.batch.parse_upload(path, max_rows=max_rows, max_chars=max_chars)


def test_csv_upload_with_several_reference_columns_keeps_texts_as_written(tmp_path):
    path = write(
        tmp_path,
        "outputs.csv",
        "\ufeffid,source,reference_1,reference_2,sys a,sys b\r\n"
        'x1,"Src, one",Ref one,,Out a1,Out b1\r\n'
        "\r\n"
        "x2,Src two,Ref two,Ref two b, Out a2 ,\r\n",
    )
    corpus = parse(path)
    assert corpus.ids == ["x1", "x2"]
    assert corpus.sources == ["Src, one", "Src two"]
    assert corpus.references == [["Ref one"], ["Ref two", "Ref two b"]]  # the empty reference cell is skipped
    # No stripping, and an empty output is the empty text, scored like any other.
    assert corpus.systems == {"sys a": ["Out a1", " Out a2 "], "sys b": ["Out b1", ""]}


def test_jsonl_upload_with_references_as_a_list(tmp_path):
    lines = [
        {"id": 7, "references": ["r1", "", "r1b"], "s1": "o1", "s2": "p1"},
        {},
        {"references": "r2", "s1": "o2", "s2": "p2"},
    ]
    path = write(tmp_path, "outputs.jsonl", "\n".join(json.dumps(line) if line else "" for line in lines))
    corpus = parse(path)
    assert (corpus.ids, corpus.sources) == (["7", ""], None)
    assert corpus.references == [["r1", "r1b"], ["r2"]]
    assert corpus.systems == {"s1": ["o1", "o2"], "s2": ["p1", "p2"]}


def test_a_csv_row_of_empty_cells_is_a_row_of_empty_texts(tmp_path):
    # Only a line with no field at all is no row (blank lines, and the final newline).
    path = write(tmp_path, "emptyrow.csv", "\r\nid,source,A,B\r\n1,x,a,b\r\n,,,\r\n\r\n3,x3,a3,b3\r\n\r\n\r\n")
    corpus = parse(path)
    assert (corpus.ids, corpus.sources) == (["1", "", "3"], ["x", "", "x3"])
    assert corpus.systems == {"A": ["a", "", "a3"], "B": ["b", "", "b3"]}


def test_jsonl_ids_are_text_or_numbers_as_json_writes_them(tmp_path):
    lines = [{"id": "a1"}, {"id": 7}, {"id": 2.5}, {"id": -1e300}, {"id": None}, {}, {"id": ""}]
    content = "".join(json.dumps({**line, "source": "s", "sys": "o"}) + "\n" for line in lines)
    assert parse(write(tmp_path, "ids.jsonl", content)).ids == ["a1", "7", "2.5", "-1e+300", "", "", ""]


def test_upload_reads_the_same_as_the_command_lines_reader(tmp_path):
    path = write(tmp_path, "outputs.csv", "source,reference,sys\nSrc,Ref,Out\n")
    assert parse(path) == bart_score.read_table_corpus(path)


# The reader's messages name the file by its base name, never by the temporary path Gradio keeps it under.
BAD_UPLOADS = [
    ("outputs.txt", "source,sys\na,b\n", "Upload a .csv or .jsonl file (got 'outputs.txt')"),
    ("empty.csv", "", "empty.csv is empty"),
    ("blank.jsonl", "\n \n", "blank.jsonl is empty"),
    ("header.csv", "source,sys\n", "header.csv has column names but no rows"),
    ("latin1.csv", "source,sys\ncaf\xe9,x\n".encode("latin-1"), "latin1.csv is not UTF-8 text (byte 0xe9 on line 2)"),
    ("nosys.csv", "source,reference\na,b\n", "nosys.csv has no system column"),
    ("noinput.csv", "output a,output b\nx,y\n", "noinput.csv needs a 'source' column and/or reference columns"),
    ("ragged.csv", "source,sys\na,b,c\n", "ragged.csv line 2 has 3 fields but the header has 2"),
    ("unnamed.csv", "source,,sys\na,b,c\n", "unnamed.csv: column 2 has no name"),
    ("twice.csv", "source,sys,sys\na,b,c\n", "twice.csv: column names appear more than once: sys"),
    ("broken.jsonl", '{"source": "a", "sys": \n', "broken.jsonl line 1 is not valid JSON"),
    ("list.jsonl", "[1, 2]\n", "list.jsonl line 1 is not a JSON object"),
    ("number.jsonl", '{"source": "a", "sys": 3}\n', "number.jsonl row 1, column 'sys': expected text"),
    ("norefs.csv", "source,reference_1,reference_2,sys\na,r,,b\nc,,,d\n", "norefs.csv row 2 has no reference"),
    (
        "nosource.jsonl",
        '{"source": "a", "sys": "b"}\n{"sys": "d"}\n',
        "nosource.jsonl row 2, column 'source': expected text, got nothing",
    ),
    (
        "nooutput.jsonl",
        '{"source": "a", "s1": "b", "s2": "c"}\n{"source": "a", "s1": "b"}\n',
        "nooutput.jsonl row 2, column 's2': expected text, got nothing",
    ),
    (
        "long.csv",
        f"source,sys\na,{'w' * (MAX_CHARS + 1)}\n",
        f"long.csv row 1, column 'sys' has {MAX_CHARS + 1} characters; the limit is {MAX_CHARS}",
    ),
    (
        "longsource.csv",
        f"source,sys\na,b\n{'s' * (MAX_CHARS + 1)},b\n",
        f"longsource.csv row 2, column 'source' has {MAX_CHARS + 1} characters; the limit is {MAX_CHARS}",
    ),
    (
        "longref.jsonl",
        json.dumps({"reference": "r", "reference_2": "r" * (MAX_CHARS + 1), "sys": "o"}),
        f"longref.jsonl row 1, column 'reference_2' has {MAX_CHARS + 1} characters; the limit is {MAX_CHARS}",
    ),
    (
        "longlistref.jsonl",
        json.dumps({"references": ["r", "r" * (MAX_CHARS + 1)], "sys": "o"}),
        f"longlistref.jsonl row 1, column 'references' has {MAX_CHARS + 1} characters; the limit is {MAX_CHARS}",
    ),
    (
        "longid.csv",
        f"id,source,sys\n{'i' * (MAX_CHARS + 1)},a,b\n",
        f"longid.csv row 1, column 'id' has {MAX_CHARS + 1} characters",
    ),
    (
        "manycolumns.csv",
        ",".join(f"c{i}" for i in range(space.batch.MAX_COLUMNS + 1)) + "\n",
        f"manycolumns.csv has {space.batch.MAX_COLUMNS + 1} columns; the limit is {space.batch.MAX_COLUMNS}",
    ),
    (
        "manycolumns.jsonl",
        json.dumps({"source": "s", "sys": "o"})
        + "\n"
        + json.dumps({f"c{i}": "x" for i in range(space.batch.MAX_COLUMNS)}),
        f"manycolumns.jsonl has at least {space.batch.MAX_COLUMNS + 2} columns (by line 2); "
        f"the limit is {space.batch.MAX_COLUMNS}",
    ),
    (
        "surrogate.jsonl",
        '{"source": "a", "sys": "b\\ud800"}\n',
        "surrogate.jsonl row 1, column 'sys' holds '\\ud800' at character 1, a lone surrogate",
    ),
    ("deep.jsonl", '{"source": "a", "sys": ' + "[" * 100_000 + "]" * 100_000 + "}\n", "deep.jsonl line 1 nests JSON"),
    ("manyrefs.jsonl", json.dumps({"references": ["r"] * 9, "sys": "o"}), "Row 1 has 9 references; the limit is 8"),
    (
        "wide.csv",
        "source," + ",".join(f"s{i}" for i in range(7)) + "\n" + ",".join("x" * 8) + "\n",
        "The file has 7 system columns; the limit is 6",
    ),
    (
        "long.jsonl",
        "".join(json.dumps({"source": "s", "sys": "o"}) + "\n" for _ in range(MAX_ROWS + 1)),
        f"long.jsonl has more than {MAX_ROWS} rows; the limit is {MAX_ROWS}",
    ),
    (
        "longrows.csv",
        "source,sys\n" + "s,o\n" * (MAX_ROWS + 1),
        f"longrows.csv has more than {MAX_ROWS} rows; the limit is {MAX_ROWS}",
    ),
    # A cell longer than the csv module's own field limit (131,072) gets the same message as a shorter one.
    (
        "huge.csv",
        f"source,reference,sys\na,r,{'w' * 200_000}\n",
        f"huge.csv row 1, column 'sys' has 200000 characters; the limit is {MAX_CHARS}",
    ),
    (
        "hugequoted.csv",
        f'source,reference,sys\na,r,b\n"{"s" * 140_000}",r,b\n',
        f"hugequoted.csv row 2, column 'source' has 140000 characters; the limit is {MAX_CHARS}",
    ),
    # A row of empty cells is a row (of empty texts), so row numbers stay those of the file.
    ("emptyrow.csv", "source,reference,A,B\nx,y,a,b\n,,,\nx2,y2,a2,b2\n", "emptyrow.csv row 2 has no reference"),
    (
        "dupkey.jsonl",
        '{"source": "a", "A": "b"}\n{"source": "a", "A": "b", "A": "c"}\n',
        "dupkey.jsonl line 2: key 'A'",
    ),
    (
        "dupsource.jsonl",
        '{"source": "a", "source": "b", "A": "c"}\n',
        "dupsource.jsonl line 1: key 'source' appears twice",
    ),
    (
        "idobject.jsonl",
        '{"id": {"x": 1}, "source": "a", "A": "b"}\n',
        "idobject.jsonl row 1, column 'id': an id is text",
    ),
    ("idbool.jsonl", '{"id": true, "source": "a", "A": "b"}\n', "idbool.jsonl row 1, column 'id': an id is text"),
    ("idlist.jsonl", '{"id": [1], "source": "a", "A": "b"}\n', "idlist.jsonl row 1, column 'id': an id is text"),
]


@pytest.mark.parametrize("name, content, message", BAD_UPLOADS, ids=[name for name, _, _ in BAD_UPLOADS])
def test_malformed_uploads_are_explained(tmp_path, name, content, message):
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        parse(write(tmp_path, name, content))
    assert str(tmp_path) not in str(raised.value)


def test_uploads_over_the_size_limit_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(space.batch, "MAX_UPLOAD_BYTES", 1024 * 1024)
    path = write(tmp_path, "big.csv", "source,sys\n" + "a,b\n" * (1024 * 1024 // 4))
    with pytest.raises(ValueError, match="The file is larger than 1 MB"):
        parse(path)


def test_file_scores_match_the_engine_and_compare_systems(scorer):
    corpus = bart_score.Corpus(
        sources=[SOURCE, "The team won the game.", "It rained all day."],
        references=[REFERENCES, ["The team won."], ["Rain all day."]],
        systems={"a": CANDIDATES, "b": ["A library.", "", "Sunny."]},
    )  # "" is scored too
    result = space.batch.score_upload(scorer, corpus, directions=["faithfulness", "f_score"], aggregation="max")
    expected = {
        name: scorer.score_directions(
            outputs,
            references=corpus.references,
            sources=corpus.sources,
            directions=["faithfulness", "f_score"],
            aggregation="max",
        )
        for name, outputs in corpus.systems.items()
    }
    assert list(result.rows.columns) == ["row", "a/faithfulness", "a/f_score", "b/faithfulness", "b/f_score"]
    assert list(result.rows["row"]) == [1, 2, 3]
    for name in ("a", "b"):
        for direction in ("faithfulness", "f_score"):
            assert list(result.rows[f"{name}/{direction}"]) == pytest.approx(expected[name][direction], abs=TOLERANCE)
    assert all(math.isfinite(score) for score in result.rows["b/f_score"])
    # The statistics are those of compare_systems on the scores the app shows (separate engine calls batch
    # differently, so their scores agree only within TOLERANCE).
    stats = bart_score.compare_systems({name: list(result.rows[f"{name}/f_score"]) for name in ("a", "b")})
    summary = result.summary[result.summary["direction"] == "f_score"]
    assert list(summary["mean"]) == pytest.approx([s["mean"] for s in stats["systems"]], abs=1e-9)
    assert list(summary["95% CI low"]) == pytest.approx([s["ci_low"] for s in stats["systems"]], abs=1e-9)
    pair = result.pairs[result.pairs["direction"] == "f_score"].iloc[0]
    assert pair["bootstrap p"] == pytest.approx(stats["pairs"][0]["bootstrap_p"])
    assert pair["better"] == (stats["pairs"][0]["winner"] or "no significant difference")
    assert result.signature.startswith(f"ckpt:{scorer.checkpoint}|dirs:faithfulness+f_score|agg:max|nrefs:1-2|")


# ---------------------------------------------------------------------------------------------------------------------
# The Compare tab through the API


REFERENCE_LINES = "\n".join(REFERENCES)


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
        prompt="custom",
        phrase="In other words",
        side="decoder",
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
        "model",
        "directions",
        "aggregation",
        "prompt_choice",
        "prompt_phrase",
        "prompt_side",
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
        (dict(prompt="custom", phrase="  "), "Enter a custom prompt phrase"),
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
def test_api_batch_rescales_as_the_library_and_the_command_line_do(client, copier, copying_checkpoint, tmp_path):
    path = write_documents_csv(tmp_path / "documents.csv")
    directions = ["faithfulness", "recall"]
    summary, rescaled_summary, _, rows, _, signature, intervals = client.predict(
        *settings_inputs(model="copier", directions=directions), handle_file(path), "corpus", api_name="/score_file"
    )
    corpus = bart_score.read_table_corpus(path)
    per_system, expected_signature = bart_score.score_corpus(copier, corpus, directions=directions, rescale="corpus")
    assert signature == shown_signature(expected_signature, copier, "copier") and "|rescale:corpus-" in signature
    code, stdout, stderr = run_cli(
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


# ---------------------------------------------------------------------------------------------------------------------
# Values that are not numbers, and the smallest results (one system, one row)

SUMMARY_COLUMNS = ["direction", "system", "mean", "95% CI low", "95% CI high"]
NAN = math.nan


def summary_frame(rows):
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def panel_directions(page):
    return re.findall(r'<div class="panel" data-direction="([^"]+)"', page)


def test_column_widths_hold_each_headers_longest_word_or_what_its_cells_need():
    widths = space.batch.column_widths(["candidate", "faithfulness", "F"], {"candidate": 11})
    shares = [float(width.removesuffix("%")) for width in widths]
    weights = [max(1.2 * 9, 11) + 1, 1.2 * 12 + 1, 7 + 1]  # bold letters, a number's 7 characters, one more each
    assert shares == pytest.approx([100 * weight / sum(weights) for weight in weights], abs=0.01)
    assert space.batch.column_widths(["Δ mean (A − B)"], pixels=True) == [f"{round((1.2 * 14 + 1) * 9) + 16 + 24}px"]


def test_a_phones_cards_name_every_value_and_escape_what_the_user_sent():
    frame = pd.DataFrame({"row": [1], "system": ["<b>s</b>"], "faithfulness": [-1.5], "output": ["a <i>text</i>"]})
    page = space.batch.cards(
        frame,
        lambda row: f"{row['row']} · {row['system']}",
        {"faithfulness": space.batch.number_text(2), "recall": space.batch.number_text(2)},
        title="Per-row scores",
        details=("output", "source"),
    )
    assert '<p class="card-head">1 · &lt;b&gt;s&lt;/b&gt;</p><dl><dt>faithfulness</dt><dd>−1.50</dd></dl>' in page
    assert "<details><summary>texts</summary><dl><dt>output</dt><dd>a &lt;i&gt;text&lt;/i&gt;</dd></dl>" in page
    assert "<b>" not in page and "<i>" not in page and "recall" not in page and "source" not in page


@pytest.mark.parametrize(
    "rows, panels, drawn, note",
    [
        # a direction that cannot be rescaled (NaN means and intervals) beside one that can
        (
            [
                ["faithfulness", "A", -2.0, -2.1, -1.9],
                ["faithfulness", "B", -2.0, -2.1, -1.9],
                ["faithfulness_rescaled", "A", NAN, NAN, NAN],
                ["faithfulness_rescaled", "B", NAN, NAN, NAN],
                ["recall_rescaled", "A", 0.4, 0.3, 0.5],
                ["recall_rescaled", "B", 0.6, 0.5, 0.7],
            ],
            ["recall_rescaled"],
            2,
            "faithfulness_rescaled (this direction cannot be rescaled)",
        ),
        # no direction can be rescaled: the raw scores are drawn
        (
            [
                ["faithfulness", "A", -2.0, -2.1, -1.9],
                ["faithfulness", "B", -3.0, -3.1, -2.9],
                ["faithfulness_rescaled", "A", NAN, NAN, NAN],
                ["faithfulness_rescaled", "B", NAN, NAN, NAN],
            ],
            ["faithfulness"],
            2,
            "faithfulness_rescaled (this direction cannot be rescaled)",
        ),
        # one row: means without intervals
        (
            [["faithfulness", "A", -2.0, NAN, NAN], ["faithfulness", "B", -3.0, NAN, NAN]],
            ["faithfulness"],
            2,
            "A in faithfulness (no interval); B in faithfulness (no interval)",
        ),
        # one system, one row, its interval a single point
        ([["recall", "A", -2.0, -2.0, -2.0]], ["recall"], 1, None),
        # one system's mean is missing, the other's is drawn
        (
            [["recall", "A", NAN, NAN, NAN], ["recall", "B", -1.0, -1.5, -0.5]],
            ["recall"],
            1,
            "A in recall (no mean)",
        ),
        # nothing at all can be drawn
        ([["recall", "A", NAN, NAN, NAN]], [], 0, "A in recall (no mean)"),
        ([["recall", "A", math.inf, NAN, NAN]], [], 0, "A in recall (no mean)"),
    ],
)
def test_the_interval_plot_leaves_out_values_that_are_not_numbers_and_says_which(rows, panels, drawn, note):
    page = space.plots.interval_plot(summary_frame(rows))
    assert panel_directions(page) == panels
    assert page.count('<g class="system"') == drawn
    assert not re.search(r"\bnan\b|\binf\b", page, re.IGNORECASE)
    if note:
        assert f"Not drawn, as the value is not a number: {note}." in page
    else:
        assert 'class="note"' not in page
    for mean in re.findall(r'data-mean="([^"]+)"', page):
        assert math.isfinite(float(mean))


def test_a_mean_without_an_interval_is_a_dot_alone():
    page = space.plots.interval_plot(
        summary_frame([["recall", "A", -2.0, NAN, NAN], ["recall", "B", -1.0, -1.2, -0.8]])
    )
    first, second = page.split('<g class="system"')[1:]
    assert "no confidence interval" in first and "stroke-width" not in first and "<circle" in first
    assert "95% CI -1.2000 to -0.8000" in second and "stroke-width" in second


def shown_rows(styler):
    """The texts a browser shows for a table: the display values Gradio's Dataframe sends with the data."""
    metadata = gr.Dataframe().postprocess(styler).metadata  # None for a table without rows
    return metadata["display_value"] if metadata else []


def shown_cells(styler):
    return [cell for row in shown_rows(styler) for cell in row]


def test_tables_show_values_that_are_not_numbers_as_a_dash():
    assert space.batch.p_value_text(NAN) == "–"
    assert space.batch.p_value_text(np.float64("nan")) == "–"
    summary = summary_frame([["faithfulness_rescaled", "A", NAN, NAN, NAN], ["recall", "A", -1.0, NAN, NAN]])
    pairs = pd.DataFrame(
        [["recall", "A", "B", NAN, NAN, NAN, "cannot be tested"]],
        columns=["direction", "system A", "system B", "Δ mean (A − B)", "bootstrap p", "t-test p", "better"],
    )
    rows = pd.DataFrame({"row": [1], "A/recall": [NAN], "A/recall_rescaled": [0.5]})
    for styler in (
        space.batch.summary_table(summary, rescaled=False),
        space.batch.summary_table(summary, rescaled=True),
        space.batch.formatted(
            pairs,
            {"Δ mean (A − B)": "{:.4f}", "bootstrap p": space.batch.p_value_text, "t-test p": space.batch.p_value_text},
        ),
        space.batch.formatted(rows, {"A/recall": "{:.4f}", "A/recall_rescaled": "{:.4f}"}),
    ):
        cells = shown_cells(styler)
        assert not any(re.search(r"\bnan\b", cell, re.IGNORECASE) for cell in cells)
    assert shown_cells(space.batch.summary_table(summary, rescaled=False)) == ["A", "−1.00"]  # a mean, no interval
    assert shown_cells(space.batch.summary_table(summary, rescaled=True)) == ["A", "–"]
    assert shown_cells(space.batch.formatted(pairs, {"bootstrap p": space.batch.p_value_text}))[4] == "–"

    comparison = space.candidates.Comparison(
        names=["A", "B"],
        scores={"faithfulness": [NAN, -2.0], "recall": [NAN, NAN]},
        rescaled={"faithfulness": [NAN, NAN], "recall": [NAN, NAN]},
        reference_points={"faithfulness": {"copy": NAN, "unrelated": NAN}, "recall": {"copy": -1.0, "unrelated": -3.0}},
        signature="sig",
        tokens=[],
        tokens_given="the source",
        special_tokens=set(),
    )
    for scale in space.candidates.SCALES:
        cells = shown_cells(space.candidates.scores_table(comparison, scale))
        assert "–" in cells and not any(re.search(r"\bnan\b", cell, re.IGNORECASE) for cell in cells)
    # B is first in faithfulness; a score that is not a number is never first, so recall has no first candidate
    assert space.candidates.winners(comparison) == {"faithfulness": [1], "recall": []}
    assert shown_cells(space.candidates.scores_table(comparison, "raw"))[3] == "B ★ best"
    assert "No bars for faithfulness, recall" in space.plots.bar_chart(comparison)
    assert 'class="bar"' not in space.plots.bar_chart(comparison)
    assert space.verdict.verdict(comparison).startswith("B is the most faithful to the source (raw score −2.00")
    comparison.scores["faithfulness"] = [NAN, NAN]
    assert space.verdict.verdict(comparison) == (
        "No candidate can be ranked: no direction gave a score that is a number."
    )


def test_the_csv_download_writes_a_value_that_is_not_a_number_as_an_empty_cell():
    rows = pd.DataFrame({"row": [1, 2], "A/recall": [-1.5, NAN], "A/recall_rescaled": [NAN, NAN]})
    with open(space.batch.write_results_csv(rows), encoding="utf-8") as handle:
        assert handle.read().splitlines() == ["row,A/recall,A/recall_rescaled", "1,-1.5,", "2,,"]


# ---------------------------------------------------------------------------------------------------------------------
# Handlers, called as Gradio calls them


@pytest.fixture(scope="module")
def handlers(app_settings):
    return event_functions(app.build_demo(app_settings))


def batch_file(tmp_path, name, content):
    return write(tmp_path, name, content)


@pytest.mark.parametrize(
    "name, content",
    [
        ("same.csv", "source,reference,A,B\nthe cat,the dog,a,a\nthe mat,the dog,b,b\nthe hat,x dog,c,c\n"),
        ("onerow.csv", "source,reference,A,B\nthe cat,the dog,a,b\n"),
        ("onesystem.csv", "source,reference,A\nthe cat,the dog,a\nthe mat,a dog,b\n"),
        ("onebyone.csv", "source,reference,A\nthe cat,the dog,a\n"),
    ],
)
@pytest.mark.parametrize("rescale", ["none", "corpus"])
def test_batch_results_of_any_shape_are_shown_without_an_error(handlers, tmp_path, name, content, rescale):
    """Systems that score alike, a single row and a single system: directions that cannot be rescaled, tests and
    intervals that one row cannot give are shown as "–" and left out of the plot, never a crash."""
    try:
        summary, rescaled_summary, pairs, rows, download, _, intervals = handlers["score_file"](
            *settings_inputs(), batch_file(tmp_path, name, content), rescale
        )
    except gr.Error as error:  # one row is one document: corpus reference points need two
        assert rescale == "corpus" and name in ("onerow.csv", "onebyone.csv"), error.message
        assert "needs unrelated pairs, from different documents" in error.message
        return
    assert space.batch.column_types(rows.data)[:3] == ["number", "str", "str"]  # row, system, output
    for styler in (summary, rescaled_summary, pairs, rows):
        cells = shown_cells(styler)
        assert not any(re.search(r"\bnan\b", cell, re.IGNORECASE) for cell in cells)
    if name == "onerow.csv":  # one row: no test can be made, its p-values are shown as "–", and it says so
        assert {tuple(row[4:7]) for row in shown_rows(pairs)} == {("–", "–", "cannot be tested")}
    if name in ("onesystem.csv", "onebyone.csv"):
        assert len(pairs.data) == 0
    assert not re.search(r"\bnan\b", intervals, re.IGNORECASE)
    assert panel_directions(intervals)
    with open(download, encoding="utf-8") as handle:
        assert "nan" not in handle.read().lower()


def test_everything_a_handler_builds_after_scoring_fails_as_a_message(handlers, tmp_path, monkeypatch):
    path = batch_file(tmp_path, "docs.csv", "source,reference,A,B\nthe cat,the dog,a,b\nthe mat,a dog,c,d\n")
    for name in ("interval_plot", "write_results_csv", "formatted", "summary_table"):
        with monkeypatch.context() as patch:
            patch.setattr(space.handlers, name, lambda *args, **kwargs: {}["a key that is not there"])
            with pytest.raises(gr.Error, match=r"The request failed on the server \(KeyError\)"):
                handlers["score_file"](*settings_inputs(directions=["faithfulness"]), path, "none")
    with monkeypatch.context() as patch:
        patch.setattr(space.handlers, "token_heatmap", lambda comparison: 1 / 0)
        with pytest.raises(gr.Error, match=r"The request failed on the server \(ZeroDivisionError\)"):
            handlers["compare"](*settings_inputs(directions=["faithfulness"]), SOURCE, "", *candidate_boxes("a", "b"))


# ---------------------------------------------------------------------------------------------------------------------
# Blank reference cells, and how much work a comparison is


@pytest.mark.parametrize(
    "name, content, count",
    [
        ("emptyref.csv", "source,reference_1,reference_2,A,B\nthe cat,the dog,,a,b\nthe mat,,a dog,c,d\n", 2),
        ("reflist.jsonl", json.dumps({"source": "x", "references": ["r1", "  ", ""], "A": "a", "B": "b"}) + "\n", 2),
        ("one.csv", "source,reference_1,reference_2,A\nthe cat,the dog, ,a\n", 1),
    ],
)
def test_blank_reference_cells_are_counted_in_a_warning(handlers, tmp_path, name, content, count):
    path = batch_file(tmp_path, name, content)
    cells = "cell was" if count == 1 else "cells were"
    with pytest.warns(UserWarning, match=f"^{count} blank reference {cells} skipped"):  # gr.Warning outside a request
        handlers["score_file"](*settings_inputs(directions=["precision"]), path, "none")
    assert space.batch.blank_reference_note(parse(path)).startswith(f"{count} blank reference {cells} skipped")


def test_a_file_without_blank_references_has_no_note(tmp_path):
    assert space.batch.blank_reference_note(parse(batch_file(tmp_path, "f.csv", "reference,A\nr,a\n"))) is None


def compare_work(candidates=6, references=8, source="s", directions=bart_score.DIRECTIONS, prompt="summary", limit=1):
    space.candidates.check_compare_work(
        source=source,
        references=[f"r{i}" for i in range(references)],
        candidates=[(f"Candidate {i}", f"c{i}") for i in range(candidates)],
        directions=list(directions),
        prompts=bart_score.ScoringOptions(prompt=prompt).prompts,
        max_pairs=limit,
    )


def test_comparisons_that_need_too_much_work_are_refused_saying_how_much():
    # 6 candidates x (1 + 2 x 8) = 102 pairs; reference points: 6 unrelated texts x 6 candidates + 6 copies, and
    # 6 x 8 + 8 for the references = 98; x 70 phrases; + 6 for the heatmap
    with pytest.raises(
        ValueError, match=r"^Scoring these candidates needs 14,006 scored pairs .*the limit here is 1\."
    ):
        compare_work()
    compare_work(limit=14_006)
    with pytest.raises(ValueError, match=r"needs 14,006 scored pairs"):
        compare_work(limit=14_005)
    # faithfulness only, no prompt: 2 candidates + 2 x 6 unrelated + 2 copies + 2 for the heatmap
    with pytest.raises(ValueError, match=r"needs 18 scored pairs"):
        compare_work(candidates=2, references=0, directions=["faithfulness"], prompt=None)
    compare_work(candidates=2, references=0, directions=["faithfulness"], prompt=None, limit=18)
    # a custom phrase is one prompt; recall alone needs the references' points only
    # 2 candidates x 2 references + 2 x 6 unrelated + 2 copies of the references, x 1 phrase; + 2 for the heatmap
    with pytest.raises(ValueError, match=r"needs 20 scored pairs"):
        compare_work(candidates=2, references=2, source="", directions=["recall"], prompt=["In short"], limit=19)


def test_a_comparison_over_the_limit_is_refused_before_the_model_is_used(app_settings, monkeypatch):
    compare = event_functions(app.build_demo(dataclasses.replace(app_settings, max_pairs=100)))["compare"]
    monkeypatch.setattr(space.settings, "menu_scorer", lambda *args: pytest.fail("the model was used"))
    monkeypatch.setattr(space.handlers, "menu_scorer", lambda *args: pytest.fail("the model was used"))
    references = "\n".join(f"Reference {i}" for i in range(8))
    with pytest.raises(gr.Error, match=r"needs 14,006 scored pairs .* the limit here is 100\. Use fewer candidates"):
        compare(*settings_inputs(prompt="summary"), SOURCE, references, *[f"Candidate text {i}" for i in range(6)])


# ---------------------------------------------------------------------------------------------------------------------
# The verdict above the table


def comparison_of(rescaled, scores=None):
    """A comparison of the given 0–1 values (direction -> one per candidate); raw scores alike unless given."""
    count = len(next(iter(rescaled.values())))
    return space.candidates.Comparison(
        names=[f"Candidate {i}" for i in range(1, count + 1)],
        scores=scores or {d: [v - 3 for v in values] for d, values in rescaled.items()},
        rescaled=rescaled,
        reference_points={d: {"unrelated": -3.0, "copy": -2.0} for d in rescaled},
        signature="sig",
        tokens=[[("x", -1.0)]] * count,
        tokens_given="the source",
        special_tokens=set(),
    )


def test_the_verdict_names_the_most_faithful_candidate_on_the_0_1_scale_and_where_else_it_leads():
    comparison = comparison_of(
        {"faithfulness": [0.731, 0.334], "precision": [0.6, 0.2], "recall": [0.5, 0.4], "f_score": [0.55, 0.3]}
    )
    assert space.verdict.verdict(comparison) == (
        "Candidate 1 is the most faithful to the source (0.73 on the 0–1 scale from an unrelated text (0) to a copy "
        "(1); next: Candidate 2, 0.33) and scores highest on precision, recall and F too."
    )
    assert space.verdict.verdict(comparison_of({"recall": [0.1, -0.25, 0.9]})) == (
        "Candidate 3 scores highest on recall (0.90 on the 0–1 scale from an unrelated text (0) to a copy (1); next: "
        "Candidate 1, 0.10)."
    )
    assert space.verdict.verdict(comparison_of({"faithfulness": [0.5, 0.5, 0.1]})).startswith(
        "Candidate 1 and Candidate 2 tie as the most faithful to the source (0.50 on the 0–1 scale"
    )


def test_when_the_directions_disagree_the_verdict_says_so_and_what_each_direction_asks():
    comparison = comparison_of(
        {"faithfulness": [0.9, 0.2], "precision": [0.3, 0.4], "recall": [0.2, 0.7], "f_score": [0.25, 0.55]}
    )
    assert space.verdict.verdict(comparison) == (
        "The directions disagree: Candidate 1 comes first on faithfulness 0.90; Candidate 2 comes first on precision "
        "0.40, recall 0.70 and F 0.55 (0–1 scale: 0 = an unrelated text, 1 = a copy). Faithfulness asks whether a "
        "candidate says only what the source supports, precision whether what it says is in the references, recall "
        "whether it covers what the references say and F averages precision and recall."
    )
    # No 0–1 scale for faithfulness: its raw scores rank, and the sentence says they are raw.
    comparison = comparison_of(
        {"faithfulness": [NAN, NAN], "recall": [0.2, 0.7]}, scores={"faithfulness": [-1.0, -2.0], "recall": [0, 0]}
    )
    assert space.verdict.verdict(comparison).startswith(
        "The directions disagree: Candidate 1 comes first on faithfulness −1.00 (raw); Candidate 2 comes first on "
        "recall 0.70 (0–1 scale"
    )


def test_the_verdict_and_tables_rank_by_the_values_they_show():
    # F's 0–1 value is the mean of precision's and recall's, which can rank otherwise than raw F.
    comparison = comparison_of({"f_score": [0.6, 0.5]}, scores={"f_score": [-3.0, -2.0]})
    assert space.candidates.winners(comparison) == {"f_score": [0]}
    rescaled = shown_table(space.candidates.scores_table(comparison, "rescaled"))
    raw = shown_table(space.candidates.scores_table(comparison, "raw"))
    assert rescaled.metadata["styling"][0][1] == raw.metadata["styling"][1][1] == space.candidates.BEST_STYLE


# ---------------------------------------------------------------------------------------------------------------------
# Batch results as the page shows them


def test_the_batch_summary_is_systems_by_directions_with_intervals_and_the_best_in_bold():
    summary = summary_frame(
        [
            ["faithfulness", "A", -2.514, -2.851, -2.204],
            ["faithfulness", "B", -1.5, -1.75, -1.25],
            ["f_score", "A", -1.0, -1.2, -0.8],
            ["f_score", "B", -3.0, NAN, NAN],
            ["faithfulness_rescaled", "A", 0.25, 0.2, 0.3],
            ["faithfulness_rescaled", "B", 0.75, 0.7, 0.8],
        ]
    )
    raw = shown_table(space.batch.summary_table(summary, rescaled=False))
    assert raw.headers == ["system", "faithfulness", "F"]
    assert raw.data == [["A", -2.514, -1.0], ["B", -1.5, -3.0]]
    assert raw.metadata["display_value"] == [
        ["A", "−2.51 [−2.85, −2.20]", "−1.00 [−1.20, −0.80]"],
        ["B", "−1.50 [−1.75, −1.25]", "−3.00"],
    ]
    assert [row[1:] for row in raw.metadata["styling"]] == [["", "font-weight: bold"], ["font-weight: bold", ""]]
    rescaled = shown_table(space.batch.summary_table(summary, rescaled=True))
    assert rescaled.headers == ["system", "faithfulness"]
    assert rescaled.metadata["display_value"] == [["A", "0.250 [0.200, 0.300]"], ["B", "0.750 [0.700, 0.800]"]]


def test_the_per_row_table_holds_each_systems_output_scores_and_texts(tmp_path):
    corpus = bart_score.Corpus(
        sources=["s1", "s2"], references=[["r1", "r1b"], ["r2"]], systems={"a": ["a1", "a2"], "b": ["b1", "b2"]}
    )
    corpus.ids = ["x", "y"]
    per_system = {
        "a": {"faithfulness": [-1.0, -2.0], "faithfulness_rescaled": [0.1, 0.2]},
        "b": {"faithfulness": [-3.0, -4.0], "faithfulness_rescaled": [0.3, 0.4]},
    }
    table = space.batch.texts_table(corpus, per_system)
    assert list(table.columns) == [
        "row",
        "id",
        "system",
        "output",
        "faithfulness",
        "faithfulness 0–1",
        "source",
        "references",
    ]
    assert table.values.tolist() == [
        [1, "x", "a", "a1", -1.0, 0.1, "s1", "r1\nr1b"],
        [1, "x", "b", "b1", -3.0, 0.3, "s1", "r1\nr1b"],
        [2, "y", "a", "a2", -2.0, 0.2, "s2", "r2"],
        [2, "y", "b", "b2", -4.0, 0.4, "s2", "r2"],
    ]
    assert table.sort_values("faithfulness").iloc[0]["output"] == "b2"  # the worst row, found by sorting


# ---------------------------------------------------------------------------------------------------------------------
# What the page says about a model, found without loading it


@pytest.mark.parametrize(
    "config, kind",
    [
        ({"model_type": "bart", "is_encoder_decoder": True}, "BART"),
        ({"model_type": "t5", "is_encoder_decoder": True}, "T5"),
        ({"model_type": "llama"}, "causal language model"),
        ({"model_type": "something-new", "is_encoder_decoder": True}, "model"),
    ],
)
def test_labels_follow_the_models_family(tmp_path, config, kind):
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert space.menu.model_kind(str(tmp_path)) == kind
    info = space_handlers.model_info(kind)
    assert ("BART" in info) == (kind == "BART") and info.endswith("that does the scoring")


def test_a_model_whose_configuration_cannot_be_read_is_called_a_model(tmp_path, tiny_checkpoint, empty_hf_cache):
    assert space.menu.model_kind(tiny_checkpoint) == "BART"
    assert space.menu.model_kind(str(tmp_path / "nothing")) == "model"
    assert space.menu.model_kind("org/not-cached") == "model"
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    assert space.menu.model_kind(str(tmp_path)) == "model"


def test_the_saved_baseline_is_offered_only_for_a_model_that_has_one(app_settings, scorer, tmp_path, monkeypatch):
    monkeypatch.setenv(baseline_files.BASELINE_FOLDER_ENV, str(tmp_path / "baselines"))
    descriptions = space_handlers.ModelDescriptions(app_settings)
    offered = lambda model, choice="baseline": descriptions.describe(model, choice)[1]  # noqa: E731
    assert [value for _, value in offered("tiny")["choices"]] == ["none", "corpus"]
    assert offered("tiny")["value"] == "none"  # a choice no longer offered falls back to none
    texts = ["the cat sat", "the rain fell", "a road", "the dog"]
    corpus_file = tmp_path / "texts.txt"
    corpus_file.write_text("\n".join(texts) + "\n", encoding="utf-8")
    document = build_baseline(scorer, texts=texts, corpus_file=str(corpus_file))
    baseline_files.write_baseline(document, baseline_files.default_baseline_path(document["settings"]))
    assert [value for _, value in offered("tiny")["choices"]] == ["none", "corpus", "baseline"]
    assert offered("tiny")["value"] == "baseline"
    assert [value for _, value in offered("copier")["choices"]] == ["none", "corpus"]  # another model's: not its own
    assert descriptions.describe("tiny", "none")[0]["info"] == "the BART checkpoint that does the scoring"


# ---------------------------------------------------------------------------------------------------------------------
# The page's own entries: problems stay in the status line and mark the field at fault


def page_entry(handlers_class, settings, *inputs):
    return asyncio.run(handlers_class(settings).page(*inputs))


@pytest.mark.parametrize(
    "arguments, field, message",
    [
        (dict(candidates=["only one"]), "candidate-2", "Enter at least 2 candidates to compare (found 1)"),
        (dict(candidates=["a", "b" * (MAX_CHARS + 1)]), "candidate-2", "Candidate 2 has"),
        (dict(source="s" * (MAX_CHARS + 1)), "source", "The source has"),
        (dict(references="ok\nA <s> <b>reference</b>"), "references", "Reference 2 contains &lt;s&gt;"),
        (dict(directions=[]), "directions", "Choose at least one direction"),
        (
            dict(source="", directions=["faithfulness", "recall"]),
            "directions",
            "direction 'faithfulness' (source -> prediction) needs Source, which",
        ),
        (dict(prompt="custom", phrase=" "), "prompt-phrase", "Enter a custom prompt phrase"),
        (dict(model="missing"), "model", "The model &#x27;missing&#x27; is not available"),
    ],
)
def test_the_page_keeps_a_problem_in_the_status_line_and_marks_the_field(app_settings, arguments, field, message):
    candidates = arguments.pop("candidates", CANDIDATES[:2])
    inputs = [
        *settings_inputs(**{k: v for k, v in arguments.items() if k not in ("source", "references")}),
        arguments.get("source", SOURCE),
        arguments.get("references", REFERENCE_LINES),
        *candidate_boxes(*candidates),
    ]
    outputs = page_entry(space_handlers.CompareHandlers, app_settings, *inputs)
    shown, (results, _, status, accordion, settings_status), marks = outputs[:6], outputs[6:11], outputs[11:]
    assert all(update == gr.skip() for update in shown) and results == {"__type__": "update", "visible": False}
    assert status.startswith('<div class="status problem" role="alert"><strong>Not scored:</strong> ')
    assert html.escape(html.unescape(message), quote=False) in status or message in status
    assert "<b>" not in status  # what the user sent is escaped
    marked = [name for name, mark in zip(space_handlers.COMPARE_FIELDS, marks) if mark["elem_classes"]]
    assert marked == [field]
    in_the_settings = field in space_handlers.SETTINGS_FIELDS
    assert accordion == ({"__type__": "update", "open": True} if in_the_settings else gr.skip())
    # a problem with the settings is said beside them too (on a phone, far above the button's status line)
    assert settings_status == (status if in_the_settings else space_feedback.status_line(None))


def test_the_page_shows_a_result_with_its_notes_and_unmarks_every_field(app_settings, tmp_path):
    path = write(tmp_path, "blank.csv", "source,reference_1,reference_2,A,B\nthe cat,the dog,,a,b\nthe mat,x,y,c,d\n")
    outputs = page_entry(
        space_handlers.BatchHandlers, app_settings, *settings_inputs(directions=["precision"]), path, "none"
    )
    pairs_cards, rows_cards, results, rescaled_tab, _, status, _, settings_status = outputs[7:15]
    assert outputs[3]["datatype"][:4] == ["number", "str", "str", "number"]  # row, system, output, precision
    assert results == {"__type__": "update", "visible": True} and rescaled_tab["visible"] is False
    assert status.startswith('<div class="status done" role="status">Done.<span class="note">Note: 1 blank reference')
    assert settings_status == space_feedback.status_line(None)
    assert all(mark["elem_classes"] == [] for mark in outputs[15:])
    assert len(outputs[15:]) == len(space_handlers.BATCH_FIELDS)
    assert '<p class="card-head">1 · A</p>' in rows_cards and "<dt>precision</dt>" in rows_cards
    assert '<p class="card-head">precision: A vs B</p>' in pairs_cards


def wired_names(wired_class, candidates=0):
    """The names of a space.wiring class's fields, spread as Gradio lists them (a tuple field as its candidates)."""
    names = []
    for item in dataclasses.fields(wired_class):
        if item.name == "settings":
            names += [setting.name for setting in dataclasses.fields(space.wiring.SettingsInputs)]
        elif item.name == "candidates":
            names += [f"candidate_{number}" for number in range(1, candidates + 1)]
        else:
            names.append(item.name)
    return names


def test_the_wiring_orders_the_inputs_as_the_api_names_them():
    """The page's entry reads its inputs by space.wiring's field order, the API by its parameters: one order."""
    compare = [name for name in inspect.signature(space_handlers.CompareHandlers.api).parameters if name != "self"]
    batch = [name for name in inspect.signature(space_handlers.BatchHandlers.api).parameters if name != "self"]
    assert wired_names(space.wiring.CompareInputs, space.form.MAX_CANDIDATES) == compare
    assert wired_names(space.wiring.BatchInputs) == [name for name in batch if name != "progress"]
    values = list(range(len(compare)))
    read = space.wiring.CompareInputs.read(values)
    assert read.source == 6 and read.candidates == (8, 9, 10, 11, 12, 13) and list(read) == values
    assert list(space.wiring.BatchInputs.read(range(8))) == list(range(8))


def test_counts_are_written_with_the_number_their_noun_takes(tmp_path):
    assert [bart_score.inputs.counted(n, "field") for n in (0, 1, 2)] == ["0 fields", "1 field", "2 fields"]
    assert bart_score.inputs.counted(1, "reply", "replies") == "1 reply"
    path = write(tmp_path, "ragged.csv", "source,sys,other\na,b,c\nd\n")
    with pytest.raises(ValueError, match=re.escape("ragged.csv line 3 has 1 field but the header has 3")):
        parse(path)
    with pytest.raises(ValueError, match=re.escape("rows.csv has more than 1 row; the limit is 1")):
        parse(write(tmp_path, "rows.csv", "source,sys\na,b\nc,d\n"), max_rows=1)
    one = [label for label, value in space.form.PROMPT_CHOICES if value in bart_score.PROMPT_SETS]
    assert not any(re.search(r"\b1 phrases\b", label) for label in one)


# ---------------------------------------------------------------------------------------------------------------------
# Contrast


def hexadecimal(colour):
    """(r, g, b) of a "#rrggbb" colour."""
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def test_the_colours_the_page_sets_have_aa_contrast():
    """The colours app.py sets, against the backgrounds they are drawn on (WCAG AA: at least 4.5:1 for text)."""
    white, gradio_dark = "#ffffff", "#0b0f19"
    pairs = [
        (app.HELP_TEXT_COLOUR, white),
        (app.HELP_TEXT_COLOUR_DARK, gradio_dark),
        (white, app.PRIMARY_BUTTON_COLOUR),
        (white, app.PRIMARY_BUTTON_HOVER),
        (app.PROBLEM_TEXT_COLOUR, app.PROBLEM_BACKGROUND),
        (app.DONE_TEXT_COLOUR, white),
        (app.NOTE_TEXT_COLOUR, white),
        (app.FAULT_COLOUR, white),
    ]
    for foreground, background in pairs:
        assert contrast(hexadecimal(foreground), hexadecimal(background)) >= 4.5, (foreground, background)
    assert contrast(hexadecimal("#bbbbc2"), hexadecimal(white)) < 2  # the theme's own help text, which this replaces
