"""What the Space guards against, apart from its user interface (nothing here imports Gradio):

- models that cannot be loaded, found when the app starts without reading any weights (a tokenizer without its
  vocabulary among them), and load failures told to browser users in words that name the menu entry and never show
  a server path (the operator's log has the details); a served model's server, asked on first use and again after
  each failure, and named to browser users by the menu entry, never by its URL;
- errors told to browser users: a mistake of the request in the page's words (naming), anything else as a general
  sentence, never with a server path (the log has the details);
- model special tokens written in a user's text, which the Space refuses rather than score as BART's own markers;
- spreadsheet formulas in the downloadable CSV, neutralised as OWASP advises, numbers kept as numbers;
- memory that a scoring job freed, returned to the system when the job ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
from dataclasses import replace

import huggingface_hub
from safetensors import SafetensorError

import bart_score
from bart_score.corpora._outputs import spreadsheet_cell
from bart_score.errors import (
    BARTScoreError,
    BaselineDirectionsError,
    BaselineNotFoundError,
    BaselineSettingsError,
    MissingExtraError,
)
from bart_score.messages import Naming
from bart_score.models.checkpoints import locate_checkpoint
from bart_score.models.loading import check_checkpoint, load_tokenizer
from bart_score.models.served._transport import Connection, ServerAddress
from bart_score.scoring.signature import Signature

from .form import FieldError
from .naming import COMPARE_PAGE

logger = logging.getLogger("bartscore.app")

_WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_HUB_PROBE_SECONDS = 10
_SERVER_PROBE_SECONDS = 5


# ---------------------------------------------------------------------------------------------------------------------
# Models


def model_problems(models: dict) -> dict:
    """{menu name: why it cannot be loaded} for the menu's models (name -> checkpoint), each reason logged for the
    operator. Local folders are looked at, Hub ids looked up in the Hugging Face cache and, when the server is
    online, on the Hub (one probe; after one that cannot reach the Hub, no more)."""
    problems, hub = {}, {"reachable": not huggingface_hub.constants.HF_HUB_OFFLINE}
    for name, checkpoint in models.items():
        problem = checkpoint_problem(checkpoint, hub)
        if problem:
            logger.warning("BARTScore Space: model %r (%s) is marked unavailable: %s", name, checkpoint, problem)
            problems[name] = problem
    return problems


def checkpoint_problem(checkpoint: str, hub: dict) -> str | None:
    """Why `checkpoint` cannot be loaded here (for the operator), or None; `hub` remembers whether the Hub answered."""
    try:
        location, _ = bart_score.resolve_checkpoint(checkpoint)
        found = locate_checkpoint(location)  # a served model's address checked
        if found.server is not None:  # asked on first use, and again after a failure: it may start after the app
            _log_a_silent_server(found.server)
            return None
        if found.local:
            check_checkpoint(found)  # no weights read; a GGUF file's header, configs, custom code
    except (OSError, ValueError, ImportError) as error:  # cnn-para without its weights; a path with nothing there
        return str(error)
    if found.gguf_file:
        return None
    if found.local:
        if not any(os.path.isfile(os.path.join(found.source, name)) for name in _WEIGHT_FILES):
            return f"its folder {found.source} has no weights file ({', '.join(_WEIGHT_FILES)})"
        return _tokenizer_problem(location, found.source, {})
    if isinstance(huggingface_hub.try_to_load_from_cache(location, "config.json"), str):
        try:
            check_checkpoint(found, {"local_files_only": True})
        except (OSError, ValueError) as error:
            return str(error)
        return _tokenizer_problem(location, found.source, {"local_files_only": True})
    if not hub["reachable"]:
        offline = "HF_HUB_OFFLINE is set" if huggingface_hub.constants.HF_HUB_OFFLINE else "the Hub cannot be reached"
        return f"{location} is not in the Hugging Face cache ({huggingface_hub.constants.HF_HUB_CACHE}) and {offline}"
    try:
        huggingface_hub.model_info(location, timeout=_HUB_PROBE_SECONDS)
    except huggingface_hub.errors.RepositoryNotFoundError:
        return f"{location} is not a model on the Hugging Face Hub"
    except Exception as error:  # no network: every later Hub model would wait for the same timeout
        hub["reachable"] = False
        return f"{location} is not in the Hugging Face cache and the Hub cannot be reached ({type(error).__name__})"
    return None  # downloaded on first use


def _log_a_silent_server(address: ServerAddress) -> None:
    """Tells the operator, at start, of a served model's server that does not answer yet."""
    problem = Connection(address, key=None, timeout=_SERVER_PROBE_SECONDS, retries=0).reached()
    if problem is not None:
        logger.warning(
            "BARTScore Space: the server %s does not answer yet (%s); it is asked again on each request for it",
            address.url,
            problem,
        )


def _tokenizer_problem(location: str, source: str, where: dict) -> str | None:
    """Why the tokenizer at `source` cannot be used (it fails to load, or has next to no vocabulary), or None."""
    try:
        load_tokenizer(repr(location), source, where)
    except OSError as error:
        return str(error)
    return None


def not_available(model):
    """The browser's message for a model marked unavailable when the app started."""
    return f"The model {model!r} is not available on this server; choose another model"


def load_failure(model: str, checkpoint: str, error: BaseException) -> str:
    """The browser's message for a model that failed to load: what is wrong, with the menu name, no path."""
    logger.error("BARTScore Space: model %r (%s) failed to load: %r", model, checkpoint, error)
    if isinstance(error, bart_score.CheckpointNotFoundError):
        return not_available(model)
    if isinstance(error, bart_score.CustomCodeError):
        reason = "it needs its own Python code (custom code in its files), which this server never runs"
    elif isinstance(error, bart_score.MissingExtraError):
        reason = "this server lacks an optional package that loading it needs (the server's log says which)"
    elif isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError":
        reason = "the server does not have enough free memory to load it now; try again later or choose another model"
    elif isinstance(error, PermissionError):
        reason = "its files cannot be read on this server"
    elif isinstance(error, (SafetensorError, OSError, EOFError, RuntimeError)):
        reason = "its files on this server are damaged or incomplete"
    elif isinstance(error, ValueError):
        reason = "its files on this server are not a checkpoint that BARTScore can use"
    else:
        reason = "it failed to load (the server's log says why)"
    return f"The model {model!r} cannot be loaded: {reason}"


def remembered_failure(error):
    """Whether a load failure will happen again on every try (a memory shortage may pass)."""
    return not (isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError")


def served_failure(model: str, checkpoint: str, error: BaseException) -> str:
    """The browser's message for a served model whose server could not be reached, or did not answer as it should,
    when loading or scoring: the menu name, never the server's URL (an internal address) nor its words (the
    operator's log has both; the API key never appears, servers.Connection blanks it out)."""
    logger.error("BARTScore Space: the server of model %r (%s) failed: %s", model, checkpoint, error)
    return (
        f"The model {model!r} runs on an inference server, which cannot score this request now (the server's log says "
        f"why); try again later or choose another model"
    )


def public_message(error: BaseException, naming: Naming = COMPARE_PAGE) -> str:
    """What a browser user is told about an error: a mistake of the request that bart_score names (its errors, but
    those about the server's own files and packages) in the page's words (`naming`: a field by its label, a file by
    its name without the server's folders); running out of memory as such; anything else as a general sentence, with
    the details in the operator's log. No message reads another's text, and none shows a server path."""
    if isinstance(error, BARTScoreError) and not isinstance(error, (OSError, MissingExtraError)):
        return error.said(naming)
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError":
        logger.error("BARTScore Space: a request ran out of memory: %r", error)
        return "The server ran out of memory for this request; send fewer or shorter texts"
    if isinstance(error, OSError):
        logger.error("BARTScore Space: a request failed: %r", error)
        reason = f" ({error.strerror})" if error.strerror else ""
        return f"The server could not read or write a file for this request{reason}; the server's log says more"
    logger.error("BARTScore Space: a request failed", exc_info=error)
    return f"The request failed on the server ({type(error).__name__}); the server's log says why"


def baseline_failure(model, error):
    """The browser's message for a saved baseline that is missing or cannot be used (bart_score.baselines'
    BaselineError): what is wrong, with the menu name, without the file's path or the command that makes it (the
    operator's log has both)."""
    logger.error("BARTScore Space: the saved baseline of model %r cannot be used: %s", model, error)
    if isinstance(error, BaselineNotFoundError):
        problem = "there is no saved baseline for it with these settings (prompt and length limit)"
    elif isinstance(error, BaselineSettingsError):
        problem = "its saved baseline was made with other settings than these (prompt, model or length limit)"
    elif isinstance(error, BaselineDirectionsError):
        problem = f"its saved baseline has no reference points for {', '.join(error.lacking)}"
    else:
        problem = "its saved baseline file is damaged or is not a baseline file"
    return (
        f"Rescaling with the saved baseline of model {model!r} is not possible: {problem}. Choose "
        f'"reference points from this file", or ask the operator to save a baseline for these settings'
    )


def public_signature(signature: str, model: str, checkpoint: str) -> str:
    """The signature as browser users see it: a checkpoint that is a folder or GGUF file on this server, or an
    inference server's URL, is named by its menu name (a Hub id stays, so that signatures match those of the command
    line)."""
    location, _ = bart_score.resolve_checkpoint(checkpoint)
    found = locate_checkpoint(location)
    if not found.local and found.server is None:
        return signature
    return replace(Signature.parse(signature), checkpoint=model).format()


# ---------------------------------------------------------------------------------------------------------------------
# Texts


def refuse_special_tokens(texts, special_tokens) -> None:
    """Refuses the first of `texts` ((where, text, field) triples) that holds one of the model's special tokens (<s>,
    </s>, <pad>, ...): the model would read it as its own marker, and a candidate of "<pad>" repeated would score near
    0 and win. The engine keeps the original's numbers and tokenizes them as specials; the Space does not score them
    at all."""
    for where, text, field in texts:
        for token in special_tokens:
            if token in text:
                raise FieldError(
                    f"{where} contains {token}, one of the model's special tokens; written in a text it would be read "
                    f"as the model's own marker, so it is not scored here. Remove it or write it differently",
                    field,
                )


# ---------------------------------------------------------------------------------------------------------------------
# Downloads


def spreadsheet_safe(frame):
    """A copy of a DataFrame whose column names and text cells are spreadsheet_cell'ed (bart_score.corpora._outputs);
    numeric columns untouched."""
    import pandas as pd

    safe = frame.rename(columns=spreadsheet_cell)
    for column in safe.columns:
        if not pd.api.types.is_numeric_dtype(safe[column]):
            safe[column] = safe[column].map(spreadsheet_cell)
    return safe


# ---------------------------------------------------------------------------------------------------------------------
# Memory


def _malloc_trim():
    """glibc's malloc_trim, or None where the C library has none."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None


_MALLOC_TRIM = _malloc_trim()


@contextlib.contextmanager
def memory_returned_after():
    """Returns the memory a scoring job freed to the system when the job ends. glibc keeps freed blocks in one arena
    per thread, and Gradio runs each job on whichever worker thread is free, so without this the resident size grows
    request after request (bench/bench_app_memory.py, bench/README.md)."""
    try:
        yield
    finally:
        if _MALLOC_TRIM is not None:
            _MALLOC_TRIM(0)
