"""Where the store is: SQLite in the home by default; a PostgreSQL URL checked, its password never shown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hms_catalog.errors import ConfigurationError, StoreUnavailableError
from hms_catalog.state import STORE_ENV, STORE_PASSWORD_ENV, SqlCatalogStore, StoreDatabase, store_location
from hms_catalog.state import database as database_module
from tests.support.replicas import free_port


def test_the_default_store_is_a_private_sqlite_file_in_the_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    location = store_location(tmp_path / "home")
    assert location.is_sqlite and Path(location.url.database or "") == tmp_path / "home" / "catalog.db"
    assert (tmp_path / "home" / "catalog.db").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "home").stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize(("url", "message"), [
    ("postgresql://hms:hunter2@db/cat", "do not put the password in the URL"),
    ("mysql://hms@db/cat", "unsupported store 'mysql'"),
    ("sqlite://", "needs a file"),
    ("not a url", "not a store URL"),
])
def test_bad_store_urls_are_refused_naming_what_is_wrong(tmp_path: Path, url: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as raised:
        store_location(tmp_path, url)
    assert "hunter2" not in str(raised.value)


def test_the_password_comes_from_a_file_or_the_environment_and_is_never_shown(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "password"
    secret.write_text("s3cret-store\n")
    location = store_location(tmp_path, "postgresql://hms@127.0.0.1:1/cat", password_file=secret)
    assert "s3cret" not in location.describe() and location.describe().startswith("postgresql+psycopg://hms@")
    with pytest.raises(ConfigurationError, match="--store-password-file .*cannot read it"):
        store_location(tmp_path, "postgresql://hms@h/cat", password_file=tmp_path / "missing")
    monkeypatch.setenv(STORE_PASSWORD_ENV, "from-env")
    monkeypatch.setenv(STORE_ENV, "postgresql://hms@127.0.0.1:1/cat")
    assert store_location(tmp_path).describe() == "postgresql+psycopg://hms@127.0.0.1:1/cat"  # the password kept apart


def test_a_store_that_cannot_be_reached_is_unavailable_quickly_and_names_the_store(tmp_path: Path) -> None:
    location = store_location(tmp_path, f"postgresql://hms@127.0.0.1:{free_port()}/cat", password_file=None)
    store = SqlCatalogStore(tmp_path, StoreDatabase(location))
    with pytest.raises(StoreUnavailableError, match=r"catalog store postgresql\+psycopg://hms@127.0.0.1:\d+/cat cannot be reached"):
        store.list()


def test_the_head_revision_the_store_checks_is_alembics_head() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(Path(database_module.__file__).parent / "migrations"))
    assert ScriptDirectory.from_config(config).get_heads() == [database_module.HEAD_REVISION]


def test_a_store_at_the_head_revision_is_opened_without_loading_alembic(tmp_path: Path) -> None:
    """A CLI run's start-up: the second process on a home reads one row instead of running the migrations."""
    script = ("import sys\nfrom pathlib import Path\nfrom hms_catalog.state import StoreDatabase, store_location\n"
              "database = StoreDatabase(store_location(Path(sys.argv[1])))\n"
              "with database.reading() as connection:\n    pass\n"
              "print('alembic' in sys.modules)\n")
    home = tmp_path / "home"
    runs = [subprocess.run([sys.executable, "-c", script, str(home)], capture_output=True, text=True, check=True).stdout.strip()
            for _ in range(2)]
    assert runs == ["True", "False"]  # the first made the store (migrations ran); the second only read its revision
