"""What the Space's tests send it, shared by its test modules: the settings fields in the order its handlers and API
take them (`settings_inputs`, `SETTINGS`, `FAITHFULNESS`), the candidate boxes (`candidate_boxes`), a Compare
request's arguments (`compare_arguments`, `REFERENCE_LINES`), an upload's file (`write`, `batch_file`) read as the
Batch tab reads it (`parse`); and an HTTP request as the Space's guards see it (`request_scope`, `forwarded`,
`PROXIES`, with a `Clock` the test moves on)."""

import bart_score
import space.batch
import space.clients
import space.form
from support.app_server import MAX_CHARS, MAX_ROWS
from support.space_inputs import REFERENCES


def settings_inputs(
    model="tiny", directions=bart_score.DIRECTIONS, aggregation="mean", prompt="none", phrase="", side="encoder"
):
    return [model, list(directions), aggregation, prompt, phrase, side]


def candidate_boxes(*texts):
    return list(texts) + [""] * (space.form.MAX_CANDIDATES - len(texts))


SETTINGS = ["tiny", ["faithfulness", "precision"], "mean", "none", "", "encoder"]
FAITHFULNESS = ["tiny", ["faithfulness"], "mean", "none", "", "encoder"]


def compare_arguments(source="A council voted for a new library.", references="A library.", candidates=("a", "b")):
    return [*SETTINGS, source, references, *candidates, *[""] * (space.form.MAX_CANDIDATES - len(candidates))]


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
