"""The embedded metastore's choice of database, parsed and shown without starting Java: the forms ``--db``
takes, what each error names, and the password never in a message, a repr or a description."""

from __future__ import annotations

import stat
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from hms_catalog._secrets import MASK
from hms_catalog.errors import ConfigurationError, EmbeddedMetastoreError
from hms_catalog.metastore import (
    DATABASE_PASSWORD_ENV,
    DerbyDatabase,
    EmbeddedMetastore,
    PostgresDatabase,
    _backend,
    _database,
    _setup,
    parse_database,
)
from hms_catalog.metastore._database import same_database
from hms_catalog.metastore._state import DATABASE_FILE, ServerStateFile

SECRET = "s3cr@t/pa:ss"  # an @, a slash and a colon: each must be percent-encoded in a URL
URL = "postgresql://hive:s3cr%40t%2Fpa%3Ass@db.example.com:6432/meta?ssl=true&sslmode=verify-full"


def _postgres(text: str, password: str | None = None) -> PostgresDatabase:
    database = parse_database(text, password=password)
    assert isinstance(database, PostgresDatabase)
    return database


@pytest.fixture(autouse=True)
def _no_password_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATABASE_PASSWORD_ENV, raising=False)


def test_derby_is_the_default() -> None:
    assert parse_database(None) == parse_database("derby") == parse_database(" Derby ") == DerbyDatabase()
    assert parse_database("derby").describe() == "derby"


def test_a_url_names_the_server_the_database_and_the_login() -> None:
    database = _postgres(URL)
    assert not database.own_server
    assert (database.host, database.port, database.database, database.user, database.password) == (
        "db.example.com", 6432, "meta", "hive", SECRET)
    assert database.options == (("ssl", "true"), ("sslmode", "verify-full"))
    assert database.jdbc_url() == "jdbc:postgresql://db.example.com:6432/meta?ssl=true&sslmode=verify-full"
    assert _postgres(database.url()) == database and _postgres(database.url()).password == SECRET
    settings = database.hive_settings()
    assert settings["javax.jdo.option.ConnectionURL"] == database.jdbc_url()
    assert settings["javax.jdo.option.ConnectionDriverName"] == "org.postgresql.Driver"
    assert settings["javax.jdo.option.ConnectionUserName"] == "hive"
    assert settings["javax.jdo.option.ConnectionPassword"] == SECRET
    assert _postgres("postgres://hive@[::1]/meta").jdbc_url() == "jdbc:postgresql://[::1]:5432/meta"


def test_the_password_is_never_shown() -> None:
    database = parse_database(URL + "&sslpassword=keypass")
    for shown in (database.describe(), str(database), repr(database)):
        assert "s3cr" not in shown and "keypass" not in shown
    assert database.describe() == (f"postgresql://hive:{MASK}@db.example.com:6432/meta"
                                   f"?ssl=true&sslmode=verify-full&sslpassword={MASK}")
    assert parse_database("postgresql://hive@h/m").describe() == "postgresql://hive@h:5432/m"  # none to mask


def test_the_password_may_come_from_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _postgres("postgresql://hive@h/m", password="from-file").password == "from-file"
    monkeypatch.setenv(DATABASE_PASSWORD_ENV, "from-env")
    assert _postgres("postgresql://hive@h/m").password == "from-env"
    assert _postgres("postgresql://hive:in-url@h/m", password="from-file").password == "in-url"  # the URL's wins


def test_a_server_of_its_own() -> None:
    for text in ("postgresql", "postgres://", "postgresql:///"):
        database = _postgres(text)
        assert database.own_server and database.database == "metastore"
        assert database.describe() == "postgresql (a server of its own)" and database.url() == "postgresql"
    named = _postgres("postgresql:///hive_meta")
    assert named.database == "hive_meta" and named.url() == "postgresql:///hive_meta"
    started = named.on("127.0.0.1", 5999, "hive", "pw")
    assert started.jdbc_url() == "jdbc:postgresql://127.0.0.1:5999/hive_meta"
    assert started.describe() == f"postgresql://hive:{MASK}@127.0.0.1:5999/hive_meta (a server of its own)"
    assert started.url() == "postgresql:///hive_meta"  # the choice is remembered, not the port it took
    with pytest.raises(EmbeddedMetastoreError, match="has not been started"):
        named.jdbc_url()


@pytest.mark.parametrize(("text", "message"), [
    ("mysql://hive:pw-1@h/m", "not a metastore database; give derby, postgresql://USER"),
    ("postgresql:h", "a PostgreSQL URL is postgresql://"),
    ("postgresql://h/m", "names no user"),
    ("postgresql://hive:pw-1@/m", "names no host"),
    ("postgresql://hive:pw-1@h", "name one database after the host"),
    ("postgresql://hive:pw-1@h/m/n", "name one database after the host"),
    ("postgresql://hive:pw-1@h:99999/m", "the port must be a number from 1 to 65535"),
    ("postgresql://hive:pw-1@h:5x/m", "the port must be a number from 1 to 65535"),
    ("postgresql://hive:pw-1@h:0/m", "the port must be a number from 1 to 65535"),
    ("postgresql://hive@h/m?password=pw-1", "give the password before the host"),
    ("postgresql://hive:pw-1@h/m?ssl", "options are KEY=VALUE pairs"),
    ("postgresql://hive:pw-1@h/m#x", "no #fragment"),
    ("postgresql://hive:pw-1/x@h/m", "."),  # an unencoded slash: whatever is said, the password is masked
])
def test_what_is_wrong_is_named_and_the_password_masked(text: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as refused:
        parse_database(text, where="--db")
    assert str(refused.value).startswith("--db '") and "pw-1" not in str(refused.value)


def test_a_missing_jdbc_driver_names_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_database.JDBC_DRIVER_ENV, str(tmp_path / "absent.jar"))
    with pytest.raises(EmbeddedMetastoreError, match="apt-get install libpostgresql-jdbc-java"):
        _backend.reach(tmp_path, parse_database("postgresql://hive@h/m"))
    (tmp_path / "driver.jar").write_bytes(b"")
    monkeypatch.setenv(_database.JDBC_DRIVER_ENV, str(tmp_path / "driver.jar"))
    assert _backend.classpath(parse_database("postgresql://hive@h/m")) == [str(tmp_path / "driver.jar")]
    assert _backend.classpath(DerbyDatabase()) == []


def test_hive_site_holding_the_password_is_private(tmp_path: Path) -> None:
    database = _postgres(URL)
    site = _setup.write_hive_site(tmp_path, db_dir=tmp_path / "db", warehouse=tmp_path / "wh", with_events=False,
                                  connection=database.hive_settings())
    assert stat.S_IMODE(site.stat().st_mode) == 0o600
    settings = {p.findtext("name"): p.findtext("value") for p in ElementTree.parse(site).getroot().iter("property")}
    assert settings["javax.jdo.option.ConnectionURL"] == database.jdbc_url()
    assert settings["javax.jdo.option.ConnectionPassword"] == SECRET  # escaped in the XML, read back as written


def test_the_database_is_remembered_privately_and_shown_masked(tmp_path: Path) -> None:
    state = ServerStateFile(tmp_path)
    assert state.remembered_database() is None
    assert EmbeddedMetastore(tmp_path).database == DerbyDatabase()
    state.remember_database(parse_database(URL).url())
    assert stat.S_IMODE((tmp_path / DATABASE_FILE).stat().st_mode) == 0o600
    metastore = EmbeddedMetastore(tmp_path)
    assert metastore.database == parse_database(URL)  # a start that names none takes it
    status = metastore.status()
    assert not status.running and status.database == parse_database(URL).describe() and "s3cr" not in status.database
    assert EmbeddedMetastore(tmp_path, database="derby").database == DerbyDatabase()  # named, it wins
    (tmp_path / DATABASE_FILE).write_text("postgresql://hive:pw-1@h:bad/m", encoding="utf-8")
    assert "pw-1" not in EmbeddedMetastore(tmp_path).status().database


def test_the_cli_refuses_a_wrong_url_without_showing_the_password(tmp_path: Path) -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "hms_catalog.cli", "metastore", "start", "--dir", str(tmp_path / "ms"),
         "--db", "mysql://hive:pw-1@h/m"], capture_output=True, text=True, timeout=120, check=False,
    )
    assert refused.returncode == 2 and "not a metastore database" in refused.stderr
    assert "pw-1" not in refused.stderr + refused.stdout and not (tmp_path / "ms").exists()


def test_the_cli_reads_the_password_from_a_file_and_says_what_is_wrong(tmp_path: Path) -> None:
    from hms_catalog.cli.metastore_command import _database

    secret = tmp_path / "password"
    secret.write_text("from-file\n", encoding="utf-8")
    given = _database("postgresql://hive@h/m", secret)
    assert isinstance(given, PostgresDatabase) and given.password == "from-file"
    assert _database(None, None) is None  # the directory's last
    with pytest.raises(ConfigurationError, match="cannot read it"):
        _database("postgresql://hive@h/m", tmp_path / "absent")
    with pytest.raises(ConfigurationError, match="goes with --db"):
        _database(None, secret)
    with pytest.raises(ConfigurationError, match="a server of the metastore's own, which makes its own password"):
        _database("postgresql", secret)  # never silently left unused


def test_the_same_database_whatever_the_password_and_the_order_of_its_options() -> None:
    remembered = parse_database("postgresql://hive:one@db.example/m?ssl=true&sslmode=require")
    assert same_database(remembered, parse_database("postgresql://hive:two@DB.example:5432/m?sslmode=require&ssl=true"))
    assert not same_database(remembered, parse_database("postgresql://hive@db.example/m?ssl=true"))
    assert not same_database(remembered, parse_database("postgresql://hive@db.example/other?ssl=true&sslmode=require"))
    assert same_database(parse_database("postgresql"), parse_database("postgres:///metastore"))
    assert same_database(parse_database("derby"), parse_database("derby"))
    assert not same_database(parse_database("derby"), parse_database("postgresql"))

