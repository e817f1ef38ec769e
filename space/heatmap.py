"""The Compare tab's token heatmap: each candidate's tokens as HTML, coloured by log-probability on one fixed scale,
the model's special tokens set apart, each candidate's mean said exactly (the table's score where it is that score),
and every value reachable without a mouse: a checkbox prints the values under the tokens. And its CSS."""

from __future__ import annotations

import html

from .candidates import DIRECTION_LABELS, Comparison, prompt_described

# Log-probabilities at or below this get the strongest colour, so that colours mean the same in every heatmap.
HEATMAP_FLOOR = -10.0


def token_heatmap(comparison: Comparison) -> str:
    """HTML: each candidate's tokens, coloured by log-probability, with the value on hover and, with the checkbox
    ticked, under each token."""
    blocks = [
        f'<p class="legend"><strong>Token heatmap.</strong> Each token of a candidate, coloured by its log-probability '
        f"given {comparison.tokens_given}, without a prompt: the redder, the less likely the model found it "
        f'(<span class="swatch" style="background: {token_colour(0)}">0</span> to '
        f'<span class="swatch" style="background: {token_colour(HEATMAP_FLOOR)}">{HEATMAP_FLOOR:g} or less</span>). '
        f"Tokens in a dashed box are the model's special tokens (such as start and end marks), counted in the score as "
        f"the model's own loss counts them.</p>"
        f'<label class="values-toggle"><input type="checkbox"> Show each token\'s log-probability</label>'
    ]
    for index, (name, tokens) in enumerate(zip(comparison.names, comparison.tokens)):
        spans = "".join(token_span(text, log_prob, comparison.special_tokens) for text, log_prob in tokens)
        blocks.append(
            f'<div class="candidate" data-candidate="{html.escape(name)}">'
            f'<div class="name">{html.escape(name)} <span class="mean">{html.escape(mean_label(comparison, index))}'
            f'</span></div><div class="tokens">{spans}</div></div>'
        )
    return f'<div class="heatmap">{"".join(blocks)}</div>'


def table_direction(comparison: Comparison) -> str:
    """The table's direction whose pairs the heatmap's tokens are: faithfulness given the source, else precision
    given the first reference."""
    return "faithfulness" if comparison.tokens_given == "the source" else "precision"


def mean_label(comparison: Comparison, index: int) -> str:
    """What a candidate's heatmap adds up to: the table's raw score when the tokens are exactly that score's pair,
    else the tokens' mean with what makes the table's number differ."""
    direction = table_direction(comparison)
    label = DIRECTION_LABELS[direction]
    tokens = comparison.tokens[index]
    mean = sum(log_prob for _, log_prob in tokens) / len(tokens)
    reasons = []
    if direction not in comparison.scores:
        reasons.append(f"{label} is not among the directions chosen")
    else:
        if comparison.prompt is not None:
            reasons.append(f"the table's {label} is scored with {prompt_described(comparison.prompt)}")
        if direction == "precision" and comparison.references > 1:
            reasons.append(
                f"the table's {label} combines the {comparison.references} references by their {comparison.aggregation}"
            )
    if direction not in comparison.scores:
        return f"mean log-probability {mean:.4f} ({reasons[0]})"
    score = comparison.scores[direction][index]
    if not reasons:
        return f"{label} {score:.4f}: the mean of these log-probabilities, as in the table"
    return f"mean log-probability {mean:.4f} ({'; '.join(reasons)}; the table's {label} is {score:.4f})"


def token_span(text: str, log_prob: float, special_tokens: set) -> str:
    """A token; one with no text (the first bytes of a character that the next token completes) is a thin mark."""
    kind = " special" if text in special_tokens else " fragment" if not text else ""
    title = f"{text!r}: log p = {log_prob:.4f}" if text else f"part of the next character: log p = {log_prob:.4f}"
    shown = f"{log_prob:.2f}".replace("-", "−")
    return (
        f'<span class="token{kind}" style="background: {token_colour(log_prob)}" '
        f'title="{html.escape(title)}" data-logprob="{log_prob:.6f}" data-shown="{shown}">{html.escape(text)}</span>'
    )


def token_colour(log_prob: float) -> str:
    """White for likely tokens, deepening to red at HEATMAP_FLOOR and below."""
    unlikeliness = min(max(log_prob / HEATMAP_FLOOR, 0.0), 1.0)
    return f"hsl(0, 85%, {100 - 45 * unlikeliness:.1f}%)"


HEATMAP_CSS = """
.legend { font-size: 0.9em; margin-bottom: 0.5em; }
.values-toggle { display: inline-flex; align-items: center; gap: 0.4em; font-size: 0.9em; margin-bottom: 0.8em;
  cursor: pointer; }
.swatch { padding: 0 0.3em; border: 1px solid #ccc; }
.candidate { margin-bottom: 1em; }
.name { font-weight: bold; margin-bottom: 0.3em; }
.mean { font-weight: normal; color: #444; margin-left: 0.5em; }
.tokens { white-space: pre-wrap; line-height: 1.9; color: #111; }
.token { border-radius: 3px; padding: 1px 0; cursor: help; box-shadow: inset -1px 0 rgba(255, 255, 255, 0.8); }
.token.fragment { padding: 1px 2px; }
.token.special { font-family: monospace; font-size: 0.8em; border: 1px dashed #767676; padding: 0 2px; margin: 0 2px; }
.heatmap:has(.values-toggle input:checked) .tokens { line-height: 1.3; }
.heatmap:has(.values-toggle input:checked) .token { display: inline-flex; flex-direction: column; align-items: center;
  vertical-align: top; margin-bottom: 0.3em; }
.heatmap:has(.values-toggle input:checked) .token::after { content: attr(data-shown); font-size: 0.7em;
  font-family: sans-serif; color: #222; }
"""
