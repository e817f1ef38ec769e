"""The Compare tab's examples: a source, references and candidates that show what each direction rewards."""

from __future__ import annotations

import bart_score

EXAMPLES = {
    "summarization": {
        "source": (
            "The city council of Riverton voted 7 to 2 on Tuesday to build a new public library on the site of the "
            "old bus depot. Construction is expected to start next spring and to cost about 12 million dollars, most "
            "of it paid by a state grant. Mayor Ellen Price said the library would open in 2027 with a children's "
            "wing and a community kitchen. The two council members who voted against the plan argued that the money "
            "should go to road repairs instead."
        ),
        "references": (
            "Riverton's council approved a 12 million dollar library on the old bus depot site, to open in 2027."
        ),
        "candidates": [
            "Riverton's council voted 7 to 2 to build a new library on the old bus depot site, paid mostly by a state "
            "grant.",
            "Riverton's council unanimously rejected a new library, saying the money should go to a football stadium.",
        ],
        "directions": list(bart_score.DIRECTIONS),
        "prompt": "none",
        "prompt_side": "encoder",
    },
    "translation": {
        # BART reads English only, so translations are judged against references, not against the German source.
        "source": "",
        "references": (
            "Tomorrow the weather will be sunny, with temperatures of up to 25 degrees.\n"
            "It will be sunny tomorrow and as warm as 25 degrees."
        ),
        "candidates": [
            "Tomorrow it will be sunny, with temperatures up to 25 degrees.",
            "The weather becomes tomorrow sunny, with temperatures until 25 degrees.",
            "Yesterday it rained, and the temperature fell to 5 degrees.",
        ],
        "directions": ["precision", "recall", "f_score"],
        "prompt": "mt",
        "prompt_side": "encoder",
    },
}
