"""How messages write a count with its noun: "1 field", "3 fields", "1 reply", "2 replies"."""

from __future__ import annotations


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """`count` followed by the noun in the number that the count takes ("1 row", "0 rows", "2 rows"); `plural` for
    nouns that do not just add an s."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"
