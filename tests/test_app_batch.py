"""The Space's Batch tab without a server: how much work an upload is (the sentence bound of long sources), reading
uploads, values that are not numbers and the smallest results, the handlers as Gradio calls them, blank reference
cells, and the results as the page shows them."""

import asyncio
import csv
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from support.app_server import MAX_CHARS, MAX_ROWS, event_functions
from support.lazy import LazyModule
from support.space_inputs import CANDIDATES, REFERENCES, SOURCE
from support.space_pages import NAN, TOLERANCE, shown_table
from support.space_requests import batch_file, candidate_boxes, parse, settings_inputs, write

import bart_score
import space.batch
import space.candidates
import space.plots
import space.settings
import space.verdict

# Gradio and what imports it, imported by the first test that uses them (support/lazy.py).
gr = LazyModule("gradio")
app = LazyModule("app")
space_handlers = LazyModule("space.handlers")


# ---------------------------------------------------------------------------------------------------------------------
# How much work an upload is: the pairs it needs, and the sentences of long sources counted without splitting

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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# ---------------------------------------------------------------------------------------------------------------------
# Uploaded files


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


@pytest.mark.slow
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
    assert result.signature.startswith(f"ckpt:{scorer.options.checkpoint}|dirs:faithfulness+f_score|agg:max|nrefs:1-2|")


# ---------------------------------------------------------------------------------------------------------------------
# Values that are not numbers, and the smallest results (one system, one row)

SUMMARY_COLUMNS = ["direction", "system", "mean", "95% CI low", "95% CI high"]


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


@pytest.mark.slow
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
# Blank reference cells


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
