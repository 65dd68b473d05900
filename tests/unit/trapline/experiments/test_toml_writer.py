"""trapline/experiments/toml_writer.py: what it writes, tomllib reads back as the same data,
and the same data is always the same text."""
import tomllib

from hypothesis import given, strategies as st

from trapline.experiments.toml_writer import Inline, dumps

KEYS = st.text(min_size=1, max_size=8)
SCALARS = (st.text(max_size=12) | st.integers(-2**63, 2**63 - 1) | st.booleans()
           | st.floats(-1e6, 1e6).map(lambda f: float(f"{f:.6f}")))
FLAT = st.dictionaries(KEYS, SCALARS | st.lists(SCALARS, max_size=3), max_size=4)
DOCUMENTS = st.dictionaries(KEYS, SCALARS | FLAT | st.lists(FLAT, min_size=1, max_size=3)
                            | st.dictionaries(KEYS, FLAT, max_size=2), max_size=6)


@given(DOCUMENTS)
def test_tomllib_reads_back_what_was_written(document):
    text = dumps(document)
    assert tomllib.loads(text) == document
    assert dumps(tomllib.loads(text)) == text


def test_control_characters_del_and_astral_text_are_valid_toml():
    document = {"s": "tab\there\x00\x7f\U0001F600\"\\", "k e y": 1}
    assert tomllib.loads(dumps(document)) == document


def test_an_inline_list_of_tables_keeps_its_place():
    text = dumps({"sweep": {"a": [1], "zip": Inline([{"g": [1, 2]}]), "b": [3]}})
    assert list(tomllib.loads(text)["sweep"]) == ["a", "zip", "b"]
