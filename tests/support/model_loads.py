"""A test that must finish before any model loads: every check of its input or checkpoint comes first."""

import transformers

# The classes every model of the package is loaded through: the engine's families and the retrievers' encoders.
AUTO_CLASSES = (transformers.AutoModelForSeq2SeqLM, transformers.AutoModelForCausalLM, transformers.AutoModel)


class ModelLoaded(BaseException):
    """A model was loaded where the test refuses one. A BaseException, as KeyboardInterrupt is: the library turns a
    failed load (`except Exception`) into an error of its own, which a test could take for the refusal it expects."""


def refuse_model_loads(monkeypatch):
    """Fails the test, with ModelLoaded, wherever a model would be loaded."""

    def refuse(*args, **kwargs):
        raise ModelLoaded("a model was loaded before the input or checkpoint was refused")

    for auto in AUTO_CLASSES:
        monkeypatch.setattr(auto, "from_pretrained", refuse)
