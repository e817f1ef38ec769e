"""Baseline files: a model's reference points (see bart_score.baselines.rescale), kept in a documented JSON file with
the settings they are valid for (model, token policy, prompt setting, max_length) as its key, and where they are kept.

``load_baseline`` reads and checks one, ``write_baseline`` writes one atomically; ``Baseline.mismatches`` compares
its key with a call's settings, as data that ``mismatch_parts`` says in a message. Making a baseline is
bart_score.baselines.build; finding the one a call needs, bart_score.baselines._lookup."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..corpora._outputs import write_atomically
from ..corpora._reading import read_json
from ..errors import BaselineError, BaselineNotFoundError
from ..messages import FileName, Mention, Part
from ..options import LoadedBaseline
from ..scoring.protocols import IdentifiedScorer
from .rescale import POINT_DIRECTIONS, ReferencePoints

BASELINE_FORMAT = "bartscore-baseline"
BASELINE_FORMAT_VERSION = 1
BASELINE_FOLDER_ENV = "BARTSCORE_BASELINES"
MAX_BASELINE_BYTES = 16 << 20  # a baseline file is a few KiB
# How messages name each setting of a baseline's key (max_length is the scorer's option of that name).
SETTING_NAMES: dict[str, Part] = {
    "model": "model",
    "token_policy": "token policy",
    "prompt": "prompt setting",
    "max_length": Mention("max_length"),
}
ABOUT = (
    "BARTScore reference points (bart_score.baselines.rescale). For each direction, 'unrelated' describes the scores "
    "of targets given unrelated conditions (random pairs from different rows or documents of the corpus) and 'copy' "
    "the scores of targets given themselves: mean, std, quantiles, number of pairs, and means by target length in "
    "words. "
    "rescaled = (score - unrelated.mean) / (copy.mean - unrelated.mean); f_score uses the means of precision's and "
    "recall's points. 'settings' must match the scorer and options that use this file; 'id' is a digest of "
    "everything else in the file and names it in signatures (rescale:baseline-<id>)."
)


# How a model's identity starts (models.loading.checkpoint_identity); older files hold the checkpoint as typed.
IDENTITY_PREFIXES = ("dir:", "gguf:", "hub:", "served:")


def baseline_settings(scorer: IdentifiedScorer, prompt_label: str) -> dict[str, Any]:
    """A baseline's key: what must be the same for its reference points to apply. The model is its identity
    (models.loading.checkpoint_identity), not the name it was given: the same checkpoint named by another path
    matches, another model at the same path, or the same directory saved again, does not."""
    return {
        "model": scorer.model_identity,
        "token_policy": scorer.token_policy,
        "prompt": prompt_label,
        "max_length": scorer.options.max_length,
    }


@dataclass(frozen=True)
class Baseline(LoadedBaseline):
    path: str
    document: dict

    @property
    def id(self) -> str:
        return self.document["id"]

    @property
    def label(self) -> str:
        return f"baseline-{self.id}"

    @property
    def settings(self) -> dict[str, Any]:
        return self.document["settings"]

    @property
    def points(self) -> dict[str, ReferencePoints]:
        return {
            direction: ReferencePoints(stats["unrelated"]["mean"], stats["copy"]["mean"])
            for direction, stats in self.document["directions"].items()
        }

    def mismatches(self, settings: Mapping[str, object]) -> list[Mismatch]:
        """Each of `settings` (a key's setting: its value in a call) that differs from the file's."""
        return [
            Mismatch(name, self.settings[name], value)
            for name, value in settings.items()
            if self.settings[name] != value
        ]


class Mismatch(NamedTuple):
    """A setting of a baseline's key (a name of SETTING_NAMES) whose value in the file is not the call's."""

    setting: str
    in_file: object
    in_call: object


def mismatch_parts(mismatches: Sequence[Mismatch]) -> list[Part]:
    """Mismatches as a message says them, one after another: "max_length: the file has 1024, this call uses 512;
    prompt setting: ..." (max_length a Mention)."""
    parts: list[Part] = []
    for mismatch in mismatches:
        if parts:
            parts.append("; ")
        parts += [
            SETTING_NAMES[mismatch.setting],
            f": the file has {mismatch.in_file!r}, this call uses {mismatch.in_call!r}",
        ]
        if mismatch.setting == "model" and not str(mismatch.in_file).startswith(IDENTITY_PREFIXES):
            parts.append(
                " (the file names the model as it was typed, as baseline files made before bart_score keyed them on "
                "the model's identity did)"
            )
    return parts


def default_baseline_folder() -> str:
    """$BARTSCORE_BASELINES, else bartscore/baselines in the user's cache folder ($XDG_CACHE_HOME or ~/.cache)."""
    if os.environ.get(BASELINE_FOLDER_ENV):
        return os.environ[BASELINE_FOLDER_ENV]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "bartscore", "baselines")


def default_baseline_path(settings: Mapping[str, Any]) -> str:
    """Where the baseline of these settings is written and looked for: a readable name plus a digest of the key."""

    def readable(value: object) -> str:
        return re.sub(r"[^A-Za-z0-9.-]+", "_", str(value)).strip("_")[-60:]

    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8")).hexdigest()[:8]
    name = (
        f"{readable(settings['model'])}.{readable(settings['token_policy'])}.prompt-{readable(settings['prompt'])}."
        f"maxlen-{settings['max_length']}.{digest}.json"
    )
    return os.path.join(default_baseline_folder(), name)


def baselines_agreeing(folder: str, known: Mapping[str, object], *, chat: bool) -> list[str]:
    """The paths of the baseline files in `folder` whose key has every setting of `known` (a part of a key, as
    baseline_settings makes it: what is known before the model loads) and whose token policy is chat scoring's when
    `chat`, another's when not; a file that does not read as a baseline is none (load_baseline says why when it is
    the one asked for)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    agreeing = []
    for name in names:
        path = os.path.join(folder, name)
        if not name.endswith(".json"):
            continue
        try:
            baseline = load_baseline(path)
        except BaselineError:
            continue
        if not baseline.mismatches(known) and str(baseline.settings["token_policy"]).startswith("chat:") == chat:
            agreeing.append(path)
    return agreeing


def load_baseline(path: str) -> Baseline:
    """Reads and checks a baseline file; BaselineError says what is wrong with it (a file that is not a regular one,
    larger than MAX_BASELINE_BYTES, or JSON nested too deeply among its reasons)."""
    if not os.path.lexists(path):
        raise BaselineNotFoundError("no baseline file at ", FileName(path))
    document = read_json(path, f"the baseline file {path}", limit=MAX_BASELINE_BYTES, error=BaselineError)
    if not isinstance(document, dict) or document.get("format") != BASELINE_FORMAT:
        raise BaselineError(FileName(path), f" is not a baseline file (its format is not {BASELINE_FORMAT!r})")
    version = document.get("format_version")
    if version != BASELINE_FORMAT_VERSION:
        raise BaselineError(
            FileName(path),
            f" is a version {version!r} baseline file; this bart_score reads version {BASELINE_FORMAT_VERSION}",
            remedy="make it again",
        )
    _check_structure(document, path)
    if document.get("id") != baseline_id(document):
        raise BaselineError(
            FileName(path),
            f" does not match its id {document.get('id')!r}: it was changed after it was written",
            remedy="make it again rather than editing it, so that its id in signatures names its numbers",
        )
    return Baseline(os.fspath(path), document)


# The type each setting must have: the key compares them with the scorer's, and messages and file names print them.
_SETTING_TYPES = {"model": str, "token_policy": str, "prompt": str, "max_length": int}


def _check_structure(document: dict[str, Any], path: str) -> None:
    """Every field load_baseline and its users read, with its type; BaselineError names the first that is wrong."""

    def wrong(field: str, problem: str) -> BaselineError:
        return BaselineError(FileName(path), f" is not a complete baseline file: {field} {problem}")

    def mapping(value: object, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise wrong(field, f"must be a mapping (a JSON object), got {_json_kind(value)}")
        return value

    def member(parent: Mapping[str, Any], key: str, field: str) -> Any:
        if key not in parent:
            raise wrong(field, "is missing")
        return parent[key]

    if not isinstance(document.get("id"), str):
        raise wrong("id", f"must be a string, got {_json_kind(document.get('id'))}")
    settings = mapping(member(document, "settings", "settings"), "settings")
    for name, kind in _SETTING_TYPES.items():
        value = member(settings, name, f"settings.{name}")
        if not isinstance(value, kind) or isinstance(value, bool) or (kind is str and not value):
            wanted = "a non-empty string" if kind is str else "an integer"
            raise wrong(f"settings.{name}", f"must be {wanted}, got {_json_kind(value)}")
    directions = mapping(member(document, "directions", "directions"), "directions")
    if not directions:
        raise wrong("directions", "has no directions")
    for direction, stats in directions.items():
        if direction not in POINT_DIRECTIONS:
            raise wrong(f"directions.{direction}", f"is not a direction with reference points ({POINT_DIRECTIONS})")
        mapping(stats, f"directions.{direction}")
        for point in ("unrelated", "copy"):
            field = f"directions.{direction}.{point}"
            figures = mapping(member(stats, point, field), field)
            mean = member(figures, "mean", f"{field}.mean")
            if isinstance(mean, bool) or not isinstance(mean, (int, float)) or not math.isfinite(mean):
                raise wrong(f"{field}.mean", f"must be a finite number, got {_json_kind(mean)}")


def _json_kind(value: object) -> str:
    """A value as a message names it: its JSON kind, and the value itself when it is short."""
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    kind = kinds.get(type(value), "a number")
    shown = repr(value)
    return f"{kind} {shown}" if len(shown) <= 40 and not isinstance(value, (dict, type(None))) else kind


def baseline_id(document: Mapping[str, Any]) -> str:
    """A digest of everything in the file but the id itself."""
    content = {key: value for key, value in document.items() if key != "id"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]


def write_baseline(document: Mapping[str, Any], path: str) -> None:
    """Writes the file atomically as every output file is (bart_score.corpora._outputs.write_atomically): a reader sees
    the old file or the whole new one, never a part; missing folders are made; a link keeps pointing where it did; the
    file gets the umask's permissions or keeps the old one's. Anything but a regular file under `path` (a folder, a
    device, a FIFO) is refused with OSError, and a document holding NaN or infinity with ValueError (JSON has
    neither)."""
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    write_atomically(path, lambda handle: handle.write(text), make_folders=True)
