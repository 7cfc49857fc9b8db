"""Locating the Swift CLI binary (architecture.md, "Finding the Swift binary")."""

import os
import stat

import pytest

from hackmatrix.swift_bridge import binary


def make_executable(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_env_var_wins(tmp_path, monkeypatch):
    exe = make_executable(tmp_path / "custom" / "hackmatrix")
    make_executable(binary.platform_build_dir(tmp_path) / "release" / "hackmatrix")
    monkeypatch.setenv(binary.ENV_VAR, str(exe))
    assert binary.find_binary(repo_root=tmp_path) == exe.resolve()


def test_env_var_pointing_nowhere_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(binary.ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match=binary.ENV_VAR):
        binary.find_binary(repo_root=tmp_path)


def test_finds_the_swift_build_release_binary(tmp_path, monkeypatch):
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    exe = make_executable(
        binary.platform_build_dir(tmp_path) / "x86_64-unknown-linux-gnu" / "release" / "hackmatrix"
    )
    assert binary.find_binary(repo_root=tmp_path) == exe.resolve()


def test_missing_binary_names_both_places_and_the_build_command(tmp_path, monkeypatch):
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    with pytest.raises(FileNotFoundError) as info:
        binary.find_binary(repo_root=tmp_path)
    message = str(info.value)
    assert binary.ENV_VAR in message
    assert str(binary.platform_build_dir(tmp_path)) in message
    assert "./swift-build" in message


def test_non_executable_file_is_not_taken(tmp_path, monkeypatch):
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    path = binary.platform_build_dir(tmp_path) / "release" / "hackmatrix"
    path.parent.mkdir(parents=True)
    path.write_text("")
    os.chmod(path, 0o644)
    with pytest.raises(FileNotFoundError):
        binary.find_binary(repo_root=tmp_path)


def test_build_reports_a_failing_build_script(tmp_path, monkeypatch):
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    script = tmp_path / "swift-build"
    script.write_text("#!/bin/sh\necho 'error: no such module' >&2\nexit 1\n")
    script.chmod(0o755)
    with pytest.raises(RuntimeError, match="no such module"):
        binary.find_binary(build=True, repo_root=tmp_path)


def test_build_returns_the_path_printed_last(tmp_path, monkeypatch):
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    exe = make_executable(tmp_path / "out" / "hackmatrix")
    script = tmp_path / "swift-build"
    script.write_text(f"#!/bin/sh\necho building >&2\necho noise\necho {exe}\n")
    script.chmod(0o755)
    assert binary.find_binary(build=True, repo_root=tmp_path) == exe


@pytest.mark.swift
def test_swift_binary_fixture_points_at_an_executable(swift_binary):
    assert swift_binary.is_file() and os.access(swift_binary, os.X_OK)
