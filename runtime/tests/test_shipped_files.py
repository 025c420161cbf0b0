"""What leaves the machine: `bundle export` and `registry push` ship no secrets, keep private modes, refuse a
symlink out of the bundle, and refuse an archive bomb without leaving a `.partial` folder."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from agentenv_runtime.registry import RegistryError, pack, unpack
from test_bundle_export import FIXTURE, agentenv

SECRETS = (".env", ".env.local", ".agentenv/secrets.toml", "keys/deploy.pem", ".ssh/id_ed25519")


def _bundle_with_secrets(tmp_path: Path) -> Path:
    bundle = tmp_path / "bundle"
    shutil.copytree(FIXTURE, bundle)
    for name in SECRETS:
        (bundle / name).parent.mkdir(parents=True, exist_ok=True)
        (bundle / name).write_text("OPENAI_API_KEY=sk-live-not-for-export\n")
    (bundle / ".env.example").write_text("OPENAI_API_KEY=\n")
    private = bundle / "notes.txt"
    private.write_text("mine\n")
    private.chmod(0o600)
    return bundle


def _names(data: bytes) -> dict[str, int]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {member.name: member.mode for member in tar}


def test_push_packs_no_secret_and_keeps_a_private_mode(tmp_path: Path) -> None:
    members = _names(pack(_bundle_with_secrets(tmp_path)))
    assert not set(SECRETS) & set(members), members
    assert ".env.example" in members and "bundle.toml" in members
    assert members["notes.txt"] == 0o600 and members["bundle.toml"] == 0o644


def test_export_copies_no_secret_and_keeps_modes(tmp_path: Path) -> None:
    bundle = _bundle_with_secrets(tmp_path)
    out = tmp_path / "out"
    code, _, stderr = agentenv(tmp_path, "bundle", "export", str(bundle), "--out", str(out))
    assert code == 0, stderr
    assert [name for name in SECRETS if (out / name).exists()] == []
    assert (out / ".env.example").is_file()
    assert (out / "notes.txt").stat().st_mode & 0o777 == 0o600
    archive = tmp_path / "out.tar.gz"
    code, _, stderr = agentenv(tmp_path, "bundle", "export", str(bundle), "--out", str(archive))
    assert code == 0, stderr
    members = _names(archive.read_bytes())
    assert not [m for m in members if m.endswith(tuple(SECRETS))], members


def test_a_symlink_out_of_the_bundle_is_refused(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(FIXTURE, bundle)
    outside = tmp_path / "home-secret.txt"
    outside.write_text("private\n")
    (bundle / "data.txt").symlink_to(outside)
    with pytest.raises(RegistryError, match="symlink out of the folder"):
        pack(bundle)
    code, _, stderr = agentenv(tmp_path, "bundle", "export", str(bundle), "--out", str(tmp_path / "out"))
    assert code != 0 and "symlink out of the folder" in stderr and "Traceback" not in stderr
    (bundle / "data.txt").unlink()
    (bundle / "inside.toml").symlink_to(bundle / "bundle.toml")  # a link inside ships as the file it names
    assert "inside.toml" in _names(pack(bundle))


def test_an_archive_bomb_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("zeros.bin")
        info.size = 8 * 1024 * 1024
        tar.addfile(info, io.BytesIO(bytes(info.size)))
    bomb = gzip.compress(raw.getvalue())
    assert len(bomb) < 64 * 1024
    target = tmp_path / "cache" / "abc"
    with pytest.raises(tarfile.TarError, match="more than"):
        unpack(bomb, target, max_bytes=1024 * 1024)
    assert not target.exists() and os.listdir(tmp_path / "cache") == []
    with pytest.raises(tarfile.TarError):
        unpack(b"not a gzip archive", target)
    assert os.listdir(tmp_path / "cache") == []
