"""How a corpus is scored across a Ray cluster: ClusterOptions, and the cluster's bounds."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, InputTypeError
from ..inputs import describe, optional_positive_int, whole_number
from ..messages import Mention, shown
from ._checks import whole_number_from
from ._table import CheckedOptions, Flag, option, options_table

# A Ray cluster's address: "auto", or a head's host (a name, IPv4, or IPv6 in brackets) and port, with "ray://" for
# Ray Client.
CLUSTER_ADDRESS = re.compile(r"auto|(ray://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}")


# The cluster's bounds (bart_score.scaling.cluster, docs/security.md): the most scorers a run asks for (each loads a
# model); a scorer for at most every BATCHES_PER_ACTOR batches, so that a pool is never larger than its work; and the
# batches a table is cut into by default, BATCHES_PER_ACTOR_TARGET per scorer of at most MAX_AUTO_BATCH_ROWS rows, so
# that a killed driver loses about 1/BATCHES_PER_ACTOR_TARGET of the rows.
MAX_CLUSTER_ACTORS = 1024
BATCHES_PER_ACTOR = 4
BATCHES_PER_ACTOR_TARGET = 32
MAX_AUTO_BATCH_ROWS = 1000


def _whole_number_between(least: int, most: int) -> Callable[[Any, str], int | None]:
    """The check of an option that takes None or a whole number from `least` to `most`."""

    def check(value: Any, name: str) -> int | None:
        number = None if value is None else whole_number(value)
        if value is not None and (number is None or not least <= number <= most):
            raise InputError(
                Mention(name), f" must be an integer from {least} to {most} or None, got {shown(value)}", value=value
            )
        return number

    return check


def _cluster_address(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputTypeError(Mention(name), f" must be an address (a str) or None, got {describe(value)}", value=value)
    if not CLUSTER_ADDRESS.fullmatch(value):
        raise InputError.must_be(
            Mention(name), "'auto' or '[ray://]<head>:<port>'", value=value, remedy="leave it out for a local cluster"
        )
    return value


@options_table
@dataclass(frozen=True)
class ClusterOptions(CheckedOptions):
    """How a corpus is scored across a Ray cluster (bart_score.scaling.cluster): where, by how many scorers, in batches
    of how many rows, and how often a failed batch is tried again."""

    address: str | None = option(
        None,
        text="the Ray cluster to join: auto (this machine's), ray://HEAD:10001 (Ray Client) or HEAD:PORT (default: "
        "{default})",
        unset="the cluster this process is already connected to, else a local one started for the run",
        check=_cluster_address,
        # The command line starts a new process, connected to no cluster.
        flag=Flag(
            "--address", metavar="ADDRESS", default_text="a local cluster started for the run", section="cluster"
        ),
    )
    actors: int | None = option(
        None,
        text=f"scorers, each holding one loaded model, at most {MAX_CLUSTER_ACTORS} and one per {BATCHES_PER_ACTOR} "
        "batches (default: one per GPU of the cluster, or one)",
        check=_whole_number_between(1, MAX_CLUSTER_ACTORS),
        flag=Flag("--actors", metavar="N", section="cluster"),
    )
    rows_per_batch: int | None = option(
        None,
        text=f"rows a scorer scores at once, tried again, written and checkpointed as one (default: "
        f"{BATCHES_PER_ACTOR_TARGET} batches per scorer, of at most {MAX_AUTO_BATCH_ROWS} rows)",
        check=optional_positive_int,
        flag=Flag("--batch-rows", metavar="N", section="cluster"),
    )
    retries: int = option(
        3,
        text="times a failed batch is tried again before the run fails naming its rows; an error of the input's is "
        "not (default {default})",
        check=whole_number_from(0),
        flag=Flag("--retries", metavar="N", section="cluster"),
    )
