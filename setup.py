"""The wheel's long description: README.md without the front matter that configures the Hugging Face Space.

Everything else about the package is declared in pyproject.toml; setuptools takes the `readme` it lists as dynamic
from here, because a static `readme` would ship the Space's YAML to PyPI."""

from __future__ import annotations

from pathlib import Path

from setuptools import setup


def card_without_front_matter(readme: str) -> str:
    """The README's text after its leading `---` ... `---` block (the whole text when it has none)."""
    lines = readme.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        closing = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if closing is None:
            raise ValueError("README.md opens a YAML front matter block with '---' and never closes it")
        lines = lines[closing + 1 :]
    return "".join(lines).lstrip("\n")


setup(
    long_description=card_without_front_matter(Path(__file__).with_name("README.md").read_text(encoding="utf-8")),
    long_description_content_type="text/markdown",
)
