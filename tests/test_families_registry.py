"""Model families register themselves (bart_score.models.base.FAMILIES, as the served kinds do): the loader finds
each config model_type's family there, so that a new family is one class, built from the engine's checked options."""

import re

import pytest

import bart_score
from bart_score.errors import UnsupportedModelError
from bart_score.models import loading  # noqa: F401  # the loader, and with it every family's module
from bart_score.models.base import FAMILIES
from bart_score.models.seq2seq import BartFamily, MarianFamily, MBartFamily, PegasusFamily, T5Family


def test_each_model_type_is_driven_by_the_family_class_that_names_it():
    named = {"bart": BartFamily, "mbart": MBartFamily, "pegasus": PegasusFamily, "marian": MarianFamily}
    named.update(dict.fromkeys(("t5", "mt5", "umt5"), T5Family))
    assert named == FAMILIES  # each model_type named once, by one class


@pytest.mark.slow
def test_a_family_class_defined_anywhere_drives_its_model_type_given_the_engines_options(
    tiny_checkpoint, scorer, monkeypatch
):
    """No list to add it to: defining the class is enough, and it is built from the options as resolved."""
    monkeypatch.setitem(FAMILIES, "bart", BartFamily)  # put back after the test, over the class defined here
    given = []

    class NotedBart(BartFamily):
        name = "noted-bart"
        model_types = ("bart",)

        def __init__(self, tokenizer, model, options):
            super().__init__(tokenizer, model, options)
            given.append(options)

    noted = bart_score.BARTScorer(checkpoint=tiny_checkpoint, device="cpu")
    assert isinstance(noted.family, NotedBart) and noted.token_policy == "noted-bart"
    assert [(options.checkpoint, options.device) for options in given] == [(noted.options.checkpoint, "cpu")]
    sources, targets = ["The cat sat on the mat.", "A dog ran."], ["A cat sat.", "The dog ran away."]
    assert noted.score(sources, targets) == pytest.approx(scorer.score(sources, targets), abs=1e-5)


def test_a_model_type_no_family_names_is_refused_naming_every_registered_one(tmp_path):
    from transformers import BertConfig

    BertConfig(num_hidden_layers=1, hidden_size=8, num_attention_heads=2, intermediate_size=8).save_pretrained(tmp_path)
    supported = "bart, marian, mbart, mt5, pegasus, t5, umt5"
    with pytest.raises(UnsupportedModelError, match=re.escape(f"sequence-to-sequence families ({supported}) and")):
        bart_score.BARTScorer(checkpoint=str(tmp_path), device="cpu")
