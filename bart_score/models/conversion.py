"""A GGUF file converted into a plain transformers folder (``bartscore convert MODEL.gguf DIR``): config.json, the
weights as float32 safetensors, the tokenizer and the chat template (the file's, or one read beside it), which
``from_pretrained`` and every tool that reads a saved checkpoint read as they are.

transformers cannot save a model it loaded from GGUF (its config keeps the GGUF quantization settings), so the
converted model is a fresh one built from the config without them, given the dequantized weights. The weights are
kept in float32, the dtype GGUF tensors are dequantized to by default, so that the folder scores exactly as the file.

The folder is written into a temporary folder beside it (``.DIR.converting-<owner>-*``, its owner this machine and
process) and renamed into place when complete: an interrupted conversion leaves nothing under the folder's name. It
holds CONVERTED_MARKER, which says what it was converted from and lists every file the conversion wrote with its size
and SHA-256. Nothing but a conversion's own files is ever removed:

- an existing folder is replaced only when it is empty, or when it holds the marker and nothing else than the files
  the marker lists, each with the bytes it lists; anything else there (a file the user added, one changed since, a
  sub-folder, a marker that lists no files) is refused before the file is read, and again when the folder is moved
  aside to be replaced (after it is out of reach under its name, so that a file written into it meanwhile is found:
  the folder is then put back as it was, and refused);
- SIGTERM (where nothing else handles it) and Ctrl-C remove the temporary folder before the process ends as they end
  it, and are held back while the folder is put in place; and each conversion first removes the temporary folders that
  an earlier one into the same folder left when it was killed outright (their owner process is gone), putting back
  an earlier conversion that was moved aside and not replaced;
- a full disk, or a file over the size limit (RLIMIT_FSIZE), is one OutputFileError, with nothing left beside the
  folder."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import tempfile
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..corpora._reading import read_json
from ..errors import BARTScoreError, BARTScoreWarning, InputError, OutputFileError
from ..messages import FileName, Mention, shown
from .gguf import is_gguf_path

# The file in a converted folder that says what it was converted from and lists the files the conversion wrote.
CONVERTED_MARKER = "bartscore-convert.json"
CONVERTED_FORMAT = "bartscore-convert"
# A marker lists a few files (seven for a folder of one weights file) in a few KiB: more is not one of ours.
MAX_MARKER_BYTES = 1 << 20
MAX_LISTED_FILES = 1_000
_SHA256 = re.compile(r"[0-9a-f]{64}")
# Who owns a temporary folder beside the folder: this machine (a digest of its name) and this process.
_HOST = hashlib.sha256(socket.gethostname().encode("utf-8", "surrogateescape")).hexdigest()[:8]
_WRITING, _ASIDE = "converting", "previous"
_REMEDY = "give a new folder or an empty one, or move what a conversion did not write out of this one"


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
    file, or holds anything but an earlier conversion's own files (see the module's text), which is not replaced;
    CheckpointLoadError for a file that is not valid GGUF (read_gguf_header)."""
    from .gguf import read_gguf_header, require_gguf_extra

    if not isinstance(gguf, str) or not is_gguf_path(gguf) or not os.path.isfile(gguf):
        raise InputError.at_path(Mention("gguf", gguf), " is not a GGUF file (a file named *.gguf)")
    require_gguf_extra(gguf)
    read_gguf_header(gguf)
    target = os.path.abspath(os.path.expanduser(folder))
    replaces = False
    if os.path.lexists(target):
        if not os.path.isdir(target) or os.path.islink(target):
            raise InputError.at_path(Mention("folder", folder), " is not a folder")
        problem = _not_a_conversion(target)
        if problem is not None:
            raise _refusal(folder, problem)
        replaces = bool(os.listdir(target))
    return Conversion(os.path.realpath(gguf), target, replaces)


def convert_gguf(gguf: str, folder: str) -> list[str]:
    """Writes the GGUF file `gguf` as a plain transformers folder at `folder` (see the module's text), checked first
    by check_conversion; gives the names of the files written. The folder appears complete or not at all."""
    _sweep(os.path.abspath(os.path.expanduser(folder)))
    conversion = check_conversion(gguf, folder)
    parent, name = os.path.split(conversion.folder)
    os.makedirs(parent, exist_ok=True)
    with _stops_held_back() as stops:
        partial = tempfile.mkdtemp(prefix=f".{name}.{_WRITING}-{_HOST}-{os.getpid()}-", dir=parent)
        try:
            model, tokenizer, marker = _load(conversion.gguf)
            written = _save(model, tokenizer, marker, partial, conversion.folder)
            with stops.held():  # the folder is whole under its name, old or new, whatever stops the process
                _put_in_place(partial, conversion.folder, folder)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
    return written


def _load(gguf: str) -> tuple[Any, Any, dict[str, Any]]:
    """The GGUF file's model rebuilt without its quantization settings, its tokenizer with the chat template read
    beside the file (if any), and the marker's account of them."""
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
    side = side_chat_template(checkpoint)
    if side is not None:
        tokenizer.chat_template = side.template
    marker = {
        "format": CONVERTED_FORMAT,
        "source": gguf,
        "source_identity": checkpoint.identity(),
        "chat_template": side.file if side is not None else "GGUF metadata" if tokenizer.chat_template else None,
        "bartscore": __version__,
    }
    return plain, tokenizer, marker


def _save(model: Any, tokenizer: Any, marker: dict[str, Any], partial: str, folder: str) -> list[str]:
    """Writes the model, its tokenizer and the marker (listing every other file with its size and SHA-256) into
    `partial`, made readable as the umask lets new files be; gives the names written. A write that fails (a full
    disk, a file over the size limit) is an OutputFileError about `folder`."""
    try:
        model.save_pretrained(partial)
        tokenizer.save_pretrained(partial)
        files = {}
        for entry in sorted(os.listdir(partial)):
            size, digest = _size_and_sha256(os.path.join(partial, entry))
            files[entry] = {"size": size, "sha256": digest}
        with open(os.path.join(partial, CONVERTED_MARKER), "w", encoding="utf-8") as handle:
            json.dump({**marker, "files": files}, handle, indent=2)
            handle.write("\n")
        written = sorted(os.listdir(partial))
        mask = _umask()  # the temporary folder is private, and transformers writes its weights so too
        os.chmod(partial, 0o777 & ~mask)
        for entry in written:
            os.chmod(os.path.join(partial, entry), 0o666 & ~mask)
    except Exception as error:
        reason = _write_failure(error)
        if reason is None:
            raise
        raise OutputFileError(
            f"cannot write the converted folder ({reason}; nothing of it is left beside it)", path=folder
        ) from None
    return written


def _write_failure(error: Exception) -> str | None:
    """What stopped a write, when `error` is a failed write: an OSError's strerror, or the OS error named by the
    errors of safetensors and tokenizers (Rust's "... (os error 28)", in an error of their own or a plain Exception);
    None for any other error."""
    if isinstance(error, BARTScoreError):
        return None
    if isinstance(error, OSError):
        return error.strerror or str(error)
    found = re.search(r"\(os error (\d+)\)", str(error))
    return os.strerror(int(found.group(1))) if found else None


def _put_in_place(partial: str, folder: str, given: str) -> None:
    """Renames the written folder `partial` to `folder` (`given` as the user named it): straight over nothing or an
    empty folder; else the earlier conversion is moved aside, checked there (see the module's text), replaced, and
    its own files removed."""
    try:
        os.rename(partial, folder)
        return
    except OSError as error:
        if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise OutputFileError(f"cannot put the converted folder in place ({error.strerror})", path=folder) from None
    parent, name = os.path.split(folder)
    aside = tempfile.mkdtemp(prefix=f".{name}.{_ASIDE}-{_HOST}-{os.getpid()}-", dir=parent)
    previous = os.path.join(aside, name)
    try:
        os.rename(folder, previous)
    except OSError as error:
        os.rmdir(aside)
        raise OutputFileError(f"cannot move the earlier conversion aside ({error.strerror})", path=folder) from None
    problem = _not_a_conversion(previous)
    if problem is not None:
        _put_back(previous, folder, problem)
        raise _refusal(given, problem)
    try:
        os.rename(partial, folder)
    except OSError as error:
        _put_back(previous, folder, f"the converted folder could not be put in place ({error.strerror})")
        raise OutputFileError(f"cannot put the converted folder in place ({error.strerror})", path=folder) from None
    _remove_conversion(previous)


def _put_back(previous: str, folder: str, problem: str) -> None:
    """Renames the folder moved aside back to `folder`; where something took its name meanwhile, it stays aside, and
    an OutputFileError says where."""
    try:
        os.rename(previous, folder)
    except OSError:
        raise OutputFileError(
            f"{problem}, and something took the folder's name meanwhile: what was in the folder is kept in "
            f"{previous!r}",
            path=folder,
        ) from None
    os.rmdir(os.path.dirname(previous))


def _remove_conversion(previous: str) -> None:
    """Removes, from the folder `previous` (an earlier conversion moved aside), the files its marker lists with the
    bytes it lists, the marker, and the folder with its temporary parent once they are empty. Anything else (written
    into it after it was checked) stays, and a warning says where."""
    listed = _listed_files(previous)
    for name, (size, digest) in (listed or {}).items():
        path = os.path.join(previous, name)
        with contextlib.suppress(OSError):
            if _size_and_sha256(path) == (size, digest):
                os.unlink(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(previous, CONVERTED_MARKER))
    try:
        os.rmdir(previous)
        os.rmdir(os.path.dirname(previous))
    except OSError:
        warnings.warn(
            BARTScoreWarning(
                "the earlier conversion, moved aside to be replaced, holds files that a conversion did not write "
                "(written into it meanwhile); they are kept in ",
                FileName(previous),
            ),
            stacklevel=2,
        )


def _not_a_conversion(folder: str) -> str | None:
    """Why the folder is not one that a conversion may replace: what it holds besides an earlier conversion's own
    files; None when it is empty, or holds the marker and only files it lists, with their sizes and bytes."""
    entries = os.listdir(folder)
    if not entries:
        return None
    if CONVERTED_MARKER not in entries:
        return f"holds {len(entries)} file(s) that a conversion did not write (it has no {CONVERTED_MARKER})"
    listed = _listed_files(folder)
    if listed is None:
        return (
            f"has a {CONVERTED_MARKER} that does not list the files a conversion wrote (an older bartscore's marker, "
            f"or not convert's)"
        )
    for entry in sorted(entries):
        if entry == CONVERTED_MARKER:
            continue
        if entry not in listed:
            return f"holds {shown(entry)}, which a conversion did not write (its {CONVERTED_MARKER} does not list it)"
        try:
            same = _size_and_sha256(os.path.join(folder, entry)) == listed[entry]
        except OSError:  # a folder, a link, a device or pipe, or a file that cannot be read under a listed name
            same = False
        if not same:
            return f"holds {shown(entry)}, which is not as the conversion wrote it (changed since, or replaced)"
    return None


def _listed_files(folder: str) -> dict[str, tuple[int, str]] | None:
    """The files the folder's marker lists, each name with its size and SHA-256; None for a marker that is not a
    regular file, cannot be read, is not JSON, or lists no files in that form (a plain name each)."""
    path = os.path.join(folder, CONVERTED_MARKER)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        marker = read_json(path, limit=MAX_MARKER_BYTES)
    except (OSError, InputError):
        return None
    files = marker.get("files") if isinstance(marker, dict) and marker.get("format") == CONVERTED_FORMAT else None
    if not isinstance(files, dict) or not files or len(files) > MAX_LISTED_FILES:
        return None
    listed = {}
    for name, entry in files.items():
        plain = name not in ("", ".", "..", CONVERTED_MARKER) and "/" not in name and "\0" not in name
        size = entry.get("size") if isinstance(entry, dict) else None
        digest = entry.get("sha256") if isinstance(entry, dict) else None
        if not (plain and type(size) is int and size >= 0 and isinstance(digest, str) and _SHA256.fullmatch(digest)):
            return None
        listed[name] = (size, digest)
    return listed


class _NotARegularFile(OSError):
    """A listed name that is a folder, a device, a pipe or a socket: not a file a conversion wrote."""


def _size_and_sha256(path: str) -> tuple[int, str]:
    """A regular file's size and SHA-256, opened without following a link or waiting on a pipe; OSError for anything
    else."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise _NotARegularFile(errno.EINVAL, "not a regular file", path)
        digest = hashlib.sha256()
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return status.st_size, digest.hexdigest()


def _refusal(folder: str, problem: str) -> InputError:
    return InputError.at_path(Mention("folder", folder), f" {problem}, so it is not replaced", remedy=_REMEDY)


def _sweep(folder: str) -> None:
    """Removes the temporary folders beside `folder` that a conversion into it left when it was killed outright
    (SIGKILL, a lost machine): its folder being written, and an earlier conversion moved aside, which is put back
    where the folder is not there, else removed as a conversion (_remove_conversion: its own files alone). Only those
    of this machine whose owner process is gone are touched."""
    parent, name = os.path.split(folder)
    owned = re.compile(rf"\.{re.escape(name)}\.({_WRITING}|{_ASIDE})-{_HOST}-(\d+)-[^/]*")
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for entry in entries:
        found = owned.fullmatch(entry)
        path = os.path.join(parent, entry)
        if found is None or _alive(int(found.group(2))):
            continue
        with contextlib.suppress(OSError):
            status = os.lstat(path)
            if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid():
                continue
            if found.group(1) == _WRITING:
                shutil.rmtree(path)
                continue
            previous = os.path.join(path, name)
            if not os.path.lexists(previous):  # killed before it was moved aside
                os.rmdir(path)
            elif os.path.lexists(folder):  # killed once the new conversion was in place
                _remove_conversion(previous)
            else:  # killed before the new conversion was in place: the folder is put back as it was
                os.rename(previous, folder)
                os.rmdir(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process; a number no process has is not ours either
        return True
    return True


class _Terminated(BaseException):
    """SIGTERM, raised while a conversion runs so that it removes what it wrote before the process ends."""


class _Stops:
    """SIGTERM and Ctrl-C during a conversion (see _stops_held_back): raised where they come, or, within held(),
    once the block ends."""

    def __init__(self) -> None:
        self.holding = False
        self.held_signal: int | None = None

    def on_signal(self, number: int, frame: object) -> None:
        if self.holding:
            self.held_signal = number
            return
        self.stop(number)

    @staticmethod
    def stop(number: int) -> None:
        raise KeyboardInterrupt if number == signal.SIGINT else _Terminated

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
            if self.held_signal is not None:  # raised in place of any error of the block: the stop was asked first
                self.stop(self.held_signal)


@contextlib.contextmanager
def _stops_held_back() -> Iterator[_Stops]:
    """SIGTERM (where its handler is the default, which would end the process at once) and Ctrl-C (where it raises
    KeyboardInterrupt) raised as exceptions while the block runs, so that the conversion removes its temporary
    folder; SIGTERM then ends the process as it would have (exit status 143 in a shell). Signals are handled in the
    main thread only: elsewhere they are left as they are."""
    stops = _Stops()
    if threading.current_thread() is not threading.main_thread():
        yield stops
        return
    previous = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    taken = [
        number
        for number, handler in previous.items()
        if handler is (signal.SIG_DFL if number == signal.SIGTERM else signal.default_int_handler)
    ]
    for number in taken:
        signal.signal(number, stops.on_signal)
    try:
        yield stops
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)
        raise
    finally:
        for number in taken:
            signal.signal(number, previous[number])


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
