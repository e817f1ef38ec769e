"""A GGUF file converted into a plain transformers folder (``bartscore convert MODEL.gguf DIR``): config.json, the
weights as float32 safetensors, the tokenizer and the chat template (the file's, or one read beside it), which
``from_pretrained`` and every tool that reads a saved checkpoint read as they are.

transformers cannot save a model it loaded from GGUF (its config keeps the GGUF quantization settings), so the
converted model is a fresh one built from the config without them, given the dequantized weights. The weights are
kept in float32, the dtype GGUF tensors are dequantized to by default, so that the folder scores exactly as the file.

The folder is written into a temporary folder beside it and renamed into place when complete: an interrupted
conversion leaves nothing under the folder's name. It holds CONVERTED_MARKER, which says what it was converted
from; an existing folder is replaced only when it is empty or holds that marker (one of convert's own outputs)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass

from ..errors import InputError, OutputFileError
from ..messages import FileName, Mention
from .gguf import is_gguf_path

# The file in a converted folder that says what it was converted from, and marks it as convert's to replace.
CONVERTED_MARKER = "bartscore-convert.json"
CONVERTED_FORMAT = "bartscore-convert"


@dataclass(frozen=True)
class Conversion:
    """A checked conversion: the GGUF file (its real path), the folder to write (absolute), and whether a previous
    conversion is there to be replaced."""

    gguf: str
    folder: str
    replaces: bool


def check_conversion(gguf: str, folder: str) -> Conversion:
    """The conversion of the GGUF file `gguf` into `folder`, checked before anything is read but the file's header:
    InputError (about the option `gguf` or `folder`) for a path that is not a GGUF file, and for a folder that is a
    file, or holds files that are not one of convert's outputs (no CONVERTED_MARKER), which is not replaced;
    CheckpointLoadError for a file that is not valid GGUF (read_gguf_header)."""
    from .gguf import read_gguf_header, require_gguf_extra

    if not isinstance(gguf, str) or not is_gguf_path(gguf) or not os.path.isfile(gguf):
        raise InputError(
            Mention("gguf"),
            " ",
            FileName(str(gguf)),
            " is not a GGUF file (a file named *.gguf)",
            option="gguf",
            value=gguf,
        )
    require_gguf_extra(gguf)
    read_gguf_header(gguf)
    target = os.path.abspath(os.path.expanduser(folder))
    replaces = False
    if os.path.lexists(target):
        if not os.path.isdir(target) or os.path.islink(target):
            raise InputError(
                Mention("folder"), " ", FileName(folder), " is not a folder", option="folder", value=folder
            )
        entries = os.listdir(target)
        if entries and CONVERTED_MARKER not in entries:
            raise InputError(
                Mention("folder"),
                " ",
                FileName(folder),
                f" holds {len(entries)} file(s) that a conversion did not write (it has no {CONVERTED_MARKER}), so it "
                f"is not replaced",
                option="folder",
                value=folder,
                remedy="give a new folder, or an empty one",
            )
        replaces = bool(entries)
    return Conversion(os.path.realpath(gguf), target, replaces)


def convert_gguf(gguf: str, folder: str) -> list[str]:
    """Writes the GGUF file `gguf` as a plain transformers folder at `folder` (see the module's text), checked first
    by check_conversion; gives the names of the files written. The folder appears complete or not at all."""
    conversion = check_conversion(gguf, folder)
    parent, name = os.path.split(conversion.folder)
    os.makedirs(parent, exist_ok=True)
    partial = tempfile.mkdtemp(prefix=f".{name}.converting-", dir=parent)
    try:
        _write(conversion.gguf, partial)
        written = sorted(os.listdir(partial))
        mask = _umask()  # the temporary folder is private, and transformers writes its weights so too
        os.chmod(partial, 0o777 & ~mask)
        for entry in written:
            os.chmod(os.path.join(partial, entry), 0o666 & ~mask)
        check_conversion(gguf, folder)  # again: the folder may have changed while the file was converted
        _put_in_place(partial, conversion.folder)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return written


def _write(gguf: str, folder: str) -> None:
    """The converted model, its tokenizer, its chat template and CONVERTED_MARKER, written into `folder`."""
    import torch

    from ..version import __version__
    from .checkpoints import locate_checkpoint, side_chat_template
    from .loading import load_plain

    checkpoint = locate_checkpoint(gguf)
    tokenizer, model = load_plain(checkpoint, torch.float32)
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = type(model)(config)
    plain.load_state_dict(model.state_dict())
    plain.save_pretrained(folder)
    side = side_chat_template(checkpoint)
    if side is not None:
        tokenizer.chat_template = side.template
    tokenizer.save_pretrained(folder)
    marker = {
        "format": CONVERTED_FORMAT,
        "source": gguf,
        "source_identity": checkpoint.identity(),
        "chat_template": side.file if side is not None else "GGUF metadata" if tokenizer.chat_template else None,
        "bartscore": __version__,
    }
    with open(os.path.join(folder, CONVERTED_MARKER), "w", encoding="utf-8") as handle:
        json.dump(marker, handle, indent=2)
        handle.write("\n")


def _put_in_place(partial: str, folder: str) -> None:
    """Renames the written folder `partial` to `folder`; a previous conversion there is moved aside first and removed
    once the new one is in place."""
    if not os.path.lexists(folder):
        os.rename(partial, folder)
        return
    parent, name = os.path.split(folder)
    previous = tempfile.mkdtemp(prefix=f".{name}.previous-", dir=parent)
    try:
        os.rename(folder, os.path.join(previous, name))
    except OSError as error:
        os.rmdir(previous)
        raise OutputFileError(f"cannot replace the folder: {error.strerror or error}", path=folder) from None
    os.rename(partial, folder)
    with contextlib.suppress(OSError):
        shutil.rmtree(previous)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
