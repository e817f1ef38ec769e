"""Chat-format scoring of instruction-tuned causal LMs: the condition goes into a user turn of the model's own chat
template, and the target is the assistant's reply.

Token policy ("chat"):
- prefix: ``tokenizer.apply_chat_template([{"role": "user", "content": instruction.format(condition=c)}],
  add_generation_prompt=True)``, with ``{"role": "system", "content": system}`` first when a system text is given;
- scored tokens: the reply tokenized on its own (no special tokens), then the token that closes an assistant turn in
  this template. That token is read from the template itself: a conversation with a known assistant reply is rendered,
  and the first token after the reply (past any whitespace) must be a special or added token (ChatML's <|im_end|>,
  Llama 3's <|eot_id|>, ...); a template whose replies end otherwise is refused;
- within max_length: the prefix's own tokens (system turn, turn markup, the instruction's text on both sides of the
  condition, the generation prompt) are never cut; the reply keeps its first tokens (as many as fit beside them, and
  its closing token); then the condition loses its last tokens inside the user turn. Tokens are counted on the
  rendered conversation: a token that starts before the condition is the prefix's, one that starts inside it the
  condition's (as the plain causal policy counts its template's tail).

Instructions hold ``{condition}`` once (``{{`` and ``}}`` for literal braces, no other field), as ``template`` does.
Each direction has its own (DEFAULT_INSTRUCTIONS, or the caller's); ``BARTScorer.score``, which knows no direction,
uses faithfulness's unless given ``instruction=``. The signature names the policy ``chat:<digest>``, the digest
covering the chat template, the instructions and the system text (and TEMPLATE_DATE, for a template that names
strftime_now).

The template is code from the checkpoint: it renders as apply_chat_template renders it, but in a process of its own
(_chat_render.py) under a time and memory budget, and ``strftime_now`` gives it TEMPLATE_DATE rather than the clock.
Each family keeps its process (TemplateRenderer) for its life, one template's only, and starts another after a
failure."""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Sequence
from typing import IO, Any

from transformers import PreTrainedModel, PreTrainedTokenizerBase

from ..errors import InputError, ScoringError, UnsupportedModelError, first_line
from ..messages import Mention, Part
from ..options import (
    CONDITION_PLACEHOLDER,
    INSTRUCTION,
    SYSTEM,
    TEMPLATE,
    ChatSettings,
    EngineOptions,
    template_sides,
)
from .base import Target, Tokenized, dedupe
from .causal import CausalFamily

# The reply rendered to find what closes an assistant turn; plain words that no template changes.
_KNOWN_REPLY = "The known reply."
# The script that renders chat templates in a process of its own, under the limits below.
_RENDERER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_chat_render.py")
# How the renderer starts: isolated (-I: no environment variables, no user site, neither the current folder nor the
# script's on sys.path), then given the folders this process imports jinja2 and markupsafe from, so that it renders
# with the same jinja2 wherever that is installed.
_BOOTSTRAP = "import runpy, sys; sys.path[:0] = sys.argv[1:-1]; runpy.run_path(sys.argv[-1], run_name='__main__')"
# The time one conversation may take to render, in seconds.
RENDER_SECONDS = 5.0
# The renderer's memory limit, in bytes, beside 8 bytes for each byte of the request (the conversations' texts).
RENDER_MEMORY = 1 << 30
# What a template may build (a string or list, the rendered conversation): this many items beyond 4 times the
# conversation's own characters.
RENDER_ALLOWANCE = 1_000_000
# The date a template's strftime_now() renders: fixed, so that what a template renders, and so every score, does not
# depend on the day it runs; it is Llama 3.1's template's own date for when it has no clock. It is recorded in the
# policy digest of every template that names strftime_now.
TEMPLATE_DATE = datetime.datetime(2024, 7, 26)
# What to do with a model that has no chat template: score it as plain text, with a prompt template of one's own.
WITHOUT_CHAT: tuple[Part, ...] = ("score it without ", Mention("chat"), ", with a ", TEMPLATE, " of your own")


def no_chat_template(lacking: Part, looked: str = "", remedy: Sequence[Part] = WITHOUT_CHAT) -> UnsupportedModelError:
    """Chat scoring refused for want of a chat template: `lacking` (a checkpoint, a tokenizer) has none (`looked`:
    where none was found)."""
    where = f"{looked}: " if looked else ""
    return UnsupportedModelError(
        Mention("chat", True),
        " needs a chat template, and ",
        lacking,
        f" has none ({where}a base model rather than an instruction-tuned one?)",
        remedy=remedy,
    )


class ChatFamily(CausalFamily):
    """A causal LM scored in its chat format (see the module's text)."""

    name = "chat"
    settings: ChatSettings  # set by __init__, as the instructions are
    instructions: dict[str, str]

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        model: PreTrainedModel,
        options: EngineOptions,
        origin: str = "this model's chat template",
    ) -> None:
        """options: with chat settings (chat_settings); origin: how errors name the chat template (the checkpoint,
        and the file or metadata it comes from)."""
        # Not CausalFamily's __init__: that one checks a template and an EOS this policy does not use.
        super(CausalFamily, self).__init__(tokenizer, model, options)
        settings = options.chat_settings
        assert settings is not None  # the loader builds this family for chat settings only
        if not getattr(tokenizer, "chat_template", None):
            raise no_chat_template("this model's tokenizer")
        if not tokenizer.is_fast:
            raise UnsupportedModelError(
                "chat scoring counts tokens by their place in the rendered conversation, which needs a fast "
                "(tokenizers) tokenizer; this one is not"
            )
        self.settings = settings
        self.instructions = dict(settings.instructions)
        self.origin = origin
        try:
            self.template = tokenizer.get_chat_template()
        except ValueError as error:  # several named templates, none of them the default
            raise UnsupportedModelError(f"{origin} cannot be used: {first_line(error)}") from None
        self.clock = "strftime_now" in self.template
        self.renderer = TemplateRenderer()
        self.variables = dict(tokenizer.special_tokens_map)
        # instruction -> (its text before {condition}, after it, the prompt before, after)
        self._sides: dict[str, tuple[str, str, str, str]] = {}
        known = [*self._conversation("Hello."), {"role": "assistant", "content": _KNOWN_REPLY}]
        instructions = list(dict.fromkeys(self.instructions.values()))
        sides = [self._side_conversation(instruction) for instruction in instructions]
        rendered = self._render([(known, False), *((messages, True) for _, _, messages in sides)])
        self.closing_id = self._closing_token(rendered[0])
        for instruction, (head, tail, _), text in zip(instructions, sides, rendered[1:]):
            self._store_sides(instruction, head, tail, text)

    @property
    def policy(self) -> str:
        described: list[Any] = [self.tokenizer.chat_template, self.settings.system, sorted(self.instructions.items())]
        if self.clock:
            described.append({"strftime_now": TEMPLATE_DATE.isoformat()})
        text = json.dumps(described, ensure_ascii=False)
        return f"{self.name}:{hashlib.sha1(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"

    # -- the chat template --------------------------------------------------------------------------------------

    def _render(self, conversations: list[tuple[list[dict[str, str]], bool]]) -> list[str]:
        """The conversations (messages, add_generation_prompt) rendered by the chat template, in the family's
        renderer process (_chat_render.py) under a time and memory budget; a template that goes past one, or fails,
        is refused."""
        largest = max((sum(len(m["content"]) for m in messages) for messages, _ in conversations), default=0)
        request = {
            "template": self.template,
            "conversations": [{"messages": m, "add_generation_prompt": prompt} for m, prompt in conversations],
            "variables": self.variables,
            "date": TEMPLATE_DATE.isoformat(),
            "max_size": RENDER_ALLOWANCE + 4 * largest,
            "seconds": RENDER_SECONDS,
            "memory": RENDER_MEMORY,
        }
        payload = json.dumps(request, ensure_ascii=False).encode("utf-8")
        request["memory"] = RENDER_MEMORY + 8 * len(payload)
        payload = json.dumps(request, ensure_ascii=False).encode("utf-8")
        # The renderer times each conversation itself; this bounds the whole request, where it cannot.
        timeout = 2 * RENDER_SECONDS + 0.05 * len(conversations) + len(payload) / 1e6
        try:
            answer = self.renderer.request(payload, timeout)
        except RendererStopped as stopped:
            if stopped.timed_out:
                raise UnsupportedModelError(
                    f"{self.origin} was stopped after {timeout:.0f} s rendering {len(conversations)} conversations; a "
                    f"chat template that runs this long is refused"
                ) from None
            raise UnsupportedModelError(
                f"{self.origin} stopped the process that renders it (exit status {stopped.status}"
                f"{': ' + stopped.said[:200] if stopped.said else ''}); the template is refused"
            ) from None
        except OSError as error:
            raise ScoringError(f"cannot start the process that renders chat templates: {first_line(error)}") from None
        if "error" in answer:
            where = "cannot be compiled"
            if answer["conversation"] is not None:
                roles = " and ".join(dict.fromkeys(m["role"] for m in conversations[answer["conversation"]][0]))
                where = f"cannot render a {roles} conversation"
            raise UnsupportedModelError(f"{self.origin} {where}: {answer['error']}")
        rendered: list[str] = answer["rendered"]
        return rendered

    def _conversation(self, content: str) -> list[dict[str, str]]:
        system = [] if self.settings.system is None else [{"role": "system", "content": self.settings.system}]
        return [*system, {"role": "user", "content": content}]

    def _closing_token(self, rendered: str) -> int:
        """The token that closes an assistant turn: the first token after the known reply in `rendered` (a
        conversation that ends with it), past any whitespace."""
        at = rendered.rfind(_KNOWN_REPLY)
        if at < 0:
            raise UnsupportedModelError(
                "this model's chat template does not write an assistant's reply as given, so chat scoring cannot "
                "tell where a reply ends"
            )
        after = rendered[at + len(_KNOWN_REPLY) :]
        encoded = self.tokenizer(after, add_special_tokens=False, return_offsets_mapping=True)
        marked = {*self.tokenizer.all_special_ids, *getattr(self.tokenizer, "added_tokens_decoder", {})}
        for token, (start, end) in zip(encoded["input_ids"], encoded["offset_mapping"]):
            if token in marked:
                return token
            if after[start:end].strip():
                break
        raise UnsupportedModelError(
            f"this model's chat template ends an assistant's reply with {after[:40]!r}, which does not begin with a "
            f"special token, so chat scoring has no token that closes a reply to score"
        )

    def _side_conversation(self, instruction: str) -> tuple[str, str, list[dict[str, str]]]:
        """(the instruction's text before {condition}, after it, the conversation that asks with a placeholder for
        the condition): rendered, it gives the prompt's own text on each side of the condition (_store_sides)."""
        head, tail = template_sides(instruction, INSTRUCTION)
        return head, tail, self._conversation(head + CONDITION_PLACEHOLDER + tail)

    def _store_sides(self, instruction: str, head: str, tail: str, rendered: str) -> None:
        # chat_settings and instruction_list refuse instructions and system texts that hold the placeholder, so
        # a count other than 1 is the template's doing.
        if rendered.count(CONDITION_PLACEHOLDER) != 1:
            raise UnsupportedModelError(
                f"{self.origin} does not write the user's message once, as given, so chat scoring cannot find the "
                f"condition in the prompt"
            )
        before, after = rendered.split(CONDITION_PLACEHOLDER)
        self._sides[instruction] = (head, tail, before, after)

    def _prompts(self, prompts: Sequence[tuple[str, str]]) -> list[tuple[str, int, int]]:
        """(the prompt as text, where the condition starts and ends in it) for each (instruction, condition), all
        rendered at once with the sides of any instruction not seen before."""
        parts = {i: template_sides(i, INSTRUCTION) for i in dict.fromkeys(i for i, _ in prompts)}
        new = [instruction for instruction in parts if instruction not in self._sides]
        sides = [self._side_conversation(instruction) for instruction in new]
        asked = [(messages, True) for _, _, messages in sides]
        asked += [(self._conversation(parts[i][0] + c + parts[i][1]), True) for i, c in prompts]
        rendered = self._render(asked) if asked else []
        for instruction, (head, tail, _), text in zip(new, sides, rendered):
            self._store_sides(instruction, head, tail, text)
        return [self._locate(i, text) for (i, _), text in zip(prompts, rendered[len(new) :])]

    def _locate(self, instruction: str, text: str) -> tuple[str, int, int]:
        """(text, where the condition starts and ends in it) for a prompt rendered under `instruction`. The
        condition is what the prompt does not share with the prompt's own text on either side: a template that
        trims its message's ends (Llama 3's) trims the condition's, or the instruction's, whitespace."""
        _, _, before, after = self._sides[instruction]
        start = _shared_length(text, before)
        end = len(text) - _shared_length(text[::-1], after[::-1])
        return text, start, max(start, end)

    # -- the token policy ---------------------------------------------------------------------------------------

    def tokenize(
        self,
        conditions: Sequence[str],
        targets: Sequence[str],
        condition_languages: Sequence[str | None],
        max_length: int,
        instructions: Sequence[str] | None = None,
    ) -> Tokenized:
        """As CausalFamily.tokenize, under the chat policy; instructions: one per pair (default: score()'s)."""
        tokenized = Tokenized([], [], [])
        if instructions is None:
            instructions = [self.settings.score_instruction] * len(conditions)
        prompts, prompt_of_pair = dedupe(list(zip(instructions, conditions)))
        target_texts, target_of_pair = dedupe(targets)
        located = self._prompts(prompts)
        texts = [text for text, _, _ in located]
        encoded: Any = (  # a tokenizer's BatchEncoding, or its empty stand-in
            self.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
            if texts
            else {"input_ids": [], "offset_mapping": []}
        )
        prefixes: list[tuple[list[int], int, int]] = []  # (ids, tokens before the condition, after it) per prompt
        for (_, start, end), ids, offsets in zip(located, encoded["input_ids"], encoded["offset_mapping"]):
            before = sum(1 for first, _ in offsets if first < start)
            after = sum(1 for first, _ in offsets if first >= end)
            prefixes.append((ids, before, min(after, len(ids) - before)))
        replies = self._ids(target_texts)
        self.check_vocabulary([c for _, c in prompts], [ids for ids, _, _ in prefixes])
        self.check_vocabulary(target_texts, replies)

        pair_prefixes: list[tuple[int, ...]] = []
        pair_targets: list[Target] = []
        cut_prompts: set[int] = set()
        cut_targets: set[int] = set()
        for pair, (p, t) in enumerate(zip(prompt_of_pair, target_of_pair)):
            ids, before, after = prefixes[p]
            own = before + after  # the prompt's tokens that are not the condition's, never cut
            if own + 2 > max_length:
                raise InputError(
                    Mention("max_length", max_length),
                    f" leaves pair {pair} no room for a reply: the chat prompt but its condition takes {own} tokens",
                    remedy=["raise it or shorten the ", INSTRUCTION, " or ", SYSTEM, " text"],
                )
            reply = replies[t][: max_length - own - 1]
            if len(reply) < len(replies[t]):
                cut_targets.add(t)
            condition_room = max_length - own - len(reply) - 1
            condition_length = len(ids) - own
            if condition_length > condition_room:
                cut_prompts.add(p)
                ids = ids[: before + condition_room] + ids[len(ids) - after :]
            pair_prefixes.append(tuple(ids))
            pair_targets.append(Target(tuple(reply), (*reply, self.closing_id)))
        tokenized.truncated_conditions = len({prompts[p][1] for p in cut_prompts})
        tokenized.truncated_targets = len(cut_targets)
        tokenized.conditions, prefix_of_pair = dedupe(pair_prefixes)
        tokenized.targets, scored_of_pair = dedupe(pair_targets)
        tokenized.pairs = list(zip(prefix_of_pair, scored_of_pair))
        self.note_special_tokens(dict.fromkeys([c for _, c in prompts] + target_texts), tokenized)
        return tokenized


class RendererStopped(Exception):
    """The renderer process ended without answering: stopped past the request's time (timed_out), or ended by
    itself, with its exit status and the last line it wrote on stderr. ChatFamily._render says which, as the
    template's refusal."""

    def __init__(self, status: int | None, said: str = "", *, timed_out: bool = False) -> None:
        super().__init__(status, said, timed_out)
        self.status = status
        self.said = said
        self.timed_out = timed_out


class TemplateRenderer:
    """The process that renders one chat family's template (_chat_render.py): started on the first request and kept
    for the family's life, so that a call pays for a request, not for starting Python. A request is one JSON line
    out and one back, rendered in a jinja2 environment of its own under the request's limits. An answer that reports
    a failure, a request past its time (or interrupted) and a process that ends without answering all end it, and
    the next request starts another. The process ends with its owner: when the renderer is collected or the
    interpreter exits (weakref.finalize), or when it reads the end of its input, should this process be killed. A
    forked child of this process, and a copy (pickled, deep-copied), start a renderer of their own rather than write to
    this one's."""

    def __init__(self) -> None:
        self._reset()

    def __reduce__(self) -> tuple[type[TemplateRenderer], tuple[()]]:
        """Pickled (or deep-copied), a renderer is a new one: its process, pipes and lock are this process's."""
        return TemplateRenderer, ()

    def _reset(self) -> None:
        """The state of a renderer whose process has not started, owned by this process."""
        self._owner = os.getpid()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None  # the process's stderr, a file, read when it ends without answering
        self._answers: queue.Queue[bytes | None] = queue.Queue()
        self._end: weakref.finalize[Any, Any] | None = None

    @property
    def pid(self) -> int | None:
        """The process's id while one runs for this renderer, else None."""
        if self._owner != os.getpid() or self._process is None or self._process.poll() is not None:
            return None
        return self._process.pid

    def request(self, payload: bytes, timeout: float) -> dict[str, Any]:
        """The renderer's answer to `payload` (one request as JSON, without a line break), within `timeout` seconds.
        Raises RendererStopped past that time or for a process that ended without answering, and OSError for one that
        could not start."""
        if self._owner != os.getpid():  # a forked child: the process, its pipes and its lock are the parent's
            self._reset()
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self.stop()
                self._start()
            process = self._process
            assert process is not None and process.stdin is not None
            try:
                process.stdin.write(payload + b"\n")
                process.stdin.flush()
                line = self._answers.get(timeout=timeout)
            except queue.Empty:
                self.stop()
                raise RendererStopped(None, timed_out=True) from None
            except BrokenPipeError:
                line = None
            except BaseException:  # an interrupt: the answer would be read as the next request's
                self.stop()
                raise
            if line is None:
                raise self._stopped(process)
            answer: dict[str, Any] = json.loads(line)
            if "error" in answer:
                self.stop()
            return answer

    def stop(self) -> None:
        """Ends the process, if one runs; the next request starts another."""
        if self._end is not None:
            self._end()
        self._process, self._stderr, self._end = None, None, None

    def _start(self) -> None:
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept open for the process's life; _end_renderer closes it)
        command = [sys.executable, "-I", "-c", _BOOTSTRAP, *_jinja_folders(), _RENDERER]
        try:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        except BaseException:
            stderr.close()
            raise
        self._answers = queue.Queue()
        reader = threading.Thread(target=_read_answers, args=(process.stdout, self._answers), daemon=True)
        reader.start()
        self._process, self._stderr = process, stderr
        self._end = weakref.finalize(self, _end_renderer, process, stderr, self._owner)

    def _stopped(self, process: subprocess.Popen[bytes]) -> RendererStopped:
        """Why the process ended without answering (it is ended here, if it has not ended by itself)."""
        with contextlib.suppress(subprocess.TimeoutExpired):  # stop() kills it
            process.wait(timeout=RENDER_SECONDS)
        said = _last_line(self._stderr) if self._stderr is not None else ""
        self.stop()
        return RendererStopped(process.returncode, said)


def _read_answers(stdout: IO[bytes], answers: queue.Queue[bytes | None]) -> None:
    """The renderer's answers, one a line, put on `answers` as they come; None once its output ends (and the pipe,
    which only this thread reads, is closed)."""
    with stdout:
        for line in stdout:
            answers.put(line)
    answers.put(None)


def _end_renderer(process: subprocess.Popen[bytes], stderr: IO[bytes], owner: int) -> None:
    """Kills and reaps a renderer process, in the process that started it (its reader closes its output)."""
    if os.getpid() != owner:
        return
    process.kill()
    process.wait()
    if process.stdin is not None:
        with contextlib.suppress(BrokenPipeError):  # a write the process never read
            process.stdin.close()
    stderr.close()


def _last_line(stderr: IO[bytes]) -> str:
    """The last line written to a renderer's stderr file (its tail)."""
    stderr.seek(0, os.SEEK_END)
    stderr.seek(max(0, stderr.tell() - 4096))
    lines = stderr.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


def _jinja_folders() -> list[str]:
    """The folders this process imports jinja2 and markupsafe from (the renderer's only imports besides the
    standard library)."""
    import jinja2
    import markupsafe

    return list(dict.fromkeys(os.path.dirname(os.path.dirname(m.__file__ or "")) for m in (jinja2, markupsafe)))


def _shared_length(text: str, other: str) -> int:
    """How many first characters `text` and `other` have in common."""
    for index, (mine, theirs) in enumerate(zip(text, other)):
        if mine != theirs:
            return index
    return min(len(text), len(other))
