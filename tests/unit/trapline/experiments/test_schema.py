"""trapline/experiments/schema.py: the JSON Schema `trapline experiment schema` prints is a valid
draft 2020-12 schema, accepts every shipped spec, and agrees with the command's own checks
(spec.py) on every key and type: a hypothesis property puts values of every TOML type under
known and unknown keys of each table and asks both."""
import json
import tomllib

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from trapline.cli import main
from trapline.experiments.shipped import shipped
from trapline.experiments.schema import schema
from trapline.experiments.spec import (METRICS, PROFILE, PROGRAM, RUN, TOP, WALKUP, SpecError,
                                       check_structure)

VALIDATOR = jsonschema.Draft202012Validator(schema())
BASE = {"name": "t", "program": {"sample": "hello"}, "run": {"probes": ["syscall:write"]},
        "metrics": {"baseline": True}}
TABLES = {"": TOP, "program": PROGRAM, "run": RUN, "metrics": METRICS, "walkup": WALKUP,
          "profile": PROFILE}
VALUES = (st.text(max_size=5) | st.integers(-3, 3) | st.booleans() | st.floats(-2, 2)
          | st.lists(st.text(max_size=3) | st.integers(0, 3), max_size=2)
          | st.dictionaries(st.sampled_from(["a", "b"]), st.text(max_size=3), max_size=2))


def test_the_schema_is_a_valid_schema_and_the_command_prints_it():
    jsonschema.Draft202012Validator.check_schema(schema())
    result = CliRunner().invoke(main, ["experiment", "schema"])
    assert result.exit_code == 0 and json.loads(result.output) == schema()


@pytest.mark.parametrize("name", sorted(shipped()))
def test_every_shipped_spec_is_valid(name):
    assert list(VALIDATOR.iter_errors(tomllib.loads(shipped()[name]))) == []


def _accepted_by_the_command(document: dict) -> bool:
    try:
        check_structure(document, "spec.toml")
    except SpecError:
        return False
    return True


@settings(max_examples=150)
@given(table=st.sampled_from(sorted(TABLES)), known=st.booleans(), data=st.data())
def test_the_schema_and_the_command_agree_on_keys_and_types(table, known, data):
    keys = sorted(TABLES[table]) if known else ["nonesuch", "Name", "probe"]
    key = data.draw(st.sampled_from(keys))
    value = data.draw(VALUES)
    document = json.loads(json.dumps(BASE))
    (document if not table else document.setdefault(table, {}))[key] = value
    by_schema = VALIDATOR.is_valid(document)
    assert by_schema == _accepted_by_the_command(document), (document, by_schema)
    # both answers in every example: the document without the change, and with the same value
    # under a key no table has
    assert VALIDATOR.is_valid(BASE) and _accepted_by_the_command(BASE)
    unknown = json.loads(json.dumps(BASE))
    (unknown if not table else unknown.setdefault(table, {}))["nonesuch"] = value
    assert not VALIDATOR.is_valid(unknown) and not _accepted_by_the_command(unknown)
