"""Where a checkpoint's files are, what the signature calls it, and what tells it apart from every other model.

A checkpoint is one of:

- a GGUF file (``path/model.gguf``), or a folder whose only weights are one GGUF file;
- a folder saved with ``save_pretrained`` (config.json, weights, tokenizer files);
- a Hugging Face Hub id, looked for in the Hugging Face cache, then on the Hub;
- an inference server a causal LM runs on, by its URL (``vllm+http://127.0.0.1:8000/v1``: servers.server_address).

Nothing here runs a checkpoint's code: configs and tokenizer configs are read as JSON, and any checkpoint that needs
code of its own (an ``auto_map``, or a model type transformers does not know) is refused (CustomCodeError).

Beside a GGUF file, one thing is read: a chat template (GGUF_SIDE_TEMPLATES), which a base model's file lacks. Its
tokenizer is always the one its metadata describes: transformers reads the file from a folder that holds it alone
(gguf_alone), since it would read a tokenizer.json or tokenizer_config.json beside it instead of the file's own."""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import math
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import huggingface_hub
import transformers
from huggingface_hub import constants as hub_constants

from ..corpora._reading import MAX_FILE_BYTES, file_sha256, read_bounded, read_json, size_text
from ..errors import CheckpointLoadError, CheckpointNotFoundError, CustomCodeError, InputError, first_line
from ..messages import FileName, Mention, Part
from .gguf import MAX_STRING_BYTES, is_gguf_path, read_gguf_header, require_gguf_extra
from .served._transport import ServerAddress, names_a_server, server_address
from .served.kinds import checked_kind

# Files whose bytes are a checkpoint's weights (sharded ones with their index): digested by their bytes, each once a
# process while its status stays the same (_WEIGHTS_DIGESTS).
_WEIGHTS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".index.json", ".gguf")
# Files a tokenizer is read from, in every tokenizer class of transformers: vocabularies, merges, sentencepiece and
# tiktoken models, the tokenizer config, special and added tokens, chat templates. They are digested by their bytes
# (a swap of two vocabulary entries keeps a file's size).
_TOKENIZER_FILE_PATTERNS = (
    "tokenizer*",
    "*.tokenizer",
    "*vocab*",
    "merges*",
    "*.codes",
    "*.model",
    "*.spm",
    "*.tiktoken",
    "dict.txt",
    "special_tokens_map.json",
    "added_tokens.json",
    "chat_template*",
    "normalizer.json",
    "emoji.json",
    "byte_maps.json",
    "word_*.json",
)
_CHAT_TEMPLATES_FOLDER = "additional_chat_templates"
_TOKENIZER_CONFIG = "tokenizer_config.json"
# The files beside a GGUF file that can give it a chat template, first first: a template file, then a tokenizer config's
# "chat_template" (as transformers reads a folder's). Each is read only for its template.
GGUF_SIDE_TEMPLATES = ("chat_template.jinja", _TOKENIZER_CONFIG)
# The files of a folder a tokenizer's chat template is read from (besides the tokenizer config's "chat_template").
_FOLDER_TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")
# Configs (config.json, tokenizer_config.json, ...) are a few KiB, and are read whole by transformers and by identity();
# vocabularies can reach tens of MiB and keep the bound of every file input.
MAX_CONFIG_BYTES = 64 << 20
# One request to see whether the Hub answers at all, before huggingface_hub's own retries (five, about 30 s).
HUB_PROBE_SECONDS = 3.0
# The SHA-256 of each weights file read in this process, by its status (device, inode, size, mtime_ns, ctime_ns): a
# file is read once however often its identity is asked for (an engine shared by many holders asks at each), and again
# once it is written, even in place with its size and modification time set back, since utime cannot set the ctime back
# and a file written anew is another inode. About 0.7 to 1 s per 500 MB (docs/models.md).
_WEIGHTS_DIGESTS: dict[tuple[int, int, int, int, int], str] = {}


@dataclass(frozen=True)
class Checkpoint:
    """A located checkpoint.

    name: as it was given. source: what from_pretrained reads, the absolute path of the folder (of the GGUF file's
    folder) or the Hub id. gguf_file: the GGUF file's name in that folder, or None. server: where the model runs when
    it is served (its source is then the name), else None."""

    name: str
    source: str
    local: bool
    gguf_file: str | None = None
    server: ServerAddress | None = None

    @property
    def real_path(self) -> str | None:
        """The real absolute path of the folder, or of the GGUF file; None for a Hub id."""
        if not self.local:
            return None
        return os.path.realpath(os.path.join(self.source, self.gguf_file or ""))

    @property
    def label(self) -> str:
        """What the signature calls the checkpoint: a file or folder by its real absolute path (one name however it
        was typed), a Hub id as it is."""
        return self.real_path or self.source

    @property
    def named(self) -> Part:
        """The checkpoint as messages name it: a folder or GGUF file as a FileName (which the Space does not show), a
        Hub id quoted."""
        return FileName(self.name) if self.local else repr(self.name)

    def identity(self) -> str:
        """What tells this model apart from every other (baselines and score caches are keyed on it): every file that
        loading it reads, and nothing else.

        A folder: "dir:<real path>#<digest>", the digest covering config.json's bytes, every tokenizer file's bytes and
        each weights file's name and bytes (weights_digest), so that a folder saved again (retrained, another
        tokenizer, another model at the same path), even with the same sizes and modification times, is another
        checkpoint, and one merely touched or copied in place is the same. A GGUF file: "gguf:<real path>#<digest>" of
        its name and bytes, the digest of its header (metadata and tensor table) and the chat template read beside it
        with its file's name (side_chat_template; other files beside it are not read).
        A Hub id: "hub:<id>@<commit>" with the snapshot commit when it is in the Hugging Face cache, else "hub:<id>". A
        served model has the identity its server's report gives it (served._server.ServedModel.identity), which the
        server is asked for when the model is loaded."""
        if self.server is not None:
            raise CheckpointLoadError(
                f"{self.name!r} is a served model, whose identity is what its server reports when it is loaded"
            )
        if not self.local:
            commit = _cached_commit(self.source)
            return f"hub:{self.source}@{commit}" if commit else f"hub:{self.source}"
        check_checkpoint_files(self)
        digest = hashlib.sha256()
        if self.gguf_file:
            require_gguf_extra(self.name)
            gguf_path = self.real_path
            assert gguf_path is not None  # a GGUF checkpoint is a local file
            digest.update(weights_digest(gguf_path, self.named))
            digest.update(read_gguf_header(gguf_path).digest.encode("ascii"))
            side = side_chat_template(self)
            if side is not None:
                digest.update(json.dumps([side.file, side.template], sort_keys=True).encode("utf-8"))
            return f"gguf:{self.real_path}#{digest.hexdigest()[:16]}"
        config = os.path.join(self.source, "config.json")
        digest.update(read_bounded(config, limit=MAX_CONFIG_BYTES, error=CheckpointLoadError))
        for name, path in _tokenizer_files(self.source):
            if not os.path.isdir(path):
                digest.update(json.dumps([name, file_sha256(path)]).encode("utf-8"))
        for name in sorted(os.listdir(self.source)):
            path = os.path.join(self.source, name)
            if name.endswith(_WEIGHTS_SUFFIXES) and not os.path.isdir(path):  # a folder is not read as weights
                digest.update(weights_digest(path, self.named))
        return f"dir:{self.real_path}#{digest.hexdigest()[:16]}"


@dataclass(frozen=True)
class SideTemplate:
    """A chat template read beside a GGUF file: the template (a text, or named texts as transformers keeps several),
    and the name of the file it was read from."""

    template: str | dict[str, str]
    file: str


def side_chat_template(checkpoint: Checkpoint) -> SideTemplate | None:
    """The chat template beside a GGUF checkpoint: that of the first of GGUF_SIDE_TEMPLATES that holds one (a
    tokenizer config without a "chat_template" holds none); None when none does, or for a checkpoint of another kind.
    A file that cannot be read (see check_checkpoint_files), a tokenizer config that is not JSON, or a
    "chat_template" that is neither a text nor a list of named texts ({"name": ..., "template": ...}) is a
    CheckpointLoadError naming the file."""
    if not checkpoint.gguf_file:
        return None
    for name in GGUF_SIDE_TEMPLATES:
        path = os.path.join(checkpoint.source, name)
        if not os.path.lexists(path):
            continue
        what = (f"the {name} beside ", checkpoint.named)
        if name != _TOKENIZER_CONFIG:
            data = read_bounded(path, what, limit=MAX_STRING_BYTES, error=CheckpointLoadError)
            try:
                return SideTemplate(data.decode("utf-8"), name)
            except UnicodeDecodeError as error:
                raise CheckpointLoadError(*what, f" is not UTF-8 text (byte {error.start})") from None
        config = read_json(path, what, limit=MAX_CONFIG_BYTES, error=CheckpointLoadError)
        template = config.get("chat_template") if isinstance(config, dict) else None
        if template is not None:
            return SideTemplate(_template_value(template, what), name)
    return None


def _template_value(value: object, what: tuple[Part, ...]) -> str | dict[str, str]:
    """A tokenizer config's "chat_template": a text, or a list of named texts (as a dict, as transformers keeps it),
    within the bound of a template in a GGUF file's metadata (MAX_STRING_BYTES)."""
    template: str | dict[str, str] | None = None
    if isinstance(value, str):
        template = value
    elif isinstance(value, list) and all(
        isinstance(entry, dict) and isinstance(entry.get("name"), str) and isinstance(entry.get("template"), str)
        for entry in value
    ):
        template = {entry["name"]: entry["template"] for entry in value}
    if template is not None:
        size = sum(len(text.encode("utf-8", "surrogatepass")) for text in _texts(template))
        if size > MAX_STRING_BYTES:
            raise CheckpointLoadError(
                *what, f' has a "chat_template" of {size:,} bytes, over the limit of {MAX_STRING_BYTES:,}'
            )
        return template
    raise CheckpointLoadError(
        *what,
        ' has a "chat_template" that is neither a text nor a list of named texts ({"name": ..., "template": ...})',
    )


def _texts(template: str | dict[str, str]) -> list[str]:
    return [template] if isinstance(template, str) else list(template.values())


def has_chat_template(checkpoint: Checkpoint) -> bool | None:
    """Whether loading the checkpoint gives it a chat template, told from its files without loading it: a GGUF
    file's from its header (tokenizer.chat_template) or the files beside it (side_chat_template); a folder's, or a
    cached Hub snapshot's, from its template files (chat_template.jinja, chat_template.json, additional_chat_templates/)
    or its tokenizer config's "chat_template". None for a Hub id that is not in the Hugging Face cache."""
    if checkpoint.gguf_file:
        assert checkpoint.real_path is not None  # a GGUF checkpoint is a local file
        check_checkpoint_files(checkpoint)
        require_gguf_extra(checkpoint.name)
        return read_gguf_header(checkpoint.real_path).chat_template is not None or bool(side_chat_template(checkpoint))
    folder = checkpoint.source if checkpoint.local else _cached_snapshot(checkpoint.source)
    if folder is None:
        return None
    check_checkpoint_files(checkpoint)
    if any(os.path.isfile(os.path.join(folder, name)) for name in _FOLDER_TEMPLATE_FILES):
        return True
    if os.path.isdir(os.path.join(folder, _CHAT_TEMPLATES_FOLDER)):
        return True
    config_path = os.path.join(folder, _TOKENIZER_CONFIG)
    if not os.path.isfile(config_path):
        return False
    config = read_json(config_path, limit=MAX_CONFIG_BYTES, error=CheckpointLoadError)
    return isinstance(config, dict) and bool(config.get("chat_template"))


@contextlib.contextmanager
def gguf_alone(checkpoint: Checkpoint) -> Iterator[str]:
    """The folder transformers reads a checkpoint from (its source): for a GGUF file, a temporary folder that holds
    it alone (a link to it), so that neither its tokenizer nor its model is read from other files beside it
    (transformers reads a tokenizer.json or tokenizer_config.json there before the file's own tokenizer)."""
    if not checkpoint.gguf_file:
        yield checkpoint.source
        return
    assert checkpoint.real_path is not None  # a GGUF checkpoint is a local file
    with tempfile.TemporaryDirectory(prefix="bartscore-gguf-") as folder:
        os.symlink(checkpoint.real_path, os.path.join(folder, checkpoint.gguf_file))
        yield folder


def locate_checkpoint(name: str) -> Checkpoint:
    """Where the checkpoint `name` (not a named configuration: see resolve_checkpoint) is: a GGUF file, a local folder
    or a Hub id; or the server a served model runs on. Reads nothing but folder listings; a path that names nothing
    here is refused with what was looked for."""
    if names_a_server(name):
        checked_kind(name)
        return Checkpoint(name, name, local=False, server=server_address(name))
    path = os.path.abspath(os.path.expanduser(name))
    if os.path.isdir(path):
        return _folder(name, path)
    if is_gguf_path(name):
        if not os.path.isfile(path):
            raise CheckpointNotFoundError("there is no GGUF file at ", FileName(name))
        return Checkpoint(name, os.path.dirname(path), local=True, gguf_file=os.path.basename(path))
    if os.path.isabs(name) or name.startswith((".", "~")):  # a path, and no Hub id starts so
        raise CheckpointNotFoundError("there is no checkpoint folder at ", FileName(name))
    return Checkpoint(name, name, local=False)


def _folder(name: str, path: str) -> Checkpoint:
    if not os.access(path, os.R_OK | os.X_OK):
        raise CheckpointLoadError("cannot read the checkpoint directory ", FileName(name), " (permission denied)")
    entries = sorted(os.listdir(path))
    has_weights = any(entry.endswith(_WEIGHTS_SUFFIXES) and not is_gguf_path(entry) for entry in entries)
    gguf_files = [entry for entry in entries if is_gguf_path(entry) and os.path.isfile(os.path.join(path, entry))]
    if not has_weights and len(gguf_files) == 1:
        return Checkpoint(name, path, local=True, gguf_file=gguf_files[0])
    if not has_weights and gguf_files:
        raise InputError.at_path(
            Mention("checkpoint", name),
            f" is a folder of {len(gguf_files)} GGUF files ({', '.join(gguf_files)})",
            remedy=["give the path of the one to load, such as ", FileName(os.path.join(name, gguf_files[0]))],
        )
    # A config.json that is there but not a readable file is check_checkpoint_files' to name.
    if not os.path.lexists(os.path.join(path, "config.json")):
        raise CheckpointNotFoundError(
            FileName(name),
            " is a directory without a config.json, so not a saved checkpoint (save_pretrained() writes one), and "
            "without a GGUF file",
        )
    return Checkpoint(name, path, local=True)


def check_checkpoint_files(checkpoint: Checkpoint) -> None:
    """Refuses (CheckpointLoadError, naming the file) a local checkpoint's config or tokenizer file (beside a GGUF
    file, a file that can give it a chat template: GGUF_SIDE_TEMPLATES) that transformers or bartscore would read
    without a bound, or not at all: one that is not a regular file (a device such as /dev/zero, a pipe, a
    link to nothing: transformers would read forever, or quietly build a tokenizer without a vocabulary) or that is
    over its size bound. Reads nothing but the folder's listing and the files' status."""
    if not checkpoint.local:
        return
    if checkpoint.gguf_file:
        names = [name for name in GGUF_SIDE_TEMPLATES if os.path.lexists(os.path.join(checkpoint.source, name))]
    else:
        names = ["config.json", *(name for name, _ in _tokenizer_files(checkpoint.source))]
    for name in names:
        path = os.path.join(checkpoint.source, name)
        what = (f"{name} of the checkpoint ", checkpoint.named)
        try:
            status = os.stat(path)
        except FileNotFoundError:
            raise CheckpointLoadError(*what, " is a link to a file that is not there") from None
        except OSError as problem:
            raise CheckpointLoadError("cannot read ", *what, f": {problem.strerror or problem}") from None
        if stat.S_ISDIR(status.st_mode):
            continue  # a sub-folder that shares a name pattern (a pipeline's tokenizer/ folder): not read as a file
        if not stat.S_ISREG(status.st_mode):
            raise CheckpointLoadError(
                *what, " is not a regular file (a device, pipe or socket)", remedy="give the file itself"
            )
        is_config = name.endswith("config.json")
        limit = MAX_CONFIG_BYTES if is_config else MAX_FILE_BYTES
        if status.st_size > limit:
            raise CheckpointLoadError(
                *what,
                f" is {status.st_size:,} bytes, over the limit of {size_text(limit)} on a checkpoint's "
                f"{'config' if is_config else 'tokenizer'} files",
            )


def refuse_custom_code(checkpoint: Checkpoint, config: dict, tokenizer_config: dict) -> None:
    """Raises CustomCodeError when the checkpoint's config or tokenizer config asks for code of its own: an auto_map,
    or a model type transformers does not know. (A GGUF file's config is its metadata, which names no code.)"""
    sources = [("config", config), ("tokenizer config", tokenizer_config)]
    for where, content in sources:
        if content.get("auto_map"):
            named = ", ".join(_class_names(content["auto_map"])) or repr(content["auto_map"])
            raise _needs_own_code(
                checkpoint, f"needs its own Python code: its {where} names classes of the checkpoint's own ({named})"
            )
    model_type = config.get("model_type")
    if model_type is not None and model_type not in transformers.CONFIG_MAPPING:
        raise _needs_own_code(
            checkpoint,
            f"is a {model_type!r} model, which transformers {transformers.__version__} does not know: loading it would "
            "need its own Python code (or a newer transformers)",
        )


def _needs_own_code(checkpoint: Checkpoint, why: str) -> CustomCodeError:
    """The refusal of a checkpoint that asks for code of its own (`why`: what in its files asks for it)."""
    return CustomCodeError(
        checkpoint.named,
        f" {why}, and bartscore never runs code from a checkpoint",
        remedy="use a checkpoint of an architecture that transformers has built in",
    )


def _class_names(auto_map: object) -> list[str]:
    """The class paths an auto_map names: a mapping of Auto class to a path, or to [slow, fast] paths (None for a
    missing one), or a plain list."""
    values = auto_map.values() if isinstance(auto_map, dict) else auto_map if isinstance(auto_map, list) else [auto_map]
    names = []
    for value in values:
        names += [item for item in (value if isinstance(value, list) else [value]) if isinstance(item, str)]
    return names


def hub_unreachable() -> str | None:
    """Why the Hugging Face Hub cannot be reached from here, after one short request; None when it answers (with
    any status)."""
    try:
        huggingface_hub.utils.get_session().head(hub_constants.ENDPOINT, timeout=HUB_PROBE_SECONDS)
    except Exception as error:  # no answer, for whatever reason: DNS, refused, timeout, proxy, TLS
        return f"{hub_constants.ENDPOINT} cannot be reached: {first_line(error)}"
    return None


def weights_identity(path: str) -> str:
    """A state dict loaded over a checkpoint (cnn-para's bart.pth): "weights:<absolute real path>#<digest of its name
    and bytes>" (weights_digest)."""
    stamp = weights_digest(path)
    return f"weights:{os.path.realpath(path)}#{hashlib.sha256(stamp).hexdigest()[:16]}"


def weights_digest(path: str, checkpoint: Part | None = None) -> bytes:
    """A weights file's name and the SHA-256 of its bytes, as JSON: read once a process while its status stays the
    same (_WEIGHTS_DIGESTS). A file that is not there, is not a regular file (a device or pipe would be read forever)
    or cannot be read is a CheckpointLoadError naming it, with the `checkpoint` it is part of, else by its path."""
    name = os.path.basename(path)
    what: tuple[Part, ...] = (
        (f"the weights file {name} of ", checkpoint) if checkpoint else ("the weights file ", FileName(path))
    )
    try:
        digest = _WEIGHTS_DIGESTS.get(_status_key(os.stat(path)))
        if digest is None:
            digest = _read_weights_digest(path, what)
    except FileNotFoundError:
        raise CheckpointLoadError(*what, " is not there (a link to nothing, or removed)") from None
    except OSError as problem:
        raise CheckpointLoadError("cannot read ", *what, f": {problem.strerror or problem}") from None
    return json.dumps([name, digest]).encode("utf-8")


def _read_weights_digest(path: str, what: tuple[Part, ...]) -> str:
    """The SHA-256 of the file at `path`, kept in _WEIGHTS_DIGESTS under the status of the file read (opened without
    waiting, so that a pipe put there is refused rather than waited on), unless it was written while it was read."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as handle:
        before = os.fstat(descriptor)
        if not stat.S_ISREG(before.st_mode):
            raise CheckpointLoadError(*what, " is not a regular file (a device, pipe or socket)")
        digest = hashlib.sha256()
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
        if _status_key(os.fstat(descriptor)) == _status_key(before):
            _WEIGHTS_DIGESTS[_status_key(before)] = digest.hexdigest()
    return digest.hexdigest()


def _status_key(status: os.stat_result) -> tuple[int, int, int, int, int]:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def stored_tensor_elements(checkpoint: Checkpoint) -> dict[str, int] | None:
    """The number of values of each tensor the checkpoint's weights hold, by name, read from their headers alone (a
    GGUF file's tensor table; each safetensors file's header; else each torch file's pickle, loaded onto the meta
    device); None for a Hub id not in the Hugging Face cache, whose files are not here to read."""
    if checkpoint.gguf_file:
        assert checkpoint.real_path is not None  # a GGUF checkpoint is a local file
        return dict(read_gguf_header(checkpoint.real_path).tensor_elements)
    folder = checkpoint.source if checkpoint.local else _cached_snapshot(checkpoint.source)
    if folder is None:
        return None
    names = sorted(os.listdir(folder))
    tensors = [name for name in names if name.endswith(".safetensors")]
    if tensors:
        return _tensor_elements(folder, tensors, _safetensors_elements)
    return _tensor_elements(folder, [name for name in names if name.endswith((".bin", ".pt", ".pth"))], _torch_elements)


def stored_weights_are_finite(checkpoint: Checkpoint) -> bool | None:
    """Whether every value the checkpoint's weights files hold is finite (NaN and infinities are damage), read one
    tensor at a time in the files' own dtype (a GGUF tensor dequantized); None for a Hub id not in the Hugging Face
    cache. For the error path: this reads every weight."""
    if checkpoint.gguf_file:
        return _gguf_values_are_finite(checkpoint)
    folder = checkpoint.source if checkpoint.local else _cached_snapshot(checkpoint.source)
    if folder is None:
        return None
    names = sorted(os.listdir(folder))
    tensors = [name for name in names if name.endswith(".safetensors")]
    if not tensors:
        tensors = [name for name in names if name.endswith((".bin", ".pt", ".pth"))]
    for name in tensors:
        for value in _tensors(os.path.join(folder, name)):
            if value.is_floating_point() and not bool(value.isfinite().all()):
                return False
    return True


def _tensors(path: str) -> Iterator[Any]:
    import torch

    if path.endswith(".safetensors"):
        from safetensors import safe_open

        with safe_open(path, framework="pt") as weights:
            for name in weights.keys():  # noqa: SIM118  # a safetensors handle, not a dict
                yield weights.get_tensor(name)
        return
    loaded = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    yield from (value for value in loaded.values() if isinstance(value, torch.Tensor))


def _gguf_values_are_finite(checkpoint: Checkpoint) -> bool:
    import numpy as np
    from gguf import GGUFReader, dequantize

    assert checkpoint.real_path is not None  # a GGUF checkpoint is a local file
    read_gguf_header(checkpoint.real_path)  # bounded, so that the reader below is
    reader = GGUFReader(checkpoint.real_path)
    return all(bool(np.isfinite(dequantize(tensor.data, tensor.tensor_type)).all()) for tensor in reader.tensors)


def _tensor_elements(folder: str, names: list[str], read: Callable[[str], dict[str, int]]) -> dict[str, int]:
    elements: dict[str, int] = {}
    for name in names:
        path = os.path.join(folder, name)
        try:
            elements.update(read(path))
        except Exception as error:  # a damaged file fails in the safetensors or torch reader's own way
            raise CheckpointLoadError(
                "cannot read the weights file ", FileName(path), f": {first_line(error)}"
            ) from None
    return elements


def _safetensors_elements(path: str) -> dict[str, int]:
    from safetensors import safe_open

    with safe_open(path, framework="pt") as weights:
        return {name: math.prod(weights.get_slice(name).get_shape()) for name in weights.keys()}  # noqa: SIM118  # a handle


def _torch_elements(path: str) -> dict[str, int]:
    import torch

    loaded = torch.load(path, map_location="meta", weights_only=True, mmap=True)
    if not isinstance(loaded, dict):
        raise CheckpointLoadError(
            "the weights file ", FileName(path), f" holds a {type(loaded).__name__}, not a state dict"
        )
    return {str(name): value.numel() for name, value in loaded.items() if isinstance(value, torch.Tensor)}


def _tokenizer_files(folder: str) -> list[tuple[str, str]]:
    """(name relative to the folder, path) of each entry in it named as a tokenizer file, sorted by name (links
    included, whatever they point to: check_checkpoint_files checks them)."""
    found = [
        (name, os.path.join(folder, name))
        for name in os.listdir(folder)
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in _TOKENIZER_FILE_PATTERNS)
    ]
    templates = os.path.join(folder, _CHAT_TEMPLATES_FOLDER)
    if os.path.isdir(templates):
        found += [(f"{_CHAT_TEMPLATES_FOLDER}/{name}", os.path.join(templates, name)) for name in os.listdir(templates)]
    return sorted(found)


def _cached_commit(repo_id: str) -> str | None:
    """The commit of the cached snapshot a Hub id loads from (its config.json's snapshot folder), or None."""
    snapshot = _cached_snapshot(repo_id)
    if snapshot is None:
        return None
    return os.path.basename(snapshot) if os.path.basename(os.path.dirname(snapshot)) == "snapshots" else None


def _cached_snapshot(repo_id: str) -> str | None:
    """The folder of the cached snapshot a Hub id loads from (its config.json's), or None."""
    try:
        found = huggingface_hub.try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # not a valid repository id: there is no snapshot
        return None
    return os.path.dirname(found) if isinstance(found, str) else None
