"""One live catalog manager per home and process, shared by every entry point."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hms_catalog import open_session
from hms_catalog.errors import ConfigurationError
from hms_catalog.manager import CatalogManager
from hms_catalog.registry import ManagerRegistry, adopt_manager, home_key, live_managers, shared_manager
from hms_catalog.store import CatalogStore


def test_every_spelling_of_a_home_gets_one_manager(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = ManagerRegistry()
    monkeypatch.chdir(home.parent)
    first = registry.manager(home)
    assert registry.manager(f"{home}/") is first
    assert registry.manager(Path(home.name)) is first
    assert registry.manager(home / ".." / home.name) is first
    assert registry.manager(home.parent / "other") is not first
    assert set(registry.managers) == {home.resolve(), (home.parent / "other").resolve()}


def test_the_view_is_read_only(home: Path) -> None:
    registry = ManagerRegistry()
    registry.manager(home)
    with pytest.raises(TypeError):
        registry.managers[home] = CatalogManager(CatalogStore(home))  # type: ignore[index]


def test_sessions_and_the_shared_manager_meet(home: Path) -> None:
    first, second = open_session(home), open_session(str(home))
    assert first.manager is second.manager is shared_manager(home)
    assert live_managers()[home_key(home)] is first.manager


def test_a_second_manager_for_a_shared_home_is_refused(home: Path, tmp_path: Path) -> None:
    shared_manager(home)
    with pytest.raises(ConfigurationError, match="another catalog manager is already live for home"):
        adopt_manager(CatalogManager(CatalogStore(home)))
    private = CatalogManager(CatalogStore(tmp_path / "private"))
    assert adopt_manager(private) is private and shared_manager(tmp_path / "private") is private


def test_a_forked_child_starts_with_no_managers(home: Path) -> None:
    shared_manager(home)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        os._exit(0 if len(live_managers()) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert home_key(home) in live_managers()
