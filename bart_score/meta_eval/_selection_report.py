"""The report of ``bartscore meta-eval --select`` (docs/selection.md), from meta_eval._selection_statistics.select:
the printed table (per benchmark and aspect, the configuration chosen on the development documents, the default's
and the paper's values) and the CSV file (one line per column and configuration)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..corpora._outputs import spreadsheet_cell
from .benchmarks import BENCHMARKS


def _number(value: float | None, signed: bool = False) -> str:
    if value is None or math.isnan(value):
        return "nan"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _interval(bounds: Sequence[float]) -> str:
    return f"[{_number(bounds[0])}, {_number(bounds[1])}]"


def render(report: Mapping[str, Any]) -> str:
    """The printed table: per benchmark and aspect, the configuration chosen on the development part with its
    development and held-out values, the default's, and the paper's value."""
    selection = report["selection"]
    lines = [
        f"Configuration chosen on the development documents ({selection['dev_fraction']:.0%} by a hash of each "
        f"document, seed {selection['seed']}), reported on the held-out documents with a "
        f"{selection['bootstrap']['confidence']:.0%} bootstrap interval ({selection['bootstrap']['resamples']} "
        f"resamples of the held-out documents); optimism = development - held-out"
    ]
    for column in report["columns"]:
        benchmark = column["benchmark"]
        split = report["split"][benchmark]
        unit = "documents" if split["unit"] == "doc_id" else "source texts"
        lines += [
            "",
            f"{BENCHMARKS[benchmark].title} {column['aspect']} ({column['measure']}; {len(split['development'])} "
            f"development, {len(split['held_out'])} held-out {unit})",
        ]
        width = max(len(column["best"]["name"]), len(column["default"]["name"]))
        for role, label in (("best", "chosen "), ("default", "default")):
            entry = column[role]
            line = (
                f"  {label}  {entry['name'].ljust(width)}  development {_number(entry['development'])}  held-out "
                f"{_number(entry['held_out'])} {_interval(entry['interval'])}"
            )
            if role == "best":
                line += f"  optimism {_number(column['optimism'], signed=True)}"
            lines.append(line)
        paper = column["paper"]
        if paper:
            lines.append(f"  paper    {paper['metric']} {paper['value']:.3f} (all documents; {paper['source']})")
    return "\n".join(lines)


CSV_FIELDS = (
    "column",
    "benchmark",
    "aspect",
    "measure",
    "configuration",
    "role",
    "development",
    "held_out",
    "held_out_low",
    "held_out_high",
    "paper",
    "paper_metric",
)


def report_csv(report: Mapping[str, Any]) -> str:
    """One line per benchmark-aspect column and configuration; role says which was chosen and which is the default
    (intervals are computed for those two)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for column in report["columns"]:
        for entry in column["configurations"]:
            roles = [
                label
                for role, label in (("best", "chosen"), ("default", "default"))
                if column[role]["name"] == entry["name"]
            ]
            interval = column["best" if "chosen" in roles else "default"]["interval"] if roles else [None, None]
            paper = column["paper"] or {}
            line = {
                "column": column["key"],
                "benchmark": column["benchmark"],
                "aspect": column["aspect"],
                "measure": column["measure"],
                "configuration": spreadsheet_cell(entry["name"]),
                "role": ", ".join(roles),
                "development": entry["development"],
                "held_out": entry["held_out"],
                "held_out_low": interval[0],
                "held_out_high": interval[1],
                "paper": paper.get("value"),
                "paper_metric": paper.get("metric", ""),
            }
            writer.writerow(
                {k: "" if v is None or (isinstance(v, float) and math.isnan(v)) else v for k, v in line.items()}
            )
    return out.getvalue()
