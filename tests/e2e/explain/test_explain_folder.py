"""The newer techniques run their samples so that no host path reaches the guest (trapline/
explain/guest.py spawn_sample and sample_sandbox: ./NAME from the sample's folder, or / as the
guest's root): an explanation is the same bytes whatever folder trapline lies in, stack
addresses and sampled instruction counts included."""
import os

import pytest

from trapline.explain.document import render_json
from trapline.explain.techniques import build
from trapline.samples import ENV, sample_path

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("technique", ["jump", "handler", "walkup", "uretprobe"])
def test_the_explanation_does_not_depend_on_the_folder(technique, tmp_path, monkeypatch):
    here = render_json(build(technique, "x86_64"))
    elsewhere = tmp_path / ("a-much-longer-folder-name-" * 3) / "trapline"
    elsewhere.parent.mkdir()
    os.symlink(sample_path("hello", "x86_64").parents[2], elsewhere)
    monkeypatch.setenv(ENV, str(elsewhere / "bin"))      # found first (trapline/samples.py)
    assert sample_path("fib", "x86_64").is_relative_to(elsewhere)
    assert render_json(build(technique, "x86_64")) == here
