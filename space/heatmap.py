"""The Compare tab's token heatmap: each candidate's tokens as HTML, coloured by log-probability on one fixed scale,
with the value on hover and the model's special tokens set apart; and its CSS."""

from __future__ import annotations

import html

# Log-probabilities at or below this get the strongest colour, so that colours mean the same in every heatmap.
HEATMAP_FLOOR = -10.0


def token_heatmap(comparison):
    """HTML: each candidate's tokens, coloured by log-probability, with the value on hover."""
    blocks = [
        f'<p class="legend"><strong>Token heatmap.</strong> Each token of a candidate, coloured by its log-probability '
        f"given {comparison.tokens_given} (without prompt): the redder, the less likely the model found it "
        f'(<span class="swatch" style="background: {token_colour(0)}">0</span> to '
        f'<span class="swatch" style="background: {token_colour(HEATMAP_FLOOR)}">{HEATMAP_FLOOR:g} or less</span>). '
        f"Hover over a token for its value. Tokens in a dashed box are the model's special tokens (such as start and "
        f"end marks), counted in the score as the model's own loss counts them. A candidate's mean is its score for "
        f"this pair.</p>"
    ]
    for name, tokens in zip(comparison.names, comparison.tokens):
        mean = sum(log_prob for _, log_prob in tokens) / len(tokens)
        spans = "".join(token_span(text, log_prob, comparison.special_tokens) for text, log_prob in tokens)
        blocks.append(
            f'<div class="candidate" data-candidate="{html.escape(name)}">'
            f'<div class="name">{html.escape(name)} <span class="mean">mean log-probability {mean:.4f}</span></div>'
            f'<div class="tokens">{spans}</div></div>'
        )
    return "\n".join(blocks)


def token_span(text, log_prob, special_tokens):
    """A token; one with no text (the first bytes of a character that the next token completes) is a thin mark."""
    kind = " special" if text in special_tokens else " fragment" if not text else ""
    title = f"{text!r}: log p = {log_prob:.4f}" if text else f"part of the next character: log p = {log_prob:.4f}"
    return (
        f'<span class="token{kind}" style="background: {token_colour(log_prob)}" '
        f'title="{html.escape(title)}" data-logprob="{log_prob:.6f}">{html.escape(text)}</span>'
    )


def token_colour(log_prob):
    """White for likely tokens, deepening to red at HEATMAP_FLOOR and below."""
    unlikeliness = min(max(log_prob / HEATMAP_FLOOR, 0.0), 1.0)
    return f"hsl(0, 85%, {100 - 45 * unlikeliness:.1f}%)"


HEATMAP_CSS = """
.legend { font-size: 0.9em; margin-bottom: 0.8em; }
.swatch { padding: 0 0.3em; border: 1px solid #ccc; }
.candidate { margin-bottom: 1em; }
.name { font-weight: bold; margin-bottom: 0.3em; }
.mean { font-weight: normal; color: #666; margin-left: 0.5em; }
.tokens { white-space: pre-wrap; line-height: 1.9; color: #111; }
.token { border-radius: 3px; padding: 1px 0; cursor: help; box-shadow: inset -1px 0 rgba(255, 255, 255, 0.8); }
.token.fragment { padding: 1px 2px; }
.token.special { font-family: monospace; font-size: 0.8em; border: 1px dashed #888; padding: 0 2px; margin: 0 2px; }
"""
