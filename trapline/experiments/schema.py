"""The spec's JSON Schema (draft 2020-12), made from the same key tables spec.py checks with, so
the two cannot disagree on a key or a type: `trapline experiment schema` prints it, for editors
that validate TOML against a schema (taplo, Even Better TOML) and for other tools. What depends
on a point (a strategy filled in from a template, a sample's existence) is checked per point
by the command itself, not by the schema.
"""
from __future__ import annotations

from .spec import METRICS, PLOT, POINT_KINDS, PROFILE, PROGRAM, RANDOM, RUN, TOP, WALKUP

_JSON_TYPES = {str: "string", int: "integer", bool: "boolean", float: "number", dict: "object",
               list: "array"}
_SCALAR = {"type": ["string", "integer", "number", "boolean"]}


def _object(keys: dict, **overrides) -> dict:
    properties = {key: overrides[key] if key in overrides else {"type": _JSON_TYPES[kind]}
                  for key, (kind, _) in keys.items()}
    required = [key for key, (_, needed) in keys.items() if needed]
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def schema() -> dict:
    strings = {"type": "array", "items": {"type": "string"}}
    axis = {"oneOf": [{"type": "array", "items": _SCALAR, "minItems": 1}, _object(RANDOM)]}
    zip_group = {"type": "object", "minProperties": 1,
                 "additionalProperties": {"type": "array", "items": _SCALAR, "minItems": 1}}
    parameter = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
    # a walk-up or profile point places its own hooks: no probes beside it (spec.py)
    no_probes = {"properties": {"run": {"properties": {"probes": {"maxItems": 0},
                                                       "cold_probes": {"const": 0}}}}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://trapline.invalid/experiment-spec.schema.json",
        "title": "trapline experiment spec",
        **_object(TOP,
                  name={"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"},
                  program={**_object(PROGRAM,
                                     argv={"type": "array", "items": {"type": ["string", "integer"]}},
                                     env={"type": "object", "additionalProperties": {"type": "string"}}),
                           # exactly one of sample and path
                           "oneOf": [{"required": ["sample"], "not": {"required": ["path"]}},
                                     {"required": ["path"], "not": {"required": ["sample"]}}]},
                  run=_object(RUN, probes=strings, quantum={"type": "integer", "minimum": 1},
                              **{k: {"type": "integer", "minimum": 0}
                                 for k in ("cold_probes", "max_insns", "detach_after", "enable_at",
                                           "disable_at")}),
                  params={"type": "object", "propertyNames": parameter,
                          "additionalProperties": _SCALAR},
                  sweep={"type": "object", "propertyNames": parameter,
                         "properties": {"zip": {"type": "array", "items": zip_group}},
                         "additionalProperties": axis},
                  walkup=_object(WALKUP, threshold={"type": "number"}),
                  profile=_object(PROFILE),
                  metrics=_object(METRICS, collect=strings),
                  plots={"type": "array", "items": _object(
                      PLOT, name={"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"})}),
        "dependentSchemas": {kind: no_probes for kind in POINT_KINDS},
        "not": {"required": list(POINT_KINDS)},
    }
