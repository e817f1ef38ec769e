"""The tests' text: seeded English-like sentences and paragraphs over a small vocabulary, and the German- and
French-like lines that, with them, train the tiny models' tokenizers."""

import random


def split_words(text):
    return tuple(text.split())


WORDS = split_words(
    "the a an this that these cat dog mat house city river government report study people year day week model "
    "summary article news market company team game player result data system text translation source reference is "
    "was are were has had will would can could said says found made took went gave told asked shows new old good "
    "bad big small first last many few more most other same high low early late local national in on at by for with "
    "from about into over after before under between during without and or but because while although if when where "
    "which who very quite rather almost nearly just only also still even again"
)


def english_like(rng, words):
    """A sentence of `words` words drawn from a small English vocabulary, capitalised and punctuated."""
    tokens = [rng.choice(WORDS) for _ in range(words)]
    text = " ".join(tokens)
    return text[0].upper() + text[1:] + rng.choice([".", ".", ".", "!", "?"])


def english_like_text(rng, words):
    """A paragraph of about `words` words, in sentences of 8 to 20 words."""
    sentences, total = [], 0
    while total < words:
        n = min(rng.randint(8, 20), words - total)
        sentences.append(english_like(rng, max(n, 1)))
        total += n
    return " ".join(sentences)


_GERMAN_WORDS = split_words(
    "der die das ein eine und oder aber ist war sind nicht mit für über unter nach vor größer schön "
    "schöne Mädchen Straße Häuser Bücher Grüße können müssen dürfen wir ihr sie gestern heute morgen "
    "Stadt Fluss Regierung Bericht Woche Jahr Menschen Ergebnis Übersetzung Quelle Spiel gut schlecht neu "
    "alt groß klein"
)
_FRENCH_WORDS = split_words(
    "le la les un une et ou mais est était sont avec pour sur sous après avant très été déjà où français "
    "garçon fenêtre élève château forêt ça à côté nous vous ils hier aujourd'hui demain ville rivière "
    "gouvernement rapport semaine année gens résultat traduction source jeu bon mauvais nouveau vieux "
    "grand petit"
)
# Every punctuation mark, digit and accented letter here reaches each sentencepiece vocabulary, so that ordinary
# English, German and French text tokenizes without <unk>.
_COVERAGE_LINES = (
    "In 2021, the team scored 3-1: a good result (mostly); the 4th and 5th games were 0-0, 6-2, 7-8 and 9-9.",
    "She said \"yes\", he said 'no' - and that was it... or was it?",
    "Accents: à â ä ç é è ê ë î ï ô ö ù û ü ÿ ß æ œ À Ä É È Ö Ü Ç « » – ’ € % & @ # * + = / < > [ ] { } _ ~ ^ | $",
    "This is interesting. This is fun. There is a cat on the mat. I feel good today.",
)


def _foreign_sentence(rng, words):
    text = " ".join(rng.choice(words) for _ in range(rng.randint(6, 14)))
    return text[0].upper() + text[1:] + rng.choice([".", ".", "!", "?", ","])


def training_corpus(languages=("en", "de", "fr")):
    """Deterministic lines of English-like text, and German- and French-like text where asked."""
    rng = random.Random(1234)
    lines = [english_like_text(rng, 40) for _ in range(300)] if "en" in languages else []
    for language, words in (("de", _GERMAN_WORDS), ("fr", _FRENCH_WORDS)):
        if language in languages:
            lines += [_foreign_sentence(rng, words) for _ in range(150)]
    return lines + list(_COVERAGE_LINES)
