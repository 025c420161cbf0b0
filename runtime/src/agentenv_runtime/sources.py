"""Where `agentenv run TARGET` finds a bundle: a folder, an installed bundle's name, an exported `.tar.gz`,
`registry://NAME@VERSION` (pulled from the configured stores) or `hf://[datasets/|spaces/]ORG/REPO[@REV][/PATH]`
(a Hugging Face Hub repo, with `huggingface_hub`). Archives and registry versions unpack into the cache by
content hash and Hub repos by commit, so one version is fetched once and reads the same everywhere. A
bundle from any source is read and checked (its plugin ranges) like a local one."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from agentenv import PluginHost

from agentenv_runtime.engine.bundle import Bundle, find_bundle, read_bundle
from agentenv_runtime.engine.task import TaskError

EXPORT_SUFFIXES = (".tar.gz", ".tgz")
HF_SCHEME = "hf://"
_COMMIT = re.compile(r"[0-9a-f]{40}")
_HF = re.compile(r"(?:(?P<kind>datasets|spaces)/)?(?P<repo>[\w.-]+/[\w.-]+?)(?:@(?P<rev>[^/]+))?(?:/(?P<path>.+))?")


def _check_hub_names(uri: str, repo: str, path: str) -> None:
    """Refuse names that would leave the download cache (`..`, a leading dot or dash) before the Hub sees them."""
    for part in repo.split("/"):
        if part in (".", "..") or part[0] in ".-" or part[-1] in ".-":
            raise TaskError(
                f"{uri}: {part!r} is not a Hub name (letters, digits, '-', '_' and '.', not starting or ending "
                "with '.' or '-'); write hf://ORG/REPO[@REVISION][/PATH]"
            )
    if any(segment in ("", ".", "..") for segment in path.split("/")) and path:
        raise TaskError(f"{uri}: the path {path!r} must name a folder inside the repo (no '..', '.' or '//')")


def is_export(target: str) -> bool:
    return target.endswith(EXPORT_SUFFIXES) and Path(target).is_file()


def find_any_bundle(target: str, host: PluginHost) -> Bundle:
    if target.startswith("registry://"):
        from agentenv.config import load_config

        from agentenv_runtime.registry import RegistryError, bundle_folder

        try:
            return read_bundle(bundle_folder(target, load_config(), host))
        except RegistryError as exc:
            raise TaskError(str(exc)) from exc
    if target.startswith(HF_SCHEME):
        return read_bundle(hub_folder(target))
    if is_export(target):
        from agentenv_runtime.export import exported_folder

        return read_bundle(exported_folder(Path(target)))
    return find_bundle(target, host)


def hub_folder(uri: str) -> Path:
    """The bundle folder of an `hf://` URI, downloaded with huggingface_hub into the cache, one folder per commit:
    a branch costs one call to learn its commit, a commit already downloaded costs none.

    The Hub's endpoint and token come from huggingface_hub's own settings (HF_ENDPOINT, HF_TOKEN, `hf auth login`).
    """
    match = _HF.fullmatch(uri.removeprefix(HF_SCHEME))
    if match is None:
        raise TaskError(f"{uri!r}: write hf://ORG/REPO[@REVISION][/PATH] (hf://datasets/ORG/REPO for a dataset repo)")
    try:
        from huggingface_hub import HfApi, snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError
    except ImportError:
        raise TaskError(f"{uri}: hf:// needs huggingface_hub; fix: pip install 'agentenv-runtime[hf]'") from None
    from agentenv_runtime.registry import cache_root

    path, repo, revision = match["path"] or "", match["repo"], match["rev"]
    _check_hub_names(uri, repo, path)
    kind = (match["kind"] or "models")[:-1]
    try:
        commit = (
            revision
            if revision and _COMMIT.fullmatch(revision)
            else HfApi().repo_info(repo, repo_type=kind, revision=revision).sha
        )
        # Plain files per commit (the Hub cache's symlinks would hide the file names steps check).
        folder = cache_root().parent / "hf" / kind / repo / str(commit)
        complete = folder / f".agentenv-complete-{hashlib.sha256(path.encode()).hexdigest()[:16]}"
        if not complete.is_file():
            snapshot_download(
                repo,
                repo_type=kind,
                revision=commit,
                local_dir=folder,
                allow_patterns=[f"{path}/*", f"{path}/**"] if path else None,
            )
            complete.touch()
    except RevisionNotFoundError:
        raise TaskError(f"{uri}: the {kind} repo {repo} has no revision {revision!r}") from None
    except RepositoryNotFoundError:
        raise TaskError(f"{uri}: no {kind} repo {repo!r} on the Hub (or no access; check HF_TOKEN)") from None
    except (HfHubHTTPError, OSError) as exc:
        raise TaskError(f"{uri}: cannot download from the Hub: {' '.join(str(exc).split())}") from None
    except Exception as exc:  # the Hub client's transport errors (no network, DNS) are not OSErrors
        raise TaskError(
            f"{uri}: cannot reach the Hub ({type(exc).__name__}: {' '.join(str(exc).split())}); check the network "
            "or HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use what is already downloaded"
        ) from None
    bundle = Path(folder) / path
    if not (bundle / "bundle.toml").is_file():
        raise TaskError(f"{uri}: no bundle.toml at {path or 'the repo root'}; point the URI at a bundle folder")
    return bundle
