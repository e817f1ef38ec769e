"""The Batch tab's plot: each system's mean and 95% confidence interval per direction, drawn as SVG panels on a
common axis so that overlapping intervals show at a glance; and its CSS."""

from __future__ import annotations

import html
import math

INTERVAL_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")


def interval_plot(summary):
    """HTML with one SVG panel per direction: each system's mean (dot) and 95% confidence interval (line) on a common
    axis, so that overlapping intervals show at a glance. With rescaled directions, only those are drawn, with the
    reference points 0 (unrelated text) and 1 (copy) marked when they fall inside the axis. Values that are not
    numbers (a direction that cannot be rescaled, an interval a single row cannot give) are left out, and a note under
    the legend says which."""
    directions = list(dict.fromkeys(summary["direction"])) if len(summary) else []
    means = {d: list(summary["mean"][summary["direction"] == d]) for d in directions}
    # A rescaled direction with no number at all (it cannot be rescaled) is named in the note; when no rescaled
    # direction has one, the raw scores are drawn instead.
    unscaled = [d for d in directions if d.endswith("_rescaled") and not any(map(finite, means[d]))]
    rescaled = [d for d in directions if d.endswith("_rescaled") and d not in unscaled]
    raw = [d for d in directions if not d.endswith("_rescaled")]
    panels, left_out = [], [f"{d} (this direction cannot be rescaled)" for d in unscaled]
    for direction in rescaled or raw:
        rows = summary[summary["direction"] == direction]
        drawn = rows[[finite(mean) for mean in rows["mean"]]]
        left_out += [f"{name} in {direction} (no mean)" for name in rows["system"][~rows.index.isin(drawn.index)]]
        if len(drawn):
            panels.append(interval_panel(drawn, direction))
            low, high = drawn.columns[3], drawn.columns[4]
            left_out += [
                f"{name} in {direction} (no interval)"
                for name, ci_low, ci_high in zip(drawn["system"], drawn[low], drawn[high])
                if not (finite(ci_low) and finite(ci_high))
            ]
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


def finite(value):
    """Whether a summary value is a number that can be drawn (not NaN, not infinite, not missing)."""
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def interval_panel(rows, direction, *, label_width=150, plot_width=330, row_height=26):
    """One direction's panel; every mean is a number, an interval that is not is drawn as the dot alone."""
    low, high = rows.columns[3], rows.columns[4]  # the CI columns, named after the confidence level
    values = [value for value in (*rows["mean"], *rows[low], *rows[high]) if finite(value)]
    start, end, ticks = axis_ticks(min(values), max(values))

    def x(value):
        return label_width + (value - start) / (end - start) * plot_width

    top, height = 8, 8 + row_height * len(rows) + 34
    parts = [f'<line x1="{x(start):.1f}" x2="{x(end):.1f}" y1="{height - 30}" y2="{height - 30}" stroke="#888"/>']
    for tick in ticks:
        parts.append(
            f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top}" y2="{height - 26}" stroke="#eee"/>'
            f'<text x="{x(tick):.1f}" y="{height - 14}" font-size="11" text-anchor="middle" fill="#444">'
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
        colour = INTERVAL_COLOURS[index % len(INTERVAL_COLOURS)]
        shown = name if len(name) <= 20 else name[:19] + "…"
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
            f'<text x="{label_width - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end" fill="#222">'
            f"{html.escape(shown)}</text>{line}"
            f'<circle cx="{x(mean):.1f}" cy="{y:.1f}" r="5" fill="{colour}"/></g>'
        )
    width = label_width + plot_width + 20
    return (
        f'<div class="panel" data-direction="{html.escape(direction)}"><div class="title">{html.escape(direction)}'
        f'</div><svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{html.escape(direction)}: means with confidence intervals">{"".join(parts)}</svg></div>'
    )


def axis_ticks(low, high):
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
.note { font-size: 0.9em; color: #666; margin-bottom: 0.5em; }
.panels { display: flex; flex-wrap: wrap; gap: 1em 2em; }
.panel .title { font-weight: bold; margin-bottom: 0.2em; }
"""
