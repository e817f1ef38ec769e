"""What the Space's tests send it, shared by its test modules: the settings fields in the order its handlers and API
take them (`settings_inputs`, `SETTINGS`, `FAITHFULNESS`, from `UNTOUCHED`), the candidate boxes (`candidate_boxes`),
a Compare request's arguments (`compare_arguments`, `REFERENCE_LINES`), an upload's file (`write`, `batch_file`) read
as the Batch tab reads it (`parse`); and an HTTP request as the Space's guards see it (`request_scope`, `forwarded`,
`PROXIES`, with a `Clock` the test moves on).

The fields, their order and their names are space.wiring's: a request is built as the wiring's dataclass and read
in its order, and a test changes a field by the name the API gives it, so that a field added to the form needs no
edit here but its value in UNTOUCHED."""

import copy

import bart_score
import space.batch
import space.clients
import space.form
from space.wiring import CompareInputs, SettingsInputs, Wired
from support.app_server import MAX_CHARS, MAX_ROWS
from support.space_inputs import REFERENCES

# The settings as a visitor who leaves them alone sends them: the page's starting values (app.settings_panel), on the
# tests' default model (tests/test_app_wiring.py checks both against the API's defaults).
UNTOUCHED = SettingsInputs(
    model="tiny",
    directions=list(bart_score.DIRECTIONS),
    aggregation=bart_score.ScoringOptions().aggregation,
    prompt_choice="none",
    prompt_phrase="",
    prompt_side=bart_score.ScoringOptions().prompt_side,
)


def by_name(inputs: Wired, changed: dict) -> list:
    """`inputs`' values in the API's order, those that `changed` names (by the API's names of its parameters: a
    setting's field, "source", "candidate_3") replaced."""
    names = [parameter.name for parameter in inputs.parameters()]
    unknown = set(changed) - set(names)
    assert not unknown, f"{sorted(unknown)} name no input; the inputs are {names}"
    return [changed.get(name, value) for name, value in zip(names, inputs, strict=True)]


def settings_inputs(**changed):
    """The settings' values in the order the handlers and the API take them, UNTOUCHED's unless `changed` names
    them."""
    return by_name(copy.deepcopy(UNTOUCHED), changed)  # a list a test changes is its own


def candidate_boxes(*texts):
    return list(texts) + [""] * (space.form.MAX_CANDIDATES - len(texts))


SETTINGS = settings_inputs(directions=["faithfulness", "precision"])
FAITHFULNESS = settings_inputs(directions=["faithfulness"])


def compare_arguments(
    source="A council voted for a new library.", references="A library.", candidates=("a", "b"), **changed
):
    """A Compare request's arguments in the API's order: SETTINGS' settings, then the texts; `changed` replaces any
    of them by its parameter's name (by_name)."""
    request = CompareInputs(SettingsInputs.read(SETTINGS), source, references, tuple(candidate_boxes(*candidates)))
    return by_name(request, changed)


REFERENCE_LINES = "\n".join(REFERENCES)


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return str(path)


def batch_file(tmp_path, name, content):
    return write(tmp_path, name, content)


def parse(path, max_rows=MAX_ROWS, max_chars=MAX_CHARS):
    return space.batch.parse_upload(path, max_rows=max_rows, max_chars=max_chars)


def request_scope(path="/gradio_api/upload", method="POST", peer="127.0.0.1", headers=()):
    return {"type": "http", "method": method, "path": path, "client": (peer, 5000), "headers": list(headers)}


PROXIES = space.clients.trusted_proxies("10.0.0.0/8, 192.168.1.1 2001:db8::/32")


def forwarded(*values):
    return [(b"x-forwarded-for", value.encode()) for value in values]


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now
