"""The parts `data/add` takes, decoded into artifacts and routed to the envs they are for.

The reference protocol's `data/add` carries only `parts` (no env): a part names its env in
`metadata.env`, or is an artifact document (which names its env), or goes to the world's only env; the
caller may still name one env for every part (`params.env`). Files come inline (`bytes`, base64) or by
`uri`: `data:` URIs, `http(s)://` (fetched by the server, awaited before the world is touched:
`fetch_uris`) and, on a token-less loopback server only, `file://` paths on this machine.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any, Literal

from agentenv_runtime import Artifact, ArtifactError, World
from pydantic import BaseModel, ConfigDict, Field

MAX_FETCH = 256 * 1024 * 1024
"""The largest artifact file fetched by URI."""


class PartError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextPart(_Strict):
    kind: Literal["text"]
    text: str = Field(description="JSON text: an artifact document or {table: rows}.")
    metadata: dict[str, Any] | None = None


class FileContent(_Strict):
    bytes: str = Field(description="Base64 of an artifact file (.json or .json.gz).")
    name: str | None = None
    mimeType: str | None = None


class FileReference(_Strict):
    uri: str = Field(description="data:…;base64,…, http(s)://…, or file:// (token-less servers only).")
    name: str | None = None
    mimeType: str | None = None


class FilePart(_Strict):
    kind: Literal["file"]
    file: FileContent | FileReference
    metadata: dict[str, Any] | None = None


class DataPart(_Strict):
    kind: Literal["data"]
    data: dict[str, Any] = Field(description="An artifact document or {table: [row, …]}.")
    metadata: dict[str, Any] | None = None


Part = Annotated[TextPart | FilePart | DataPart, Field(discriminator="kind")]


def _file_bytes(where: str, file: FileContent | FileReference, *, local_files: bool) -> bytes:
    if isinstance(file, FileContent):
        try:
            return base64.b64decode(file.bytes, validate=True)
        except (binascii.Error, ValueError):
            raise PartError(f"{where}.bytes", "not valid base64") from None
    uri = file.uri
    if uri.startswith("data:"):
        header, _, payload = uri.partition(",")
        try:
            if header.endswith(";base64"):
                return base64.b64decode(payload, validate=True)
            from urllib.parse import unquote_to_bytes

            return unquote_to_bytes(payload)
        except (binascii.Error, ValueError):
            raise PartError(f"{where}.uri", "the data: URI's payload is not valid base64") from None
    if uri.startswith("file://"):
        if not local_files:
            raise PartError(f"{where}.uri", "file:// URIs are read only by token-less (loopback) servers; send bytes")
        from pathlib import Path
        from urllib.parse import unquote, urlparse

        path = Path(unquote(urlparse(uri).path))
        try:
            return path.read_bytes()
        except OSError as exc:
            raise PartError(f"{where}.uri", f"cannot read {path} ({exc.strerror})") from None
    raise PartError(f"{where}.uri", f"unsupported URI scheme in {uri[:60]!r}: use data:, http(s):// or file://")


async def fetch_uris(parts: list[Any]) -> list[Any]:
    """The parts with every `http(s)://` file fetched into inline bytes, before the world is touched: the
    fetch awaits on the event loop (a slow or self-referring URL blocks nothing), the load stays synchronous."""
    import httpx

    fetched = list(parts)
    async with httpx.AsyncClient(timeout=60.0, follow_redirects=True) as http:
        for index, part in enumerate(parts):
            file = getattr(part, "file", None)
            if not isinstance(file, FileReference) or not file.uri.startswith(("http://", "https://")):
                continue
            raw = await _fetch(http, f"parts.{index}.file.uri", file.uri)
            encoded = base64.b64encode(raw).decode()
            inline = FileContent(bytes=encoded, name=file.name or file.uri, mimeType=file.mimeType)
            fetched[index] = part.model_copy(update={"file": inline})
    return fetched


async def _fetch(http: Any, field: str, uri: str) -> bytes:
    import httpx

    try:
        async with http.stream("GET", uri) as response:
            if response.status_code != 200:
                raise PartError(field, f"GET {uri} answered HTTP {response.status_code}")
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_FETCH:
                    raise PartError(field, f"{uri} is larger than {MAX_FETCH} bytes")
                chunks.append(chunk)
            return b"".join(chunks)
    except httpx.HTTPError as exc:
        raise PartError(field, f"cannot fetch {uri} ({type(exc).__name__}: {exc})") from None


def _document(where: str, part: TextPart | FilePart | DataPart, *, local_files: bool) -> tuple[Any, str]:
    """(the JSON document or Artifact a part carries, the field path it came from)."""
    if isinstance(part, DataPart):
        return part.data, f"{where}.data"
    if isinstance(part, TextPart):
        try:
            return json.loads(part.text), f"{where}.text"
        except json.JSONDecodeError as exc:
            raise PartError(f"{where}.text", f"not valid JSON ({exc.msg} at position {exc.pos})") from None
    raw = _file_bytes(f"{where}.file", part.file, local_files=local_files)
    source = part.file.name or (part.file.uri if isinstance(part.file, FileReference) else where)
    try:
        return Artifact.from_bytes(raw, source=source), f"{where}.file"
    except ArtifactError as exc:
        raise PartError(f"{where}.file", str(exc)) from None


def _artifacts(world: World, default_env: str | None, index: int, part: Any, local_files: bool) -> list[Artifact]:
    """The artifacts one part carries: one, or one per env for an `{env: {table: rows}}` document."""
    where = f"parts.{index}"
    document, at = _document(where, part, local_files=local_files)
    named = (part.metadata or {}).get("env") or default_env
    if named is not None and named not in world.envs:
        field = f"{where}.metadata.env" if (part.metadata or {}).get("env") else "env"
        raise PartError(field, f"no env {named!r} (envs: {', '.join(world.envs)})")
    if isinstance(document, Artifact):
        artifact = document
    elif not isinstance(document, dict):
        raise PartError(at, "must be an artifact document or an object of table name → list of rows")
    elif {"name", "env", "version", "data"} <= set(document):
        try:
            artifact = Artifact.from_bytes(json.dumps(document).encode(), source=at)
        except ArtifactError as exc:
            raise PartError(at, str(exc)) from None
    elif named is None and document and set(document) <= set(world.envs):
        return [_rows_artifact(world, env, f"{at}.{env}", tables) for env, tables in document.items()]
    else:
        env = named or (next(iter(world.envs)) if len(world.envs) == 1 else None)
        if env is None:
            raise PartError(
                where, f"say which env it is for: params.env, {where}.metadata.env, or an artifact document "
                f"(envs: {', '.join(world.envs)})"
            )
        return [_rows_artifact(world, env, at, document)]
    if named is not None and artifact.env != named:
        raise PartError(f"{at}.env", f"the artifact is for env {artifact.env!r}, not {named!r}")
    if artifact.env not in world.envs:
        raise PartError(f"{at}.env", f"no env {artifact.env!r} in this world (envs: {', '.join(world.envs)})")
    _check_tables(world, artifact, f"{at}.data")
    return [artifact]


def _rows_artifact(world: World, env: str, at: str, tables: Any) -> Artifact:
    if not isinstance(tables, dict):
        raise PartError(at, "must be an object of table name → list of rows")
    for table, rows in tables.items():
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise PartError(f"{at}.{table}", "must be a list of row objects")
    artifact = Artifact.build(name="inline", env=env, version="0", data=tables)
    _check_tables(world, artifact, at)
    return artifact


def _check_tables(world: World, artifact: Artifact, at: str) -> None:
    tables = world.envs[artifact.env].table_names()
    for table in artifact.data:
        if table not in tables:
            raise PartError(f"{at}.{table}", f"{artifact.env} has no table {table!r} (tables: {', '.join(tables)})")


def load_parts(world: World, env: str | None, parts: list[Any], *, local_files: bool) -> list[str]:
    """Decode every part, then load them env by env, all or none; returns the loaded artifact refs."""
    by_env: dict[str, list[tuple[int, Artifact]]] = {}
    for index, part in enumerate(parts):
        for artifact in _artifacts(world, env, index, part, local_files):
            by_env.setdefault(artifact.env, []).append((index, artifact))
    try:
        world.load_many({name: [artifact for _, artifact in items] for name, items in by_env.items()})
    except ArtifactError as exc:
        name = getattr(exc, "env", None)
        position = getattr(exc, "index", None)
        index = by_env[name][position][0] if name in by_env and isinstance(position, int) else 0
        raise PartError(f"parts.{index}", str(exc)) from None
    return [artifact.ref for items in by_env.values() for _, artifact in items]
