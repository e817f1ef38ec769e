"""The Space's Compare tab without a server: reading its inputs, the comparison and how the page shows it (tables,
chart, heatmap, notes), how much work a comparison is, and the verdict above the table. Expected values come from the
engine, called directly."""

import asyncio
import dataclasses
import math
import re
import warnings

import pytest
from support.extras import require_extra
from support.fast_subset import fast_cases

require_extra("app")  # before the imports that need it
from support.app_server import MAX_CHARS, event_functions
from support.lazy import LazyModule
from support.reference import reference_directions, reference_points
from support.space_inputs import CANDIDATES, REFERENCES, SOURCE
from support.space_pages import NAN, TOLERANCE, bars_of, shown_table
from support.space_requests import batch_file, candidate_boxes, settings_inputs

import bart_score
import space.batch
import space.candidates
import space.examples
import space.form
import space.heatmap
import space.naming
import space.plots
import space.settings
import space.verdict

# Gradio and what imports it, imported by the first test that uses them (support/lazy.py).
gr = LazyModule("gradio")
app = LazyModule("app")
space_feedback = LazyModule("space.feedback")
space_handlers = LazyModule("space.handlers")


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
    with pytest.raises(bart_score.InputError, match="sources, references or both must be given with predictions"):
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


@pytest.mark.slow
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


@pytest.mark.slow
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
@pytest.mark.parametrize("model", fast_cases(["tiny", "copier"], ["tiny"]))
@pytest.mark.parametrize("example", fast_cases(list(space.examples.EXAMPLES), ["translation"]))
def test_the_examples_show_only_notes_a_user_can_act_on(app_settings, model, example):
    """Every Compare of the examples showed "1000 reference pairs were asked for, but the texts give only 21 distinct
    ones": the Space asks for them, and all there are are scored. The engine still says it; the page does not. What
    the page does show (the random models' scales) ends with what its user can do."""
    chosen = space.examples.EXAMPLES[example]
    arguments = [
        *settings_inputs(
            model=model,
            directions=chosen["directions"],
            prompt_choice=chosen["prompt"],
            prompt_side=chosen["prompt_side"],
        ),
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


@pytest.mark.slow
def test_an_uploads_reference_points_show_no_note_about_their_number(app_settings, tmp_path):
    rows = "".join(
        f"Source {row} about {topic}.,Out {row} on {topic}.,Other {row}.\n" for row, topic in enumerate("ab")
    )
    path = batch_file(tmp_path, "small.csv", "source,A,B\n" + rows)
    arguments = (*settings_inputs(model="copier", directions=["faithfulness"]), path, "corpus")
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
# How much work a comparison is


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


@pytest.mark.slow
def test_a_comparison_over_the_limit_is_refused_before_the_model_is_used(app_settings, monkeypatch):
    compare = event_functions(app.build_demo(dataclasses.replace(app_settings, max_pairs=100)))["compare"]
    monkeypatch.setattr(space.settings, "menu_scorer", lambda *args: pytest.fail("the model was used"))
    monkeypatch.setattr(space.handlers, "menu_scorer", lambda *args: pytest.fail("the model was used"))
    references = "\n".join(f"Reference {i}" for i in range(8))
    with pytest.raises(gr.Error, match=r"needs 14,006 scored pairs .* the limit here is 100\. Use fewer candidates"):
        compare(
            *settings_inputs(prompt_choice="summary"), SOURCE, references, *[f"Candidate text {i}" for i in range(6)]
        )


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
