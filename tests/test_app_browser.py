"""The Space in a real browser: Playwright drives Debian's Chromium (never a downloaded browser) against the app running
on the tiny checkpoint. Screenshots go to artifacts/; look at them."""

import os
import re

import pytest
from test_app import OUTPUT_ROWS, shown_signature, write_outputs_csv

import app
import bart_score

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


def test_compare_tab_shows_table_chart_and_heatmap(page, scorer, screenshots):
    example = app.EXAMPLES["summarization"]
    expect(page.locator("#model input")).to_have_value("tiny")
    expect(page.locator("#source textarea")).to_have_value(example["source"])
    expect(page.locator("#candidate-3")).to_be_hidden()

    page.get_by_role("button", name="+ Add candidate").click()
    third = 'The council built a <b>stadium</b> & a "pool".'
    page.locator("#candidate-3 textarea").fill(third)
    page.locator("#compare-button").click()

    candidates = example["candidates"] + [third]
    expected = scorer.score_directions(
        candidates, references=[[example["references"]]] * 3, sources=[example["source"]] * 3
    )
    expect(page.locator("#comparison-chart .mark-rect path")).to_have_count(3 * 4)
    table = page.locator("#comparison-table")
    for row in range(3):
        expect(cell(table, row, 0)).to_have_text(f"Candidate {row + 1}")
        for column, direction in enumerate(bart_score.DIRECTIONS, 1):
            expect(cell(table, row, column)).to_have_text(f"{expected[direction][row]:.4f}")
    for column, direction in enumerate(bart_score.DIRECTIONS, 1):
        best = max(range(3), key=lambda i: expected[direction][i])
        expect(cell(table, best, column)).to_have_css("font-weight", "700")
        expect(cell(table, best, 5)).to_contain_text(direction)
        expect(cell(table, best, 5)).to_contain_text("★")

    tokens = scorer.score_tokens([example["source"]] * 3, candidates)
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
    expect(page.locator("#compare-signature textarea")).to_have_value(shown_signature(expected["signature"], scorer))

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
    expected = app.score_upload(scorer, bart_score.read_table_corpus(path), directions=["faithfulness", "f_score"])
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
        expect(cell(pairs, row, 4)).to_have_text(app.p_value_text(bootstrap_p))
        expect(cell(pairs, row, 6)).to_have_text(better)
    expect(page.locator("#rows-table [role=row][data-index]")).to_have_count(len(rows))
    expect(page.locator("#download a[href$='/bartscore-results.csv']")).to_have_count(1)
    expect(page.locator("#batch-signature textarea")).to_have_value(shown_signature(expected.signature, scorer))

    screenshot(page, screenshots, "batch.png")


def test_examples_and_candidate_buttons(page):
    page.get_by_role("button", name="Example: translation").click()
    example = app.EXAMPLES["translation"]
    for number, text in enumerate(example["candidates"], 1):
        expect(page.locator(f"#candidate-{number} textarea")).to_have_value(text)
    expect(page.locator("#source textarea")).to_have_value("")
    expect(page.locator("#directions").get_by_label("faithfulness")).not_to_be_checked()
    expect(page.locator("#directions").get_by_label("f_score")).to_be_checked()

    for number in range(4, app.MAX_CANDIDATES + 1):
        page.get_by_role("button", name="+ Add candidate").click()
        expect(page.locator(f"#candidate-{number}")).to_be_visible()
    page.get_by_role("button", name="+ Add candidate").click()
    expect(page.get_by_text(f"At most {app.MAX_CANDIDATES} candidates can be compared")).to_be_visible()

    for number in range(app.MAX_CANDIDATES, 2, -1):
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
