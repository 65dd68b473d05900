"""The experiment specs shipped with trapline (package data: `trapline experiment list`)."""
