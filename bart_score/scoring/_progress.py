"""The progress bar of every long scoring run: pairs done of the run's pairs, and pairs/s."""

from __future__ import annotations

from tqdm.auto import tqdm

# The rate always as pairs per second (tqdm turns a slow rate into seconds per pair by default).
_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_noinv_fmt}]"


def progress_bar(total: int, *, enabled: bool, unit: str = " pairs") -> tqdm:
    """A bar over `total` pairs (or other units: the cluster counts rows) on stderr (a no-op object when not
    enabled), advanced with its update(n)."""
    return tqdm(total=total, unit=unit, desc="BARTScore", bar_format=_FORMAT, disable=not enabled)
