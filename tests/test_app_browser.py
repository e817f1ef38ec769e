"""The Space in a real browser: Playwright drives Debian's Chromium (never a downloaded browser) against the app running
on the tiny checkpoints. Every test here starts a browser (slow). Screenshots at 1280 and 390 px go to a temporary
folder, or to $BARTSCORE_SCREENSHOTS; the folder is printed at the end of the run: look at them."""

import importlib.util
import json
import os
import re
import sys
import time

import pytest
from support.extras import require_extra

require_extra("app")  # before the imports that need it
from support.app_server import shown_signature
from support.contrast import contrast
from support.lazy import LazyModule
from support.space_inputs import CANDIDATES, OUTPUT_ROWS, SOURCE, write_documents_csv, write_outputs_csv

import bart_score
import space.batch
import space.candidates
import space.examples
import space.form
from bart_score.baselines import files as baseline_files

# Imported by the first browser test (support/lazy.py), not while every pytest-xdist worker collects.
sync_api = LazyModule("playwright.sync_api")

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
TIMEOUT_MS = 300_000  # a bound that only a hung page reaches, at a load average of 20 too
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("playwright") is None, reason="the playwright package is not installed"
    ),
    pytest.mark.skipif(
        not os.path.isfile(CHROMIUM), reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]


def expect(actual):
    return sync_api.expect(actual)


@pytest.fixture(scope="module")
def browser():
    sync_api.expect.set_options(timeout=TIMEOUT_MS)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def open_page(browser, app_url, viewport=DESKTOP):
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app_url)
    expect(page.locator("#compare-button")).to_be_visible()
    return page


@pytest.fixture
def page(browser, app_url, tmp_path, monkeypatch):
    monkeypatch.setenv(baseline_files.BASELINE_FOLDER_ENV, str(tmp_path / "no-baselines"))
    page = open_page(browser, app_url)
    yield page
    page.context.close()


@pytest.fixture
def phone(browser, app_url):
    page = open_page(browser, app_url, PHONE)
    yield page
    page.context.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    """Where screenshots go: $BARTSCORE_SCREENSHOTS when set, else a temporary folder; printed at the end."""
    folder = os.environ.get("BARTSCORE_SCREENSHOTS") or str(tmp_path_factory.mktemp("screenshots"))
    os.makedirs(folder, exist_ok=True)
    yield folder
    sys.__stderr__.write(f"\nThe Space's screenshots are in {folder}\n")


def screenshot(page, folder, name, full_page=True):
    page.screenshot(path=os.path.join(folder, name), full_page=full_page)


def cell(table, row, column):
    return table.locator(f'[data-testid="cell-{row}-{column}"]')


def choose_model(page, name):
    open_settings(page)
    page.locator("#model input").click()
    page.get_by_role("option", name=name, exact=True).click()
    expect(page.locator("#model input")).to_have_value(name)


def open_settings(page):
    if not page.locator("#directions").is_visible():
        page.get_by_text("Advanced settings:").click()
    expect(page.locator("#directions")).to_be_visible()


def score(page):
    page.locator("#compare-button").click()
    expect(page.locator("#compare-status")).to_contain_text("Done.")


def load_example(page, name="summarization"):
    """The example's texts in the boxes (the page opens with them empty)."""
    page.get_by_role("button", name=f"Example: {name}").click()
    expect(page.locator("#candidate-1 textarea")).to_have_value(space.examples.EXAMPLES[name]["candidates"][0])


def bars(page):
    """(direction, candidate, 0–1 value, height in pixels) of each bar drawn, read back from the page."""
    return page.locator("#comparison-chart .bar").evaluate_all(
        """bars => bars.map(bar => [bar.dataset.direction, bar.dataset.candidate, parseFloat(bar.dataset.value),
                                    bar.getBoundingClientRect().height])"""
    )


def column_names(table):
    count = int(table.locator("[role=grid]").get_attribute("aria-colcount"))
    return [table.locator(f'[data-testid="header-{i}"]').first.inner_text().strip() for i in range(count)]


def rescaled_cells(page):
    """{(candidate, direction label): text} of the 0–1 table, as shown."""
    table = page.locator("#rescaled-table")
    headers = column_names(table)
    shown = {}
    for row in range(table.locator("[role=row][data-index]").count()):
        name = cell(table, row, 0).inner_text().replace(space.candidates.BEST_MARK, "").strip()
        for column in range(1, len(headers)):
            shown[name, headers[column]] = cell(table, row, column).inner_text().strip()
    return shown


def assert_chart_matches_table(page, candidates, directions):
    """Every bar is a (candidate, direction) of this run, at the table's 0–1 value, and no bar is missing."""
    rows = page.locator("#rescaled-table [role=row][data-index]")
    expect(rows).to_have_count(len(candidates) + 2)
    # "Done." may still be the last run's: wait until the table has this run's columns
    grid = page.locator("#rescaled-table [role=grid]")
    expect(grid).to_have_attribute("aria-colcount", str(len(directions) + 1))
    expect(cell(page.locator("#rescaled-table"), len(candidates) - 1, 0)).to_contain_text(candidates[-1])
    table = rescaled_cells(page)
    scaled = [d for d in directions if table[candidates[0], space.candidates.DIRECTION_LABELS[d]] != "–"]
    expect(page.locator("#comparison-chart .bar")).to_have_count(len(scaled) * len(candidates))
    drawn = bars(page)
    assert [(d, c) for d, c, _, _ in drawn] == [(d, c) for d in scaled for c in candidates]
    for direction, candidate, value, _ in drawn:
        assert table[candidate, space.candidates.DIRECTION_LABELS[direction]] == f"{value:.3f}"
    # Bar heights are proportional to the distance from 0 (an unrelated text).
    heights = [height for *_, height in drawn]
    values = [abs(value) for _, _, value, _ in drawn]
    for height, value in zip(heights, values):
        assert height == pytest.approx(value * max(heights) / max(values), abs=1.5)


def test_the_first_screen_asks_for_little_and_shows_no_empty_outputs(page, screenshots):
    button = page.locator("#compare-button").bounding_box()
    assert button["y"] + button["height"] <= DESKTOP["height"]  # Score is above the fold at 1280 x 800
    expect(page.locator("#directions")).to_be_hidden()  # the settings are under a closed accordion
    expect(page.get_by_text("Advanced settings: tiny (BART)")).to_be_visible()
    expect(page.locator("#compare-results")).to_be_hidden()  # no empty tables or charts before a result
    for box in ("#source", "#references", "#candidate-1", "#candidate-2"):  # no example's text is scored unasked
        expect(page.locator(f"{box} textarea")).to_have_value("")
        expect(page.locator(f"{box} textarea")).to_have_attribute("placeholder", re.compile(r"^Paste "))
    intro = page.locator("#intro").inner_text()
    assert len(re.findall(r"[.!?](\s|$)", intro.split("\n", 1)[1])) <= 2
    open_settings(page)
    expect(page.locator("#model")).to_contain_text("the BART checkpoint that does the scoring")
    page.get_by_role("tab", name="Batch").click()
    options = page.locator("#rescale label").all_inner_texts()
    assert [option.strip() for option in options] == ["no", "yes, reference points from this file"]
    page.get_by_role("tab", name="Compare").click()
    page.get_by_text("Advanced settings:").click()
    screenshot(page, screenshots, "first-screen-1280.png", full_page=False)


def test_the_chart_always_shows_this_run(page, screenshots):
    choose_model(page, "copier")
    load_example(page)
    summarization = space.examples.EXAMPLES["summarization"]
    score(page)
    names = ["Candidate 1", "Candidate 2"]
    assert_chart_matches_table(page, names, summarization["directions"])
    verdict, table = page.locator("#verdict"), page.locator("#rescaled-table")
    assert verdict.bounding_box()["y"] < table.bounding_box()["y"]  # the verdict first
    expect(verdict).to_contain_text("Candidate")
    screenshot(page, screenshots, "compare-1280.png")

    page.get_by_role("button", name="Example: translation").click()
    expect(page.locator("#compare-results")).to_be_hidden()  # a new example: the last run's results go
    score(page)
    translation = space.examples.EXAMPLES["translation"]
    names = ["Candidate 1", "Candidate 2", "Candidate 3"]
    assert_chart_matches_table(page, names, translation["directions"])

    open_settings(page)
    for direction in ("precision", "F"):
        page.locator("#directions").get_by_label(direction, exact=True).uncheck()
    score(page)
    assert_chart_matches_table(page, names, ["recall"])

    page.get_by_role("button", name="+ Add candidate").click()
    page.locator("#candidate-4 textarea").fill("Tomorrow will be sunny and warm, up to 25 degrees.")
    score(page)
    assert_chart_matches_table(page, [*names, "Candidate 4"], ["recall"])
    for bar in page.locator("#comparison-chart .bar").all():  # each bar's value can be reached by keyboard
        assert bar.get_attribute("tabindex") == "0" and "on the 0–1 scale" in bar.get_attribute("aria-label")


def test_the_table_fits_and_raw_scores_are_one_click_away(page, copier):
    choose_model(page, "copier")
    load_example(page)
    score(page)
    example = space.examples.EXAMPLES["summarization"]
    expected = copier.score_directions(
        example["candidates"],
        references=[[example["references"]]] * 2,
        sources=[example["source"]] * 2,
        rescale="corpus",
        corpus_points=bart_score.CorpusPoints(unrelated_texts=space.candidates.UNRELATED_TEXTS),
    )
    table = page.locator("#rescaled-table")
    scroll = table.locator(".table-wrap").evaluate("wrap => [wrap.scrollWidth, wrap.clientWidth]")
    assert scroll[0] <= scroll[1]  # no sideways scrolling at 1280 px
    page.get_by_role("tab", name="Raw scores").click()
    raw = page.locator("#raw-table")
    for column, direction in enumerate(bart_score.DIRECTIONS, start=1):
        for row in range(2):
            expect(cell(raw, row, column)).to_have_text(f"{expected[direction][row]:.4f}")
    for row, name in enumerate(["copy", "unrelated"], start=2):
        expect(cell(raw, row, 0)).to_have_text(name)
        expect(cell(raw, row, 0)).to_have_css("font-style", "italic")


def test_a_problem_stays_beside_the_button_and_marks_the_field(page, screenshots):
    load_example(page)
    page.locator("#candidate-2 textarea").fill("")
    page.locator("#compare-button").click()
    status = page.locator("#compare-status")
    expect(status).to_contain_text("Not scored: Enter at least 2 candidates to compare (found 1)")
    expect(page.locator("#candidate-2")).to_have_class(re.compile(r"\bat-fault\b"))
    time.sleep(12)  # longer than a pop-up message stays
    expect(status).to_contain_text("Enter at least 2 candidates")
    expect(page.get_by_text("Error", exact=True)).to_have_count(0)  # no bare "Error" badges
    expect(page.locator("#compare-results")).to_be_hidden()
    screenshot(page, screenshots, "problem-1280.png", full_page=False)
    page.locator("#candidate-2 textarea").fill("A second candidate.")
    score(page)
    expect(page.locator("#candidate-2")).not_to_have_class(re.compile(r"\bat-fault\b"))


def test_markup_in_a_problem_shows_as_text(page, tmp_path, screenshots):
    markup = '<img src="x" id="injected"><a href="https://example.com" id="link">click</a><form id="form"></form>'
    path = tmp_path / "markup.csv"
    path.write_text(f"{markup.replace(chr(34), chr(39))},other\nx,y\n", encoding="utf-8")
    page.get_by_role("tab", name="Batch").click()
    page.locator("#upload input[type=file]").set_input_files(str(path))
    expect(page.locator("#upload a[href$='/markup.csv']")).to_have_count(1)
    page.locator("#batch-button").click()
    status = page.locator("#batch-status")
    expect(status).to_contain_text("needs a 'source' column")
    expect(status).to_contain_text("<img src='x' id='injected'>")  # the user's markup, shown as written
    for element in ("#injected", "#link", "#form"):
        expect(page.locator(element)).to_have_count(0)
    expect(page.locator("#upload")).to_have_class(re.compile(r"\bat-fault\b"))


def test_the_heatmap_says_what_its_mean_is_and_prints_values_on_request(page, scorer):
    load_example(page)
    score(page)
    example = space.examples.EXAMPLES["summarization"]
    tokens = scorer.score_tokens([example["source"]] * 2, example["candidates"])
    faithfulness = scorer.score_directions(
        example["candidates"], sources=[example["source"]] * 2, directions=["faithfulness"]
    )["faithfulness"]
    heatmap = page.locator("#heatmap")
    for index, pairs in enumerate(tokens):
        candidate = heatmap.locator(".candidate").nth(index)
        expect(candidate.locator(".mean")).to_contain_text(f"faithfulness {faithfulness[index]:.4f}")
        expect(candidate.locator(".token")).to_have_count(len(pairs))
    toggle = heatmap.get_by_label("Show each token's log-probability")
    toggle.focus()
    page.keyboard.press("Space")  # reached and ticked by keyboard
    expect(toggle).to_be_checked()
    shown = (
        heatmap.locator(".candidate")
        .first.locator(".token")
        .evaluate_all("spans => spans.map(span => getComputedStyle(span, '::after').content)")
    )
    assert shown == [f'"{log_prob:.2f}"'.replace("-", "−") for _, log_prob in tokens[0]]


def test_batch_results_read_at_a_glance(page, scorer, tmp_path, screenshots):
    rows = OUTPUT_ROWS + [
        [
            f"extra{i}",
            f"Report {i}: the market was high.",
            "The market was high.",
            "",
            "The market was high.",
            "The team lost.",
            "Market high.",
        ]
        for i in range(6)
    ]
    path = write_outputs_csv(tmp_path / "outputs.csv", rows)
    page.get_by_role("tab", name="Batch").click()
    page.locator("#upload input[type=file]").set_input_files(path)
    expect(page.locator("#upload a[href$='/outputs.csv']")).to_have_count(1)
    button = page.locator("#batch-button")
    button.click()
    expect(button).to_be_disabled()  # a second click cannot queue the job again
    expect(page.locator("#batch-status")).to_contain_text("Done.")
    expect(button).to_be_enabled()

    expected = space.batch.score_upload(
        scorer, bart_score.read_table_corpus(path), directions=list(bart_score.DIRECTIONS)
    )
    summary = page.locator("#summary-table")
    expect(summary.locator("[role=row][data-index]")).to_have_count(3)  # one row per system
    assert summary.locator(".table-wrap").evaluate("wrap => wrap.scrollHeight <= wrap.clientHeight + 1")
    for column, direction in enumerate(bart_score.DIRECTIONS, start=1):
        rows_of = expected.summary[expected.summary["direction"] == direction]
        means = list(rows_of["mean"])
        for row, (system, mean, low, high) in enumerate(
            rows_of[["system", "mean", "95% CI low", "95% CI high"]].values
        ):
            expect(cell(summary, row, 0)).to_have_text(system)
            text = f"{mean:.2f} [{low:.2f}, {high:.2f}]".replace("-", "−")
            expect(cell(summary, row, column)).to_have_text(text)
            weight = "700" if mean == max(means) else "400"
            expect(cell(summary, row, column)).to_have_css("font-weight", weight)
    # One shared axis: every panel has the same ticks.
    ticks = page.locator("#intervals svg").evaluate_all(
        "svgs => svgs.map(svg => [...svg.querySelectorAll('text[text-anchor=middle]')].map(t => t.textContent))"
    )
    assert len(ticks) == 4 and all(panel == ticks[0] for panel in ticks)
    # The per-row table has the texts, and sorting a score's column brings the worst rows first.
    table = page.locator("#rows-table")
    headers = column_names(table)
    assert headers[:4] == ["row", "id", "system", "output"] and "source" in headers
    column = headers.index("faithfulness")
    values = sorted(expected.texts["faithfulness"])
    header = table.locator(f'[data-testid="header-{column}"]').first
    header.hover()
    header.get_by_role("button", name="Open cell menu").click()
    page.get_by_text("Sort ascending", exact=True).click()
    shown = table.locator("[role=row][data-index]")
    for row in range(3):  # sorted as numbers (-10 before -2), the worst first
        expect(shown.nth(row).locator("[role=gridcell]").nth(column)).to_have_text(f"{values[row]:.4f}")
    expect(page.locator("#download a[href$='/bartscore-results.csv']")).to_have_count(1)
    expect(page.locator("#batch-signature textarea")).to_have_value(shown_signature(expected.signature, scorer))
    screenshot(page, screenshots, "batch-1280.png")


def test_batch_rescaled_results_and_untestable_pairs(page, copier, tmp_path, screenshots):
    path = write_documents_csv(tmp_path / "documents.csv")
    choose_model(page, "copier")
    page.get_by_role("tab", name="Batch").click()
    page.locator("#upload input[type=file]").set_input_files(path)
    expect(page.locator("#upload a[href$='/documents.csv']")).to_have_count(1)
    page.locator("#rescale").get_by_label("yes, reference points from this file").check()
    page.locator("#batch-button").click()
    expect(page.locator("#batch-status")).to_contain_text("Done.")
    expected = space.batch.score_upload(
        copier, bart_score.read_table_corpus(path), directions=list(bart_score.DIRECTIONS), rescale="corpus"
    )
    rescaled = page.locator("#rescaled-summary-table")
    expect(rescaled).to_be_visible()  # the 0–1 summary is shown first
    rows = expected.summary[expected.summary["direction"] == "faithfulness_rescaled"]
    for row, (mean, low, high) in enumerate(rows[["mean", "95% CI low", "95% CI high"]].values):
        expect(cell(rescaled, row, 1)).to_have_text(f"{mean:.3f} [{low:.3f}, {high:.3f}]".replace("-", "−"))
    panels = page.locator("#intervals .panel")
    expect(panels).to_have_count(4)
    expect(panels.first.locator(".title")).to_have_text("faithfulness 0–1")
    page.locator("#intervals").scroll_into_view_if_needed()
    screenshot(page, screenshots, "batch-rescaled-1280.png")

    one_row = tmp_path / "one.csv"
    one_row.write_text("source,reference,A,B\nthe cat sat,the dog,a cat,a dog\n", encoding="utf-8")
    page.locator("#rescale").get_by_label("no").check()
    page.locator("#upload button[aria-label='Clear']").click()
    page.locator("#upload input[type=file]").set_input_files(str(one_row))
    expect(page.locator("#upload a[href$='/one.csv']")).to_have_count(1)
    page.locator("#batch-button").click()
    expect(page.locator("#batch-status")).to_contain_text("Done.")
    pairs = page.locator("#pairs-table")
    expect(cell(pairs, 0, 6)).to_have_text(space.batch.UNTESTABLE)  # one row: no test can be made


def test_on_a_phone_the_page_stacks_and_the_key_columns_show(phone, screenshots):
    source, references = phone.locator("#source").bounding_box(), phone.locator("#references").bounding_box()
    assert references["y"] >= source["y"] + source["height"] - 1  # stacked, not side by side
    assert source["width"] > PHONE["width"] * 0.7
    screenshot(phone, screenshots, "first-screen-390.png")
    load_example(phone)
    score(phone)
    table = phone.locator("#rescaled-table")
    first_scores = cell(table, 0, 1).bounding_box()
    assert cell(table, 0, 0).is_visible() and first_scores["x"] + first_scores["width"] <= PHONE["width"]
    chart = phone.locator("#comparison-chart").bounding_box()
    assert chart["x"] + chart["width"] <= PHONE["width"]
    screenshot(phone, screenshots, "compare-390.png")


def test_on_a_phone_the_interval_plot_is_not_cut(phone, tmp_path, screenshots):
    path = write_outputs_csv(tmp_path / "outputs.csv", OUTPUT_ROWS)
    phone.get_by_role("tab", name="Batch").click()
    phone.locator("#upload input[type=file]").set_input_files(path)
    expect(phone.locator("#upload a[href$='/outputs.csv']")).to_have_count(1)
    phone.locator("#batch-button").click()
    expect(phone.locator("#batch-status")).to_contain_text("Done.")
    for box in phone.locator("#intervals svg").evaluate_all(
        "svgs => svgs.map(svg => svg.getBoundingClientRect().right)"
    ):
        assert box <= PHONE["width"]
    screenshot(phone, screenshots, "batch-390.png")


def rgb(css):
    return tuple(int(part) for part in re.findall(r"\d+", css)[:3])


def test_help_text_and_buttons_have_aa_contrast(page):
    expect(page.locator("#source").get_by_text("needed for faithfulness")).to_be_visible()  # rendered yet
    colours = page.evaluate(
        """() => {
            const style = element => getComputedStyle(element);
            const background = element => {
                for (let e = element; e; e = e.parentElement) {
                    const colour = style(e).backgroundColor;
                    if (colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') return colour;
                }
                return 'rgb(255, 255, 255)';
            };
            const info = [...document.querySelectorAll('#source *')]
                .find(e => e.innerText === 'needed for faithfulness');
            const button = document.querySelector('#compare-button');
            return {info: [style(info).color, background(info)], button: [style(button).color, background(button)]};
        }"""
    )
    for foreground, background in colours.values():
        assert contrast(rgb(foreground), rgb(background)) >= 4.5, (foreground, background)


def test_examples_and_candidate_buttons(page):
    page.get_by_role("button", name="Example: translation").click()
    example = space.examples.EXAMPLES["translation"]
    for number, text in enumerate(example["candidates"], 1):
        expect(page.locator(f"#candidate-{number} textarea")).to_have_value(text)
    expect(page.locator("#source textarea")).to_have_value("")
    expect(page.get_by_text("Advanced settings: tiny (BART) · precision, recall, F · prompt mt")).to_be_visible()

    for number in range(4, space.form.MAX_CANDIDATES + 1):
        page.get_by_role("button", name="+ Add candidate").click()
        expect(page.locator(f"#candidate-{number}")).to_be_visible()
    page.get_by_role("button", name="+ Add candidate").click()
    expect(page.locator("#compare-status")).to_contain_text(
        f"At most {space.form.MAX_CANDIDATES} candidates can be compared"
    )
    for number in range(space.form.MAX_CANDIDATES, 2, -1):
        page.get_by_role("button", name="− Remove last").click()
        expect(page.locator(f"#candidate-{number}")).to_be_hidden()
    page.get_by_role("button", name="− Remove last").click()
    expect(page.locator("#compare-status")).to_contain_text("At least 2 candidates are compared")
    page.get_by_role("button", name="+ Add candidate").click()
    expect(page.locator("#candidate-3 textarea")).to_have_value("")  # a removed candidate's text is gone


# JavaScript: what does not fit the page's width, as {"headers": [...], "wide": [...]}. Headers: a header cell's text
# cut (wider than its box) or a word of it broken over two lines, or a cell's text cut. Wide: the page or an element
# wider than the viewport, or a table that scrolls sideways.
LAYOUT_PROBLEMS = """() => {
    const headers = [], wide = [];
    const visible = element => element.checkVisibility({visibilityProperty: true}) && element.getClientRects().length;
    const named = element => (element.closest('[id]') || {}).id + ': ' + (element.innerText || '').slice(0, 40);
    for (const header of document.querySelectorAll('.header-cell')) {
        if (!visible(header) || !header.innerText.trim()) continue;
        for (const element of [header, ...header.querySelectorAll('*')]) {
            if (element.scrollWidth > element.clientWidth + 1 && getComputedStyle(element).overflow !== 'visible')
                headers.push('cut: ' + named(header));
        }
        const range = document.createRange();
        const walker = document.createTreeWalker(header, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const word of node.textContent.matchAll(/[^\\s]+/g)) {
                range.setStart(node, word.index);
                range.setEnd(node, word.index + word[0].length);
                const lines = new Set([...range.getClientRects()].filter(r => r.width).map(r => Math.round(r.top)));
                if (lines.size > 1) headers.push('word broken: ' + word[0] + ' in ' + named(header));
            }
        }
    }
    for (const cell of document.querySelectorAll('.body-cell')) {
        const text = cell.querySelector('span');
        if (visible(cell) && text && text.scrollWidth > text.clientWidth + 1) headers.push('cell cut: ' + named(cell));
    }
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > width) wide.push('the page scrolls sideways');
    for (const element of document.querySelectorAll('body *')) {
        if (visible(element) && element.getBoundingClientRect().right > width + 1 && !element.closest('.table-wrap'))
            wide.push('wider than the page: ' + named(element));
    }
    for (const wrap of document.querySelectorAll('.table-wrap')) {
        if (visible(wrap) && wrap.scrollWidth > wrap.clientWidth + 1) wide.push('scrolls sideways: ' + named(wrap));
    }
    return {headers: [...new Set(headers)], wide: [...new Set(wide)]};
}"""

# JavaScript: the interval panels' boxes (left, top, width) and the smallest size, in pixels, their labels are drawn at.
INTERVAL_PANELS = """() => [...document.querySelectorAll('#intervals svg')].map(svg => {
    const box = svg.getBoundingClientRect(), scale = svg.getScreenCTM().a;
    const sizes = [...svg.querySelectorAll('text')].map(text => parseFloat(text.getAttribute('font-size')) * scale);
    return [box.left, box.top, box.width, Math.min(...sizes)];
})"""


def layout_problems(page, width):
    """What does not fit: header problems at any width; at a phone's, anything wider than the page too."""
    found = page.evaluate(LAYOUT_PROBLEMS)
    return found["headers"] + (found["wide"] if width < DESKTOP["width"] else [])


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_every_result_fits_its_width_without_breaking_a_word(browser, app_url, tmp_path, screenshots, viewport):
    """Compare's tables, Batch's summary, pairs, per-row scores and interval plot, raw and rescaled: no header broken
    inside a word (Gradio sized columns by their cells and broke "faithful|ness"), and on a phone nothing wider than
    the page (the pairs and the rows are cards there). The interval panels line up, their labels at 11 px or more."""
    page = open_page(browser, app_url, viewport)
    width = viewport["width"]
    problems = {}
    choose_model(page, "copier")
    load_example(page)
    score(page)
    problems["compare"] = layout_problems(page, width)
    screenshot(page, screenshots, f"fit-compare-{width}.png")
    page.get_by_role("tab", name="Raw scores").click()
    problems["compare raw"] = layout_problems(page, width)
    screenshot(page, screenshots, f"fit-compare-raw-{width}.png")
    page.get_by_role("tab", name="Batch").click()
    page.locator("#upload input[type=file]").set_input_files(write_outputs_csv(tmp_path / "outputs.csv", OUTPUT_ROWS))
    expect(page.locator("#upload a[href$='/outputs.csv']")).to_have_count(1)
    page.locator("#batch-button").click()
    expect(page.locator("#batch-status")).to_contain_text("Done.")
    expect(page.locator("#intervals svg")).to_have_count(4)
    problems["batch"] = layout_problems(page, width)
    expect(page.locator("#summary-tabs [role=tab]")).to_be_hidden()  # no tab strip of one tab
    expect(page.locator("#summary-table")).to_contain_text("Raw scores: each system's mean [95% CI]")
    panels = page.evaluate(INTERVAL_PANELS)
    assert min(size for *_, size in panels) >= 11
    assert len({round(panel_width) for _, _, panel_width, _ in panels}) == 1  # one size, none larger
    if width == DESKTOP["width"]:
        assert len({round(top) for _, top, _, _ in panels}) == 1  # four in a row
    else:
        assert len({round(left) for left, _, _, _ in panels}) == 1  # one above another
    cards, table = ("#rows-cards", "#rows-table") if width < DESKTOP["width"] else ("#rows-table", "#rows-cards")
    expect(page.locator(cards)).to_be_visible()
    expect(page.locator(table)).to_be_hidden()
    screenshot(page, screenshots, f"fit-batch-{width}.png")
    page.locator("#rescale").get_by_label("yes, reference points from this file").check()
    page.locator("#upload button[aria-label='Clear']").click()
    page.locator("#upload input[type=file]").set_input_files(write_documents_csv(tmp_path / "documents.csv"))
    expect(page.locator("#upload a[href$='/documents.csv']")).to_have_count(1)
    page.locator("#batch-button").click()
    expect(page.locator("#batch-status")).to_contain_text("Done.")
    expect(page.locator("#rescaled-summary-table")).to_be_visible()
    expect(page.get_by_role("tab", name="0–1 scale")).to_be_visible()
    problems["batch rescaled"] = layout_problems(page, width)
    screenshot(page, screenshots, f"fit-batch-rescaled-{width}.png")
    page.context.close()
    assert not any(problems.values()), json.dumps(problems, indent=1)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_a_pasted_source_and_candidates_score_faithfulness_only(browser, app_url, scorer, screenshots, viewport):
    """The page opened with an example's texts as values: a source and candidates pasted were scored for precision,
    recall and F against the example's unrelated reference, with a verdict that "the directions disagree"."""
    page = open_page(browser, app_url, viewport)
    page.locator("#source textarea").fill(SOURCE)
    for number, text in enumerate(CANDIDATES[:2], 1):
        page.locator(f"#candidate-{number} textarea").fill(text)
    score(page)
    status = page.locator("#compare-status")
    expect(status).to_contain_text("Note: precision, recall and F were left out: they need References")
    expect(page.locator("#rescaled-table [role=grid]")).to_have_attribute("aria-colcount", "2")
    assert column_names(page.locator("#rescaled-table")) == ["candidate", "faithfulness"]
    expected = scorer.score_directions(CANDIDATES[:2], sources=[SOURCE] * 2, directions=["faithfulness"])
    page.get_by_role("tab", name="Raw scores").click()
    for row, value in enumerate(expected["faithfulness"]):
        expect(cell(page.locator("#raw-table"), row, 1)).to_have_text(f"{value:.4f}")
    page.get_by_role("tab", name="0–1 scale").click()
    shown = page.locator("body").inner_text()
    assert "Riverton" not in shown and "disagree" not in shown
    expect(page.locator("#references textarea")).to_have_value("")
    expect(page.locator("#compare-signature textarea")).to_have_value(re.compile(r"\|dirs:faithfulness\|"))
    screenshot(page, screenshots, f"pasted-source-{viewport['width']}.png")
    page.context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_a_refused_setting_is_outlined_whole_and_its_message_is_beside_it(browser, app_url, screenshots, viewport):
    """The outline of the refused Directions missed the F box at 1280 px (the group's box ends before the boxes that
    wrap); at 390 px the outlined field was at the top of the page and the message at the bottom."""
    page = open_page(browser, app_url, viewport)
    load_example(page)
    open_settings(page)
    labels = page.locator("#directions label")
    for index in range(labels.count()):
        labels.nth(index).locator("input").uncheck()
    page.locator("#compare-button").click()
    expect(page.locator("#compare-status")).to_contain_text("Not scored: Choose at least one direction")
    expect(page.locator("#directions")).to_have_class(re.compile(r"\bat-fault\b"))
    outlines = labels.evaluate_all("labels => labels.map(label => getComputedStyle(label).boxShadow)")
    assert len(outlines) == 4 and all("inset" in outline for outline in outlines), outlines  # every box, F too
    beside = page.locator("#settings-status")
    expect(beside).to_contain_text("Not scored: Choose at least one direction")
    page.wait_for_function(  # brought into view, above the field it is about
        """() => { const box = document.querySelector('#settings-status').getBoundingClientRect();
                   return box.top >= -1 && box.bottom <= window.innerHeight + 1; }"""
    )
    field, message = page.locator("#directions").bounding_box(), beside.bounding_box()
    assert message["y"] < field["y"] < message["y"] + viewport["height"] / 2  # the field just below its message
    screenshot(page, screenshots, f"settings-problem-{viewport['width']}.png", full_page=False)
    page.locator("#directions").get_by_label("faithfulness", exact=True).check()
    score(page)
    expect(beside).to_be_hidden()  # gone with the problem
    expect(page.locator("#directions")).not_to_have_class(re.compile(r"\bat-fault\b"))
    page.context.close()


def test_batch_shows_no_estimate_left_over_from_an_earlier_run(page, tmp_path):
    """Batch's status read "processing | 101.2/0.5s": Gradio's estimate, the mean of earlier runs, a refused one's."""
    page.get_by_role("tab", name="Batch").click()
    page.locator("#batch-button").click()  # refused at once: no file
    expect(page.locator("#batch-status")).to_contain_text("Not scored")
    page.evaluate(
        """() => { window.statuses = [];
                   new MutationObserver(() => window.statuses.push(document.querySelector('#batch-status').innerText))
                       .observe(document.querySelector('#batch-status'), {subtree: true, childList: true,
                                                                            characterData: true}); }"""
    )
    page.locator("#upload input[type=file]").set_input_files(write_outputs_csv(tmp_path / "outputs.csv", OUTPUT_ROWS))
    expect(page.locator("#upload a[href$='/outputs.csv']")).to_have_count(1)
    page.locator("#batch-button").click()
    expect(page.locator("#batch-status")).to_contain_text("Done.")
    statuses = page.evaluate("window.statuses")
    assert statuses and not [text for text in statuses if re.search(r"\d/\d+(\.\d+)?\s*s", text)], statuses


@pytest.fixture(scope="module")
def served_app_url(tmp_path_factory):
    """The Space with a served model in its menu, "big": a tiny OPT behind the tests' own inference server, in
    vLLM's shapes (support/inference_server.py)."""
    from support import app_server
    from support.inference_server import InferenceServer
    from support.models import tiny_checkpoint_for

    import space.settings

    checkpoint = tiny_checkpoint_for(tmp_path_factory, "opt")
    with InferenceServer("vllm", checkpoint) as server:
        entry = f"big={server.checkpoint};served_model={server.name};served_tokenizer={checkpoint}"
        settings = space.settings.settings_from_env(
            {"BARTSCORE_APP_MODELS": entry, "BARTSCORE_APP_DEFAULT_MODEL": "big", "BARTSCORE_APP_DEVICE": "cpu"}
        )
        with app_server.serving(settings) as url:
            yield url, server, checkpoint


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_a_served_model_scores_from_the_menu_by_its_name_alone(browser, served_app_url, screenshots, viewport):
    """A served model in the menu (it kept the Space from starting), scored through its server as the engine scores
    the same model loaded here; the page names it "big" and never shows the server's address."""
    url, server, checkpoint = served_app_url
    page = open_page(browser, url, viewport)
    expect(page.get_by_text("Advanced settings: big (causal language model)")).to_be_visible()
    page.locator("#source textarea").fill(SOURCE)
    for number, text in enumerate(CANDIDATES[:2], 1):
        page.locator(f"#candidate-{number} textarea").fill(text)
    score(page)
    expected = bart_score.BARTScorer(checkpoint=checkpoint, device="cpu").score_directions(
        CANDIDATES[:2], sources=[SOURCE] * 2, directions=["faithfulness"]
    )
    page.get_by_role("tab", name="Raw scores").click()
    for row, value in enumerate(expected["faithfulness"]):
        expect(cell(page.locator("#raw-table"), row, 1)).to_have_text(f"{value:.4f}")
    expect(page.locator("#compare-signature textarea")).to_have_value(re.compile(r"^ckpt:big\|"))
    assert any(path == "/v1/completions" for _, path, _ in server.requests)  # scored by the server
    address = server.url.split("//", 1)[1].split("/", 1)[0]  # 127.0.0.1:<port>
    assert address not in page.content() and address not in page.locator("body").inner_text()
    screenshot(page, screenshots, f"served-{viewport['width']}.png")
    page.context.close()
