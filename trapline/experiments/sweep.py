"""A sweep's points: the cartesian product of its lists, in the order the spec gives them (the
first list varies slowest, as nested loops written in that order), where a `zip` group is one
axis whose values are its lists taken side by side (guest and sample name move together).

The number of points is the product of the axes' lengths (a zip group counts its lists' common
length once); tests/unit/trapline/experiments/test_sweep.py holds it as a property.
"""
from __future__ import annotations

import itertools
import random


def drawn(sweep: dict, seed: int) -> dict:
    """The sweep with each { random = N, low = A, high = B } replaced by its N distinct integers,
    drawn from a generator seeded by the spec's seed and the parameter's name (so the same spec
    draws the same points anywhere), sorted."""
    result = {}
    for key, value in sweep.items():
        if isinstance(value, dict):
            draw = random.Random(f"trapline-sweep:{seed}:{key}")
            value = sorted(draw.sample(range(value["low"], value["high"] + 1), value["random"]))
        result[key] = value
    return result


def axes(sweep: dict) -> list[list[dict]]:
    """Each axis as the list of its settings, one dict of name -> value per step."""
    result = []
    for key, value in sweep.items():
        if key == "zip":
            for group in value:
                names = list(group)
                result.append([dict(zip(names, row)) for row in zip(*(group[n] for n in names))])
        else:
            result.append([{key: v} for v in value])
    return result


def points(sweep: dict) -> list[dict]:
    """Every point: one dict of parameter -> value, in sweep order."""
    merged = []
    for combination in itertools.product(*axes(sweep)):
        point = {}
        for setting in combination:
            point.update(setting)
        merged.append(point)
    return merged


def names(sweep: dict) -> list[str]:
    """The swept parameters, in the spec's order."""
    return [name for axis in axes(sweep) for name in axis[0]]
