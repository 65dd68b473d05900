"""speedscope's published JSON schema for its file format, for the exporter tests (issue 18).

The npm package `speedscope` ships it as dist/release/file-format-schema.json. The test setup
fetches the pinned release from the npm registry (its metadata names the tarball and its
sha512 integrity, checked here) and caches the schema under tests/e2e/.cache/speedscope/.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import urllib.request
from pathlib import Path

VERSION = "1.25.0"
REGISTRY = "https://registry.npmjs.org/speedscope/"
MEMBER = "package/dist/release/file-format-schema.json"
CACHE = Path(__file__).resolve().parent / ".cache" / "speedscope" / VERSION / "file-format-schema.json"


class SchemaUnavailable(Exception):
    """The registry could not be reached and nothing is cached."""


def speedscope_schema() -> dict:
    if not CACHE.exists():
        _fetch()
    return json.loads(CACHE.read_text())


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.read()
    except OSError as exc:
        raise SchemaUnavailable(f"cannot fetch {url}: {exc}") from None


def _fetch() -> None:
    meta = json.loads(_get(REGISTRY + VERSION))
    tarball = _get(meta["dist"]["tarball"])
    algorithm, _, digest = meta["dist"]["integrity"].partition("-")
    if algorithm != "sha512" or base64.b64decode(digest) != hashlib.sha512(tarball).digest():
        raise SchemaUnavailable(f"speedscope {VERSION}: tarball does not match the registry's integrity")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        schema = archive.extractfile(MEMBER).read()
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_bytes(schema)
