"""The models' words written out (`analysis/model_words.py`) are the registry's."""

from __future__ import annotations

from pathlib import Path

from mmalint.analysis import model_words
from mmalint.analysis.prefilter import TRIGGER_TEXT


def test_the_written_words_are_the_registrys() -> None:
    words, prefixes = model_words.from_registry()
    regenerate = "out of date: run `python -m mmalint.analysis.model_words`"
    assert words == model_words.TRIGGER_WORDS, regenerate
    assert prefixes == model_words.MODELLED_PREFIXES, regenerate


def test_the_file_is_as_the_generator_writes_it() -> None:
    path = Path(model_words.__file__)
    text = path.read_text(encoding="utf-8")
    assert model_words.rendered(text) == text


def test_the_prefilter_reads_them() -> None:
    assert TRIGGER_TEXT.pattern == "|".join(model_words.TRIGGER_WORDS)
    assert model_words.modelled("mgpu.wgmma") and model_words.modelled("jnp")
    assert not model_words.modelled("pkg.helpers")
