"""The Space's plots, drawn on the server as HTML so that they always show the run they come with, and read the same
to a screen reader as to the eye:

- the Compare tab's bar chart: each candidate's 0–1 score per direction, grouped by direction, coloured by
  candidate, each bar labelled with its value (and the raw score in its accessible name);
- the Batch tab's means with 95% confidence intervals, one SVG panel per direction on one shared axis, so that
  overlapping intervals and differences between directions show at a glance;

and their CSS."""

from __future__ import annotations

import html
import math

from .batch import direction_label, finite
from .candidates import DIRECTION_LABELS, Comparison, has_scale

COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#56b4e9", "#8c6d00")  # colour-blind safe (Okabe & Ito)


# ---------------------------------------------------------------------------------------------------------------------
# The Compare tab's bar chart


def bar_chart(comparison: Comparison) -> str:
    """HTML: one group of bars per direction that has a 0–1 scale, a bar per candidate from 0 (an unrelated text)
    to its score, with 1 (a copy) marked; a direction without a scale is named in a note instead."""
    drawn = [direction for direction in comparison.scores if has_scale(comparison, direction)]
    values = [v for d in drawn for v in comparison.rescaled[d] if math.isfinite(v)]
    low, high = chart_limits(values)
    legend = "".join(
        f'<span class="key"><span class="swatch" style="background: {COLOURS[i % len(COLOURS)]}"></span>'
        f"{html.escape(name)}</span>"
        for i, name in enumerate(comparison.names)
    )
    groups = "".join(bar_group(comparison, direction, low, high) for direction in drawn)
    lines = "".join(
        f'<div class="level" style="bottom: {position(value, low, high):.2f}%"><span>{value:g} = {name}</span></div>'
        for value, name in ((1, "copy"), (0, "unrelated"))
    )
    missing = [DIRECTION_LABELS[d] for d in comparison.scores if d not in drawn]
    note = (
        f'<p class="note">No bars for {html.escape(", ".join(missing))}: a copy does not score above an unrelated '
        f"text there, so these scores have no 0–1 scale (the raw scores are in the table).</p>"
        if missing
        else ""
    )
    plot = f'<div class="plot">{lines}{groups}</div>' if drawn else ""
    return (
        f'<div class="bar-chart"><p class="legend"><strong>0–1 scores by direction.</strong> {legend}</p>'
        f"{plot}{note}</div>"
    )


def bar_group(comparison: Comparison, direction: str, low: float, high: float) -> str:
    bars, slot = [], 100 / len(comparison.names)  # each candidate's share of the group's width, in percent
    for index, (name, value, score) in enumerate(
        zip(comparison.names, comparison.rescaled[direction], comparison.scores[direction])
    ):
        if not math.isfinite(value):
            continue
        bottom, top = sorted((position(0.0, low, high), position(value, low, high)))
        label = f"{DIRECTION_LABELS[direction]}, {name}: {value:.3f} on the 0–1 scale (raw score {score:.4f})"
        bars.append(
            f'<div class="bar" role="img" tabindex="0" aria-label="{html.escape(label)}" title="{html.escape(label)}" '
            f'data-direction="{direction}" data-candidate="{html.escape(name)}" data-value="{value:.6f}" '
            f'data-score="{score:.6f}" style="left: {slot * (index + 0.1):.2f}%; width: {slot * 0.8:.2f}%; '
            f'bottom: {bottom:.2f}%; height: {top - bottom:.2f}%; background: {COLOURS[index % len(COLOURS)]}">'
            f'<span class="value">{value:.2f}</span></div>'
        )
    return (
        f'<div class="group" data-direction="{direction}"><div class="bars">{"".join(bars)}</div>'
        f'<div class="name">{DIRECTION_LABELS[direction]}</div></div>'
    )


def chart_limits(values: list[float]) -> tuple[float, float]:
    """From 0 (an unrelated text) to 1 (a copy), widened to whole tenths to hold every value."""
    values = [*values, 0.0, 1.0]
    return math.floor(min(values) * 10) / 10, math.ceil(max(values) * 10) / 10


def position(value: float, low: float, high: float) -> float:
    """Where a value sits between the chart's limits, in percent of its height."""
    return (value - low) / (high - low) * 100


BAR_CHART_CSS = """
.bar-chart .legend { font-size: 0.9em; margin-bottom: 0.6em; }
.bar-chart .key { display: inline-flex; align-items: center; margin-right: 1em; white-space: nowrap; }
.bar-chart .swatch { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.35em; border-radius: 2px; }
.bar-chart .plot { position: relative; display: flex; gap: 4%; height: 220px; margin: 1.4em 0 2.2em;
  padding-left: 5.6em; border-bottom: 1px solid #767676; }
.bar-chart .level { position: absolute; left: 0; right: 0; border-top: 1px dashed #767676; pointer-events: none; }
.bar-chart .level span { position: absolute; left: 0; transform: translateY(-50%); font-size: 0.75em;
  color: #444; white-space: nowrap; background: var(--block-background-fill, #fff); padding-right: 0.2em; }
.bar-chart .group { position: relative; flex: 1; display: flex; flex-direction: column; }
.bar-chart .bars { position: relative; flex: 1; margin: 0 6%; }
.bar-chart .bar { position: absolute; border-radius: 2px 2px 0 0; }
.bar-chart .bar:focus { outline: 3px solid #111; outline-offset: 1px; }
.bar-chart .bar .value { position: absolute; bottom: 100%; left: 50%; transform: translateX(-50%);
  font-size: 0.75em; color: #222; white-space: nowrap; }
.bar-chart .name { position: absolute; top: 100%; width: 100%; text-align: center; font-size: 0.85em;
  padding-top: 0.3em; color: #222; }
.bar-chart .note { font-size: 0.9em; color: #444; }
"""


# ---------------------------------------------------------------------------------------------------------------------
# The Batch tab's means with confidence intervals


def interval_plot(summary) -> str:
    """HTML with one SVG panel per direction: each system's mean (dot) and 95% confidence interval (line), every
    panel on the same axis, so that overlapping intervals show at a glance. With rescaled directions, only those are
    drawn, with the reference points 0 (unrelated text) and 1 (copy) marked when they fall inside the axis. Values
    that are not numbers (a direction that cannot be rescaled, an interval a single row cannot give) are left out, and
    a note under the legend says which."""
    directions = list(dict.fromkeys(summary["direction"])) if len(summary) else []
    means = {d: list(summary["mean"][summary["direction"] == d]) for d in directions}
    # A rescaled direction with no number at all (it cannot be rescaled) is named in the note; when no rescaled
    # direction has one, the raw scores are drawn instead.
    unscaled = [d for d in directions if d.endswith("_rescaled") and not any(map(finite, means[d]))]
    rescaled = [d for d in directions if d.endswith("_rescaled") and d not in unscaled]
    raw = [d for d in directions if not d.endswith("_rescaled")]
    drawn, left_out = {}, [f"{d} (this direction cannot be rescaled)" for d in unscaled]
    for direction in rescaled or raw:
        rows = summary[summary["direction"] == direction]
        kept = rows[[finite(mean) for mean in rows["mean"]]]
        left_out += [f"{name} in {direction} (no mean)" for name in rows["system"][~rows.index.isin(kept.index)]]
        if len(kept):
            drawn[direction] = kept
            low, high = kept.columns[3], kept.columns[4]
            left_out += [
                f"{name} in {direction} (no interval)"
                for name, ci_low, ci_high in zip(kept["system"], kept[low], kept[high])
                if not (finite(ci_low) and finite(ci_high))
            ]
    values = [v for rows in drawn.values() for v in rows.iloc[:, 2:5].to_numpy().ravel() if finite(v)]
    axis = axis_ticks(min(values), max(values)) if values else None
    panels = [interval_panel(rows, direction, axis) for direction, rows in drawn.items()]
    scale = "rescaled scores (0 = an unrelated text, 1 = a copy)" if rescaled else "raw scores (higher is better)"
    legend = (
        f'<p class="legend">Each system\'s mean (dot) and 95% bootstrap confidence interval (line), {scale}. Where '
        f"two intervals overlap, the difference may be chance: the significance table below has the tests.</p>"
    )
    note = (
        f'<p class="note">Not drawn, as the value is not a number: {html.escape("; ".join(left_out))}.</p>'
        if left_out
        else ""
    )
    return f'<div class="intervals">{legend}{note}<div class="panels">{"".join(panels)}</div></div>'


# The interval panels' drawing size, in SVG units: about the pixels a panel gets, four side by side at 1280 px or one
# across a phone, so that its 12-unit labels show at about 12 px (a panel twice as wide drew them at 6 px on a phone).
PANEL_LABEL_WIDTH = 92  # a system's name, cut to NAME_CHARACTERS (its whole name is in the panel's title)
PANEL_PLOT_WIDTH = 180
NAME_CHARACTERS = 13
PANEL_FONT_SIZE = 12


def interval_panel(
    rows, direction, axis, *, label_width=PANEL_LABEL_WIDTH, plot_width=PANEL_PLOT_WIDTH, row_height=26
) -> str:
    """One direction's panel on the shared axis (start, end, ticks); every mean is a number, an interval that is not
    is drawn as the dot alone."""
    low, high = rows.columns[3], rows.columns[4]  # the CI columns, named after the confidence level
    start, end, ticks = axis

    def x(value):
        return label_width + (value - start) / (end - start) * plot_width

    top, height = 8, 8 + row_height * len(rows) + 34
    parts = [f'<line x1="{x(start):.1f}" x2="{x(end):.1f}" y1="{height - 30}" y2="{height - 30}" stroke="#888"/>']
    for tick in ticks:
        parts.append(
            f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top}" y2="{height - 26}" stroke="#eee"/>'
            f'<text x="{x(tick):.1f}" y="{height - 14}" font-size="{PANEL_FONT_SIZE}" text-anchor="middle" fill="#444">'
            f"{tick:g}</text>"
        )
    if direction.endswith("_rescaled"):
        for value, name in ((0, "unrelated"), (1, "copy")):
            if start <= value <= end:
                parts.append(
                    f'<line class="reference" x1="{x(value):.1f}" x2="{x(value):.1f}" y1="{top}" y2="{height - 30}" '
                    f'stroke="#999" stroke-dasharray="4 3"><title>{value}: {name}</title></line>'
                )
    for index, (name, mean, ci_low, ci_high) in enumerate(zip(rows["system"], rows["mean"], rows[low], rows[high])):
        y = top + row_height * index + row_height / 2
        colour = COLOURS[index % len(COLOURS)]
        shown = name if len(name) <= NAME_CHARACTERS else name[: NAME_CHARACTERS - 1] + "…"
        has_interval = finite(ci_low) and finite(ci_high)
        interval = f"95% CI {ci_low:.4f} to {ci_high:.4f}" if has_interval else "no confidence interval"
        line = (
            f'<line x1="{x(ci_low):.1f}" x2="{x(ci_high):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{colour}" '
            f'stroke-width="3"/>'
            if has_interval
            else ""
        )
        parts.append(
            f'<g class="system" data-system="{html.escape(name)}" data-mean="{mean:.6f}">'
            f"<title>{html.escape(name)}: mean {mean:.4f}, {interval}</title>"
            f'<text x="{label_width - 8}" y="{y + 4:.1f}" font-size="{PANEL_FONT_SIZE}" text-anchor="end" fill="#222">'
            f"{html.escape(shown)}</text>{line}"
            f'<circle cx="{x(mean):.1f}" cy="{y:.1f}" r="5" fill="{colour}"/></g>'
        )
    width = label_width + plot_width + 16  # room for the last tick's label
    return (
        f'<div class="panel" data-direction="{html.escape(direction)}"><div class="title">{direction_label(direction)}'
        f'</div><svg viewBox="0 0 {width} {height}" style="width: 100%; max-width: {width}px" role="img" '
        f'aria-label="{html.escape(direction)}: means with confidence intervals">{"".join(parts)}</svg></div>'
    )


def axis_ticks(low: float, high: float) -> tuple[float, float, list[float]]:
    """A padded axis from about `low` to `high` (finite numbers) and its ticks, at steps of 1, 2 or 5 times a power of
    ten."""
    if high - low < 1e-9:
        low, high = low - 0.5, high + 0.5
    raw_step = (high - low) / 4
    power = 10 ** math.floor(math.log10(raw_step))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw_step)
    start, end = math.floor(low / step) * step, math.ceil(high / step) * step
    ticks = [start + i * step for i in range(round((end - start) / step) + 1)]
    return start, end, [round(tick, 10) for tick in ticks]


INTERVALS_CSS = """
.legend { font-size: 0.9em; margin-bottom: 0.5em; }
.note { font-size: 0.9em; color: #444; margin-bottom: 0.5em; }
.panels { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 270px), 1fr)); gap: 1em 1.5em; }
.panel .title { font-weight: bold; margin-bottom: 0.2em; }
"""
