"""Chat templates rendered in a process of their own, under a time and memory budget.

A chat template is code from the checkpoint (Jinja, in jinja2's immutable sandbox, as transformers runs it). The
sandbox keeps it from reaching Python, but not from running without end (``range(100000)`` nested twice) or building
strings and lists of many gigabytes. bart_score.models.chat runs this file as a script, ``python -I _chat_render.py``,
and keeps the process for its chat template's life: it reads JSON requests on stdin, one a line (the template, the
conversations, the template's variables, the date and the limits: seconds per conversation, bytes of memory, items a
string or list may hold), and writes one JSON answer a line on stdout for each, the rendered conversations or why one
could not be rendered, until stdin closes. Each request is rendered in a jinja2 environment of its own, under a
memory limit (RLIMIT_AS, lowered for the render and raised again to read the next request) and a time limit per
conversation (an interval timer); the caller kills the process past the whole request's time, and starts another
after any answer that reports a failure. Where the platform has neither limit (Windows), the caller's time limit
stands alone.

Within the sandbox, ``range()``, the strings and lists that ``*`` and ``+`` build, the numbers ``**`` builds and the
rendered text (MAX_RENDERED_EXTRA beside its messages' own characters) are bounded, so that the common ways to build
something huge are refused with a reason rather than by the memory limit. The template sees what transformers'
``apply_chat_template`` gives it: the special tokens, ``raise_exception``, a ``tojson`` that leaves HTML alone,
``dict``, a ``namespace`` without underscore names, the ``{% generation %}`` tag, loop controls, and
``strftime_now``, which formats the request's fixed date instead of the clock, so that what a template renders does
not depend on the day.

This file imports only the standard library and jinja2, so that the process starts in a tenth of a second."""

from __future__ import annotations

import datetime
import json
import sys
from collections.abc import Iterator
from types import CodeType
from typing import Any, NoReturn

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.parser
import jinja2.sandbox
import jinja2.utils

# The most items a template's range() gives (jinja2's sandbox allows 100,000, which nested twice never ends).
MAX_RANGE = 10_000
# The largest number a template's ** builds, in bits (a 1,000-digit number has 3,322).
MAX_POWER_BITS = 4_096
# What a rendered conversation may hold beside twice its messages' characters (a template may write a message twice):
# the turns' markup and a default system text, which real templates keep to hundreds of characters (to a one-message
# conversation, SmolLM2's ChatML and its default system turn add 148; Llama 3.1's, with its dated system turn, 233).
# The parent process tokenizes every rendered conversation: this bounds what a template adds to each text it scores.
MAX_RENDERED_EXTRA = 65_536


class RenderLimitError(Exception):
    """The template went past one of the request's limits (the message says which)."""


class _TimeUp(BaseException):
    """Raised by the interval timer: a BaseException, so that no template-level handler swallows it."""


def bounded_range(*args: int) -> range:
    """range() for templates: at most MAX_RANGE items."""
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise RenderLimitError(f"it asks range() for {len(numbers):,} numbers, over the limit of {MAX_RANGE:,}")
    return numbers


class _GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``, which transformers' templates use to mark an assistant's reply:
    its body, rendered as it is."""

    tags = {"generation"}  # noqa: RUF012 (jinja2 declares tags as a plain class attribute of this type)

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.Node:
        line = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(line)

    def _body(self, caller: Any) -> str:
        return str(caller())


class _TemplateNamespace(jinja2.utils.Namespace):
    """namespace(): jinja2's, refusing underscore names, which lead to Python's internals."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # jinja2's own signature, so that `self` may be a name
        self, given = args[0], dict(*args[1:], **kwargs)
        for name in given:
            _refuse_underscore(name)
        jinja2.utils.Namespace.__init__(self, given)

    def __setitem__(self, name: str, value: Any) -> None:
        _refuse_underscore(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)


def _refuse_underscore(name: Any) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise jinja2.exceptions.SecurityError(f"a namespace cannot hold the underscore name {name!r}")


class _TemplateDict:
    """dict() and dict.fromkeys() for templates, without the dict type itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


def _raise_exception(message: str) -> NoReturn:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(
    value: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None, sort_keys: bool = False
) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


class BoundedSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, set up as transformers sets up its own for chat templates, with bounds on what
    range(), ``*``, ``+`` and ``**`` build: strings and lists of at most `max_size` items."""

    # Intercepted operators are also never folded while the template compiles, so a constant 9**9**9 is not computed.
    intercepted_binops = frozenset({"*", "+", "**"})

    def __init__(self, max_size: int, date: datetime.datetime) -> None:
        super().__init__(trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, jinja2.ext.loopcontrols])
        self.max_size = max_size
        self.filters["tojson"] = _tojson
        self.globals.update(
            range=bounded_range,
            raise_exception=_raise_exception,
            strftime_now=date.strftime,
            dict=_TemplateDict(),
            namespace=_TemplateNamespace,
        )

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and _is_number(left) and _is_number(right) and isinstance(right, int) and right > 0:
            bits = abs(int(left)).bit_length() * right if isinstance(left, int) else 0
            if bits > MAX_POWER_BITS:
                raise RenderLimitError(f"it raises {left!r} to the power {right:,}, a number of over {bits:,} bits")
        elif operator == "*":
            for sequence, count in ((left, right), (right, left)):
                if isinstance(sequence, (str, list, tuple)) and _is_number(count) and isinstance(count, int):
                    self._check_size(len(sequence) * count, f"repeats {_kind(sequence)} {count:,} times", sequence)
        elif operator == "+" and isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
            self._check_size(len(left) + len(right), f"joins {_kind(left)} and {_kind(right)}", left)
        return super().call_binop(context, operator, left, right)

    def _check_size(self, size: int, what: str, like: Any) -> None:
        if size > self.max_size:
            unit = "characters" if isinstance(like, str) else "items"
            raise RenderLimitError(f"it {what}, making {size:,} {unit}, over the limit of {self.max_size:,}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f"a string of {len(value):,} characters"
    return f"a {type(value).__name__} of {len(value):,} items"


def _chunks_within(chunks: Iterator[str], messages: list[dict[str, Any]]) -> str:
    """The rendered text, refused as soon as it passes twice its messages' characters and MAX_RENDERED_EXTRA more
    (less than what a template may build: see chat.RENDER_ALLOWANCE)."""
    own = sum(len(message["content"]) for message in messages)
    limit = 2 * own + MAX_RENDERED_EXTRA
    pieces, size = [], 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise RenderLimitError(
                f"it writes over {limit:,} characters, the limit for messages of {own:,} characters (twice theirs "
                f"and {MAX_RENDERED_EXTRA:,} more)"
            )
        pieces.append(chunk)
    return "".join(pieces)


# The last template compiled, as (its source, its code). Compiling is most of a request's time (1.2 of 1.5 ms for a
# ChatML template), and a process renders one template's requests. A code object holds nothing of a render: each
# request still renders in an environment of its own, and every BoundedSandbox compiles a source to the same code.
_last_compiled: list[tuple[str, CodeType]] = []


def _compiled(environment: BoundedSandbox, source: str) -> CodeType:
    """The code of the template `source`, compiled by `environment` or kept from the last request that gave it."""
    if not _last_compiled or _last_compiled[0][0] != source:
        _last_compiled[:] = [(source, environment.compile(source))]
    return _last_compiled[0][1]


def render(request: dict[str, Any], on_each: Any = None) -> dict[str, Any]:
    """The answer to one request: {"rendered": [text, ...]}, or {"error": why, "conversation": index or None (the
    template itself)}. on_each(seconds): called before each conversation with the time it may take (the interval
    timer), and with 0 after it."""
    date = datetime.datetime.fromisoformat(request["date"])
    environment = BoundedSandbox(request["max_size"], date)
    try:
        code = _compiled(environment, request["template"])
        template = environment.template_class.from_code(environment, code, environment.make_globals(None), None)
    except (jinja2.exceptions.TemplateError, RenderLimitError, MemoryError, RecursionError) as error:
        return {"error": _reason(error, request["memory"]), "conversation": None}
    rendered = []
    for index, conversation in enumerate(request["conversations"]):
        try:
            if on_each is not None:
                on_each(request["seconds"])
            chunks = template.generate(
                messages=conversation["messages"],
                tools=None,
                documents=None,
                add_generation_prompt=conversation["add_generation_prompt"],
                **request["variables"],
            )
            rendered.append(_chunks_within(chunks, conversation["messages"]))
        except _TimeUp:
            return {"error": f"it ran past its time limit of {request['seconds']:g} s", "conversation": index}
        except Exception as error:  # the template's own errors, and the limits' (RecursionError, MemoryError)
            return {"error": _reason(error, request["memory"]), "conversation": index}
        finally:
            if on_each is not None:
                on_each(0)
    return {"rendered": rendered}


def _reason(error: BaseException, memory: int) -> str:
    """Why a template failed, in one line (memory: the process's limit in bytes)."""
    if isinstance(error, MemoryError):
        return f"it needed more memory than its limit of {memory / 2**20:,.0f} MiB"
    if isinstance(error, RecursionError):
        return "it recursed too deeply"
    text = (str(error).splitlines() or [""])[0].strip()
    return text or f"it raised {type(error).__name__}"


class _Limits:
    """The process's limits where the platform has them: memory (RLIMIT_AS) for the time of one request's render,
    and the interval timer that ends a conversation's render past its seconds."""

    def __init__(self) -> None:
        try:
            import resource
            import signal
        except ImportError:  # Windows: the caller's time limit stands alone
            self._resource: Any = None
            return
        self._resource = resource
        # The limit the process was started under (the caller's own, often none): the render's is never above it,
        # and reading the next request is under it again.
        self._ceiling = resource.getrlimit(resource.RLIMIT_AS)[1]
        self._signal = signal

        def time_up(signum: int, frame: Any) -> NoReturn:
            raise _TimeUp

        signal.signal(signal.SIGALRM, time_up)

    def render(self, request: dict[str, Any]) -> dict[str, Any]:
        """render(request) within the request's memory limit and each conversation's time."""
        if self._resource is None:
            return render(request)
        resource = self._resource
        memory = request["memory"]
        if self._ceiling != resource.RLIM_INFINITY:
            memory = min(memory, self._ceiling)
        resource.setrlimit(resource.RLIMIT_AS, (memory, self._ceiling))
        try:
            return render(request, lambda seconds: self._signal.setitimer(self._signal.ITIMER_REAL, seconds))
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (self._ceiling, self._ceiling))


def main() -> None:
    """The script: requests on stdin and answers on stdout, one a line, until stdin closes."""
    limits = _Limits()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        try:
            answer = limits.render(request)
        except MemoryError:
            answer = {"error": _reason(MemoryError(), request["memory"]), "conversation": None}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
