"""The Space in a real browser: Playwright drives Debian's Chromium (never a downloaded browser) against the app running
on the tiny checkpoint. Screenshots go to a temporary folder, or to $BARTSCORE_SCREENSHOTS; look at them."""

import os
import re

import numpy as np
import pytest
from test_app import OUTPUT_ROWS, shown_signature, write_documents_csv, write_outputs_csv

import app
import bart_score
import space.batch
import space.compare
import space.inputs

sync_api = pytest.importorskip("playwright.sync_api", reason="reason: the playwright package is not installed")
expect = sync_api.expect

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
TIMEOUT_MS = 60_000
expect.set_options(timeout=TIMEOUT_MS)

pytestmark = pytest.mark.skipif(
    not os.path.isfile(CHROMIUM), reason="reason: Debian's chromium is not installed (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app_url)
    yield page
    context.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    """Where screenshots go: $BARTSCORE_SCREENSHOTS when set (to keep and look at them), else a temporary folder."""
    folder = os.environ.get("BARTSCORE_SCREENSHOTS") or str(tmp_path_factory.mktemp("screenshots"))
    os.makedirs(folder, exist_ok=True)
    return folder


def screenshot(page, folder, name):
    page.screenshot(path=os.path.join(folder, name), full_page=True)


def cell(table, row, column):
    return table.locator(f'[data-testid="cell-{row}-{column}"]')


def test_compare_tab_shows_table_reference_points_rescaled_chart_and_heatmap(page, copier, screenshots):
    example = app.EXAMPLES["summarization"]
    expect(page.locator("#model input")).to_have_value("tiny")
    page.locator("#model input").click()
    page.get_by_role("option", name="copier").click()
    expect(page.locator("#model input")).to_have_value("copier")
    expect(page.locator("#source textarea")).to_have_value(example["source"])
    expect(page.locator("#candidate-3")).to_be_hidden()

    page.get_by_role("button", name="+ Add candidate").click()
    third = 'The council built a <b>stadium</b> & a "pool".'
    page.locator("#candidate-3 textarea").fill(third)
    page.locator("#compare-button").click()

    candidates = example["candidates"] + [third]
    # The app's own engine call (the same inputs, so the same batching and the same digits).
    expected = copier.score_directions(
        candidates,
        references=[[example["references"]]] * 3,
        sources=[example["source"]] * 3,
        rescale="corpus",
        corpus_points=bart_score.CorpusPoints(unrelated_texts=space.compare.UNRELATED_TEXTS),
    )
    bars = page.locator("#comparison-chart .mark-rect path")
    expect(bars).to_have_count(3 * 4)
    table = page.locator("#comparison-table")
    best_in = 1 + 2 * len(bart_score.DIRECTIONS)
    for row, name in enumerate(["Candidate 1", "Candidate 2", "Candidate 3", *space.compare.REFERENCE_ROWS.values()]):
        expect(cell(table, row, 0)).to_have_text(name)
    for index, direction in enumerate(bart_score.DIRECTIONS):
        column = 1 + 2 * index
        points = expected["reference_points"][direction]
        raw = [*expected[direction], points["copy"], points["unrelated"]]
        rescaled = [*expected[f"{direction}_rescaled"], 1.0, 0.0]
        for row in range(5):
            expect(cell(table, row, column)).to_have_text(f"{raw[row]:.4f}")
            expect(cell(table, row, column + 1)).to_have_text(f"{rescaled[row]:.3f}")
        best = max(range(3), key=lambda i: expected[direction][i])
        expect(cell(table, best, column)).to_have_css("font-weight", "700")
        expect(cell(table, best, best_in)).to_contain_text(direction)
        expect(cell(table, best, best_in)).to_contain_text("★")
    expect(cell(table, 3, 1)).to_have_css("font-style", "italic")  # the reference rows are set apart

    # Bar heights are the rescaled scores; hovering one shows the raw score too.
    heights = bars.evaluate_all("paths => paths.map(path => path.getBBox().height)")
    values = [value for direction in bart_score.DIRECTIONS for value in expected[f"{direction}_rescaled"]]
    assert np.corrcoef(heights, np.abs(values))[0, 1] > 0.999
    bars.nth(5).hover()  # precision · Candidate 3
    tooltip = page.locator("#vg-tooltip-element")
    expect(tooltip).to_contain_text("precision · Candidate 3")
    shown = {
        line.split("\t")[0].strip(): line.split("\t")[-1].strip()
        for line in tooltip.inner_text().replace("\t\n", "\t").splitlines()
    }
    assert float(shown["score"].replace("−", "-")) == pytest.approx(expected["precision"][2], abs=1e-6)
    screenshot(page, screenshots, "compare-chart-hover.png")

    tokens = copier.score_tokens([example["source"]] * 3, candidates)
    heatmap = page.locator("#heatmap")
    expect(heatmap.locator(".candidate")).to_have_count(3)
    expect(heatmap).to_contain_text("given the source")
    for index, pairs in enumerate(tokens):
        spans = heatmap.locator(".candidate").nth(index).locator(".token")
        expect(spans).to_have_count(len(pairs))
        expect(spans.first).to_have_class(re.compile(r"\bspecial\b"))
        expect(spans.last).to_have_text("</s>")
        titles = spans.evaluate_all("spans => spans.map(span => span.title)")
        assert titles == [f"{text!r}: log p = {log_prob:.4f}" for text, log_prob in pairs]
        colours = set(spans.evaluate_all("spans => spans.map(span => getComputedStyle(span).backgroundColor)"))
        assert len(colours) > 1  # coloured by value, not one flat colour
    # The third candidate's markup is shown as text, never run as HTML.
    expect(heatmap.locator(".candidate").nth(2)).to_contain_text("<b>stadium</b> &")
    expect(heatmap.locator("b")).to_have_count(0)
    expect(page.locator("#compare-signature textarea")).to_have_value(
        shown_signature(expected["signature"], copier, "copier")
    )

    page.locator("#heatmap .candidate").nth(1).scroll_into_view_if_needed()
    screenshot(page, screenshots, "compare.png")


def test_batch_tab_shows_summary_significance_and_download(page, scorer, tmp_path, screenshots):
    rows = OUTPUT_ROWS + [
        [
            f"extra{i}",
            f"Report {i}: the market was high.",
            "The market was high.",
            "",
            "The market was high.",
            "The team lost the game.",
            "Market high.",
        ]
        for i in range(6)
    ]
    path = write_outputs_csv(tmp_path / "outputs.csv", rows)
    page.get_by_role("tab", name="Batch").click()
    for direction in ("precision", "recall"):  # untick: faithfulness and f_score remain
        page.locator("#directions").get_by_label(direction).uncheck()
    page.locator("#upload input[type=file]").set_input_files(path)
    expect(page.locator("#upload a[href$='/outputs.csv']")).to_have_count(1)
    page.locator("#batch-button").click()

    # The same single engine call as the app's (so the same batching and the same digits), on the same weights.
    expected = space.batch.score_upload(
        scorer, bart_score.read_table_corpus(path), directions=["faithfulness", "f_score"]
    )
    assert list(expected.summary["system"][:3]) == ["good", "bad", "odd"]
    summary = page.locator("#summary-table")
    pairs = page.locator("#pairs-table")
    expect(summary.locator("[role=row][data-index]")).to_have_count(2 * 3)
    expect(pairs.locator("[role=row][data-index]")).to_have_count(2 * 3)
    for row, (direction, system, *figures) in enumerate(expected.summary.values.tolist()):
        expect(cell(summary, row, 0)).to_have_text(direction)
        expect(cell(summary, row, 1)).to_have_text(system)
        for column, value in enumerate(figures, start=2):
            expect(cell(summary, row, column)).to_have_text(f"{value:.4f}")
    for row, (direction, system_a, system_b, _, bootstrap_p, _, better) in enumerate(expected.pairs.values.tolist()):
        expect(cell(pairs, row, 0)).to_have_text(direction)
        expect(cell(pairs, row, 1)).to_have_text(system_a)
        expect(cell(pairs, row, 2)).to_have_text(system_b)
        expect(cell(pairs, row, 4)).to_have_text(space.batch.p_value_text(bootstrap_p))
        expect(cell(pairs, row, 6)).to_have_text(better)
    expect(page.locator("#rows-table [role=row][data-index]")).to_have_count(len(rows))
    expect(page.locator("#download a[href$='/bartscore-results.csv']")).to_have_count(1)
    expect(page.locator("#batch-signature textarea")).to_have_value(shown_signature(expected.signature, scorer))
    panels = page.locator("#intervals .panel")
    expect(panels).to_have_count(2)
    for index, direction in enumerate(["faithfulness", "f_score"]):
        expect(panels.nth(index).locator(".title")).to_have_text(direction)
        expect(panels.nth(index).locator("g.system circle")).to_have_count(3)

    screenshot(page, screenshots, "batch.png")


def test_batch_tab_plots_rescaled_means_with_their_intervals(page, copier, tmp_path, screenshots):
    path = write_documents_csv(tmp_path / "documents.csv")
    page.locator("#model input").click()
    page.get_by_role("option", name="copier").click()
    page.get_by_role("tab", name="Batch").click()
    page.locator("#upload input[type=file]").set_input_files(path)
    expect(page.locator("#upload a[href$='/documents.csv']")).to_have_count(1)
    page.locator("#rescale").get_by_label("yes, reference points from this file").check()
    page.locator("#batch-button").click()

    expected = space.batch.score_upload(
        copier, bart_score.read_table_corpus(path), directions=list(bart_score.DIRECTIONS), rescale="corpus"
    )
    panels = page.locator("#intervals .panel")
    expect(panels).to_have_count(4)
    for index, direction in enumerate(bart_score.DIRECTIONS):
        panel = panels.nth(index)
        expect(panel.locator(".title")).to_have_text(f"{direction}_rescaled")
        rows = expected.summary[expected.summary["direction"] == f"{direction}_rescaled"]
        systems = panel.locator("g.system")
        expect(systems).to_have_count(2)
        for position, (name, mean, low, high) in enumerate(
            rows[["system", "mean", "95% CI low", "95% CI high"]].values
        ):
            expect(systems.nth(position)).to_have_attribute("data-system", name)
            expect(systems.nth(position).locator("title")).to_have_text(
                f"{name}: mean {mean:.4f}, 95% CI {low:.4f} to {high:.4f}"
            )
        # The interval's line spans the CI and the dot sits at the mean, on one linear axis.
        line = systems.nth(0).locator("line")
        x1, x2 = float(line.get_attribute("x1")), float(line.get_attribute("x2"))
        dot = float(systems.nth(0).locator("circle").get_attribute("cx"))
        low, high, mean = rows.iloc[0][["95% CI low", "95% CI high", "mean"]]
        assert (dot - x1) / (x2 - x1) == pytest.approx((mean - low) / (high - low), abs=0.01)
        expect(panel.locator("line.reference")).not_to_have_count(0)  # 0 (unrelated) and/or 1 (copy) marked
    expect(page.locator("#summary-table [role=row][data-index]")).to_have_count(2 * 8)
    expect(page.locator("#batch-signature textarea")).to_have_value(
        shown_signature(expected.signature, copier, "copier")
    )
    page.locator("#intervals").scroll_into_view_if_needed()
    screenshot(page, screenshots, "batch-rescaled.png")


def test_examples_and_candidate_buttons(page):
    page.get_by_role("button", name="Example: translation").click()
    example = app.EXAMPLES["translation"]
    for number, text in enumerate(example["candidates"], 1):
        expect(page.locator(f"#candidate-{number} textarea")).to_have_value(text)
    expect(page.locator("#source textarea")).to_have_value("")
    expect(page.locator("#directions").get_by_label("faithfulness")).not_to_be_checked()
    expect(page.locator("#directions").get_by_label("f_score")).to_be_checked()

    for number in range(4, space.inputs.MAX_CANDIDATES + 1):
        page.get_by_role("button", name="+ Add candidate").click()
        expect(page.locator(f"#candidate-{number}")).to_be_visible()
    page.get_by_role("button", name="+ Add candidate").click()
    expect(page.get_by_text(f"At most {space.inputs.MAX_CANDIDATES} candidates can be compared")).to_be_visible()

    for number in range(space.inputs.MAX_CANDIDATES, 2, -1):
        page.get_by_role("button", name="− Remove last candidate").click()
        expect(page.locator(f"#candidate-{number}")).to_be_hidden()
    page.get_by_role("button", name="− Remove last candidate").click()
    expect(page.get_by_text("At least 2 candidates are compared")).to_be_visible()
    page.get_by_role("button", name="+ Add candidate").click()
    expect(page.locator("#candidate-3 textarea")).to_have_value("")  # a removed candidate's text is gone


def test_markup_in_an_error_message_shows_as_text(page, tmp_path, screenshots):
    markup = '<img src="x" id="injected"><a href="https://example.com" id="link">click</a><form id="form"></form>'
    path = tmp_path / "markup.csv"
    path.write_text(f"{markup.replace(chr(34), chr(39))},other\nx,y\n", encoding="utf-8")
    page.get_by_role("tab", name="Batch").click()
    page.locator("#upload input[type=file]").set_input_files(str(path))
    expect(page.locator("#upload a[href$='/markup.csv']")).to_have_count(1)
    page.locator("#batch-button").click()
    toast = page.locator('[data-testid="toast-body"]')
    expect(toast).to_contain_text("needs a 'source' column")
    expect(toast).to_contain_text("<img src='x' id='injected'>")  # the user's markup, shown as written
    for element in ("#injected", "#link", "#form"):
        expect(page.locator(element)).to_have_count(0)
    screenshot(page, screenshots, "error-with-markup.png")
