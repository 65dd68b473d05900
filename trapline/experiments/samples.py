"""The shipped samples, for the experiments: found by trapline/samples.py (which the testing
battery uses too, without the experiments' package)."""
from ..samples import ARCHES, ENV, candidate_dirs, sample_path, samples_dir

__all__ = ["ARCHES", "ENV", "candidate_dirs", "sample_path", "samples_dir"]
