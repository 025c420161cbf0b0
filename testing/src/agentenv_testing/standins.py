"""Stand-ins of HTTP APIs that have no emulator, for tests: Google Secret Manager's and Artifact Registry's
REST APIs (v1) and the Hugging Face Hub's file API.

`SecretManagerStandIn` serves what `SecretManagerServiceClient(transport="rest")` calls to create a
secret, add a version and access one — `POST /v1/projects/P/secrets?secretId=S`,
`POST /v1/projects/P/secrets/S:addVersion`, `GET /v1/projects/P/secrets/S/versions/V:access` — with
Google's JSON error shape. Secrets live in memory. `HubStandIn` is described below.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from agentenv_testing.services import ThreadedHttpServer

_SECRETS = re.compile(r"/v1/projects/(?P<project>[^/]+)/secrets$")
_ADD = re.compile(r"/v1/projects/(?P<project>[^/]+)/secrets/(?P<secret>[^/:]+):addVersion$")
_ACCESS = re.compile(r"/v1/projects/(?P<project>[^/]+)/secrets/(?P<secret>[^/:]+)/versions/(?P<version>[^/:]+):access$")


class _JsonHandler(BaseHTTPRequestHandler):
    """Request handling the Google stand-ins share: JSON bodies in and out, Google's error shape."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: test output is not the place for an access log."""

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, reason: str, message: str) -> None:
        self._send(status, {"error": {"code": status, "message": message, "status": reason}})

    def _json(self) -> dict[str, Any]:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        found: dict[str, Any] = json.loads(raw or b"{}")
        return found


class SecretManagerStandIn(ThreadedHttpServer):
    """An in-memory Secret Manager REST server on 127.0.0.1; `url` is its endpoint."""

    def __init__(self) -> None:
        self.versions: dict[str, list[bytes]] = {}  # projects/P/secrets/S → payloads, version n at n-1
        self.lock = threading.Lock()
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(_JsonHandler):
            def do_POST(self) -> None:
                url = urlsplit(self.path)
                body = self._json()
                if match := _SECRETS.match(url.path):
                    secret_id = parse_qs(url.query).get("secretId", [""])[0]
                    name = f"projects/{match['project']}/secrets/{secret_id}"
                    with standin.lock:
                        if name in standin.versions:
                            return self._error(409, "ALREADY_EXISTS", f"Secret [{name}] already exists.")
                        standin.versions[name] = []
                    return self._send(200, {"name": name, "replication": body.get("replication", {})})
                if match := _ADD.match(url.path):
                    name = f"projects/{match['project']}/secrets/{match['secret']}"
                    payload = base64.b64decode(body.get("payload", {}).get("data", ""))
                    with standin.lock:
                        if name not in standin.versions:
                            return self._error(404, "NOT_FOUND", f"Secret [{name}] not found.")
                        standin.versions[name].append(payload)
                        number = len(standin.versions[name])
                    return self._send(200, {"name": f"{name}/versions/{number}", "state": "ENABLED"})
                return self._error(404, "NOT_FOUND", f"no such method: POST {url.path}")

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                match = _ACCESS.match(url.path)
                if not match:
                    return self._error(404, "NOT_FOUND", f"no such method: GET {url.path}")
                name = f"projects/{match['project']}/secrets/{match['secret']}"
                with standin.lock:
                    payloads = standin.versions.get(name, [])
                    version = match["version"]
                    index = len(payloads) if version == "latest" else int(version) if version.isdigit() else 0
                    if not 1 <= index <= len(payloads):
                        return self._error(404, "NOT_FOUND", f"Secret Version [{name}/versions/{version}] not found.")
                    data = payloads[index - 1]
                self._send(
                    200, {"name": f"{name}/versions/{index}", "payload": {"data": base64.b64encode(data).decode()}}
                )

        return Handler


class HubStandIn(ThreadedHttpServer):
    """A stand-in of the Hugging Face Hub's HTTP API, enough for `huggingface_hub.snapshot_download`.

    It serves repo info (`/api/{type}s/{repo}[/revision/{rev}]`), the file tree (`/api/{type}s/{repo}/tree/{rev}`)
    and file downloads (`/{repo}/resolve/{rev}/{path}`, `/datasets/{repo}/resolve/...`) with the Hub's
    `X-Repo-Commit` and `ETag` headers and its JSON error shape. `publish` adds a commit; branches move,
    commits are immutable. Everything is in memory; `requests` counts what was asked, for cache checks.
    """

    def __init__(self) -> None:
        self.branches: dict[tuple[str, str], dict[str, str]] = {}  # (type, repo) → branch → commit
        self.commits: dict[str, dict[str, bytes]] = {}  # commit → path → bytes
        self.history: dict[tuple[str, str], set[str]] = {}  # (type, repo) → every commit it ever had
        self.requests: list[str] = []
        self.lock = threading.Lock()
        super().__init__()

    def publish(self, repo: str, files: dict[str, bytes], *, repo_type: str = "model", branch: str = "main") -> str:
        """Commit `files` (the whole tree) to `branch`; the 40-hex commit id."""
        digest = hashlib.sha1(usedforsecurity=False)
        digest.update(f"{repo_type}/{repo}\0{len(self.commits)}\0".encode())
        for path in sorted(files):
            digest.update(path.encode() + b"\0" + hashlib.sha1(files[path], usedforsecurity=False).digest())
        commit = digest.hexdigest()
        with self.lock:
            self.commits[commit] = dict(files)
            self.branches.setdefault((repo_type, repo), {})[branch] = commit
            self.history.setdefault((repo_type, repo), set()).add(commit)
        return commit

    def _resolve(self, repo_type: str, repo: str, revision: str) -> str | None:
        with self.lock:
            branches = self.branches.get((repo_type, repo))
            if branches is None:
                return None
            if revision in branches:
                return branches[revision]
            return revision if revision in self.history[(repo_type, repo)] else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

            def _send(self, status: int, body: bytes, headers: dict[str, str], *, head: bool = False) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _error(self, status: int, message: str, code: str, *, head: bool = False) -> None:
                body = json.dumps({"error": message}).encode()
                self._send(status, body, {"Content-Type": "application/json", "X-Error-Code": code}, head=head)

            def _serve(self, head: bool) -> None:
                path = unquote(urlsplit(self.path).path)
                hub.requests.append(f"{self.command} {path}")
                api = r"/api/(models|datasets|spaces)/([^/]+/[^/]+)(?:/(revision|tree)/([^/]+))?"
                if match := re.fullmatch(api, path):
                    kind, repo, what, revision = match.groups()
                    what, revision = what or "revision", revision or "main"
                    commit = hub._resolve(kind[:-1], repo, revision)
                    if commit is None:
                        return self._missing(kind[:-1], repo, head)
                    files = hub.commits[commit]
                    if what == "revision":
                        info = {"id": repo, "sha": commit, "siblings": [{"rfilename": p} for p in sorted(files)]}
                        return self._send(
                            200, json.dumps(info).encode(), {"Content-Type": "application/json"}, head=head
                        )
                    tree = [
                        {"type": "file", "path": p, "size": len(data), "oid": _git_blob_id(data)}
                        for p, data in sorted(files.items())
                    ]
                    return self._send(200, json.dumps(tree).encode(), {"Content-Type": "application/json"}, head=head)
                if match := re.fullmatch(r"/(?:(datasets|spaces)/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path):
                    kind, repo, revision, file_path = match.groups()
                    repo_type = (kind or "models")[:-1]
                    commit = hub._resolve(repo_type, repo, revision)
                    if commit is None:
                        return self._missing(repo_type, repo, head)
                    data = hub.commits[commit].get(file_path)
                    if data is None:
                        return self._error(404, f"{file_path} does not exist at {revision}", "EntryNotFound", head=head)
                    headers = {"X-Repo-Commit": commit, "ETag": f'"{_git_blob_id(data)}"'}
                    return self._send(200, data, {**headers, "Content-Type": "application/octet-stream"}, head=head)
                return self._error(404, f"no such route: {path}", "RepoNotFound", head=head)

            def _missing(self, repo_type: str, repo: str, head: bool) -> None:
                with hub.lock:
                    known = (repo_type, repo) in hub.branches
                if known:
                    self._error(404, f"Invalid rev id for {repo}", "RevisionNotFound", head=head)
                else:
                    self._error(404, f"Repository {repo} not found", "RepoNotFound", head=head)

            def do_GET(self) -> None:
                self._serve(head=False)

            def do_HEAD(self) -> None:
                self._serve(head=True)

        return Handler


def _git_blob_id(data: bytes) -> str:
    """The git blob id the Hub reports as a file's `oid` and ETag (for files not stored in LFS)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class ArtifactRegistryStandIn(ThreadedHttpServer):
    """A stand-in of Artifact Registry's REST API (v1) for docker tags, for tests: Artifact Registry has no emulator.

    It serves what `ArtifactRegistryClient(transport="rest")` calls to tag images and list them — list packages
    of a repository, list/get/create/update tags of a package — keeping tags in memory. Image data is not its
    business: tests pair it with a real registry (Debian's docker-registry), as Artifact Registry itself pairs
    its API with its registry endpoint. Paths are URL-decoded once, as Google's front end does, so a package id
    holding '%2F' (an image name with '/') arrives as the client meant it.
    """

    def __init__(self) -> None:
        self.tags: dict[str, dict[str, str]] = {}  # package resource name → tag id → version resource name
        self.lock = threading.Lock()
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        registry = self
        repo = r"projects/[^/]+/locations/[^/]+/repositories/[^/]+"

        class Handler(_JsonHandler):
            def do_GET(self) -> None:
                path = unquote(urlsplit(self.path).path).removeprefix("/v1/")
                if re.fullmatch(f"{repo}/packages", path):
                    parent = path.removesuffix("/packages")
                    with registry.lock:
                        names = sorted(p for p in registry.tags if p.startswith(parent + "/packages/"))
                    return self._send(200, {"packages": [{"name": n} for n in names]})
                if match := re.fullmatch(f"({repo}/packages/[^/]+)/tags(?:/([^/]+))?", path):
                    package, tag = match.groups()
                    with registry.lock:
                        tags = dict(registry.tags.get(package, {}))
                    if tag is None:
                        listed = [{"name": f"{package}/tags/{t}", "version": v} for t, v in sorted(tags.items())]
                        return self._send(200, {"tags": listed})
                    if tag not in tags:
                        return self._error(404, "NOT_FOUND", f"Requested entity was not found: {path}")
                    return self._send(200, {"name": path, "version": tags[tag]})
                return self._error(404, "NOT_FOUND", f"no such method: GET {path}")

            def do_POST(self) -> None:
                url = urlsplit(self.path)
                path, body = unquote(url.path).removeprefix("/v1/"), self._json()
                match = re.fullmatch(f"({repo}/packages/[^/]+)/tags", path)
                tag = parse_qs(url.query).get("tagId", [""])[0]
                if not match or not tag:
                    return self._error(400, "INVALID_ARGUMENT", f"POST {path}: expected …/packages/P/tags?tagId=T")
                with registry.lock:
                    tags = registry.tags.setdefault(match[1], {})
                    if tag in tags:
                        return self._error(409, "ALREADY_EXISTS", f"tag {tag} already exists")
                    tags[tag] = str(body.get("version", ""))
                return self._send(200, {"name": f"{match[1]}/tags/{tag}", "version": tags[tag]})

            def do_PATCH(self) -> None:
                path, body = unquote(urlsplit(self.path).path).removeprefix("/v1/"), self._json()
                match = re.fullmatch(f"({repo}/packages/[^/]+)/tags/([^/]+)", path)
                if not match:
                    return self._error(404, "NOT_FOUND", f"no such method: PATCH {path}")
                with registry.lock:
                    tags = registry.tags.get(match[1], {})
                    if match[2] not in tags:
                        return self._error(404, "NOT_FOUND", f"Requested entity was not found: {path}")
                    tags[match[2]] = str(body.get("version", tags[match[2]]))
                    version = tags[match[2]]
                return self._send(200, {"name": path, "version": version})

        return Handler
