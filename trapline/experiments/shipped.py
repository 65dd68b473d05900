"""The experiment specs that ship inside the package (`trapline experiment list`), as package data
of trapline.experiments.specs, so that an installed trapline finds them wherever it lives."""
from importlib import resources

SPEC_PACKAGE = "trapline.experiments.specs"


def shipped() -> dict[str, str]:
    """Shipped spec name -> its TOML text."""
    folder = resources.files(SPEC_PACKAGE)
    return {p.name[:-5]: p.read_text() for p in sorted(folder.iterdir(), key=lambda p: p.name)
            if p.name.endswith(".toml")}
