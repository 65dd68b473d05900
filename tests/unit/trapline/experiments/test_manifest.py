"""manifest.py's environment: the versions that decide the results and the plots' bytes."""
from importlib import metadata

from trapline.experiments.manifest import environment


def test_the_environment_names_every_version_that_decides_an_output():
    env = environment()
    for name in ("unicorn", "capstone", "keystone-engine", "pyelftools", "matplotlib"):
        assert env[name] == metadata.version(name), name
    assert env["python"] and env["modeled_cpu"]
