"""What the Space's tests read off its pages, shared by its test modules: a table as the browser gets it
(`shown_table`), the chart's bars (`bars_of`), how closely the scores shown agree with the engine's (`TOLERANCE`), and
the value that is not a number (`NAN`)."""

import html
import math
import re

from support.lazy import LazyModule

gr = LazyModule("gradio")  # imported by the first test that uses it (support/lazy.py)

TOLERANCE = 1e-5  # scores from separate engine calls agree within this (batching changes float rounding)
NAN = math.nan


def shown_table(styler):
    """The table as the browser gets it: Gradio's data, display values and cell styles."""
    return gr.Dataframe(interactive=False).postprocess(styler)


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
