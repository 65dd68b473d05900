"""The newer techniques run their samples so that no host path reaches the guest (trapline/
explain/guest.py spawn_sample and sample_sandbox: ./NAME from the sample's folder, or / as the
guest's root): an explanation is the same bytes whatever folder trapline lies in, stack
addresses and sampled instruction counts included."""
import os

import pytest

from trapline.explain import guest
from trapline.explain.document import render_json
from trapline.explain.techniques import build

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("technique", ["jump", "handler", "walkup", "uretprobe"])
def test_the_explanation_does_not_depend_on_the_folder(technique, tmp_path, monkeypatch):
    here = render_json(build(technique, "x86_64"))
    elsewhere = tmp_path / ("a-much-longer-folder-name-" * 3) / "trapline"
    elsewhere.parent.mkdir()
    os.symlink(guest.ROOT, elsewhere)
    monkeypatch.setattr(guest, "ROOT", elsewhere)
    assert render_json(build(technique, "x86_64")) == here
