"""The filesystem client's own rules, on folders pyarrow writes: names stay under the root, partition folders
are read where they are, SET FORMAT keeps nothing it cannot read, the kept promotions file."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from hms_catalog import open_session
from hms_catalog.errors import ConfigurationError, NotFoundError
from hms_catalog.filesystem import FilesystemClient, FilesystemConfig, PromotionStore
from hms_catalog.filesystem.detect import detect_table, list_table

TABLE = pa.table({"id": pa.array([1, 2], pa.int64())})


def _client(root: Path, home: Path, **settings: object) -> FilesystemClient:
    return FilesystemClient("lake", FilesystemConfig(root.as_uri(), **settings), PromotionStore(home, "c1"))  # type: ignore[arg-type]


def test_names_never_reach_outside_the_root(tmp_path: Path) -> None:
    (tmp_path / "lake" / "db" / "t").mkdir(parents=True)
    pq.write_table(TABLE, tmp_path / "lake" / "db" / "t" / "a.parquet")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "s.csv").write_text("password\nhunter2\n")
    client = _client(tmp_path / "lake", tmp_path / "home")
    for database, table in (("..", "secret"), ("db", "../../secret"), ("db", ".."), ("db", "_hidden")):
        with pytest.raises(NotFoundError, match="is not a folder or file name"):
            client.get_table(database, table)
    assert [c.name for c in client.get_table("DB", "T").sd.cols] == ["id"]  # found whatever the case


def test_partitions_are_read_from_the_folders_as_written(tmp_path: Path) -> None:
    for folder in ("k=50%off", "k=plain", "k=__HIVE_DEFAULT_PARTITION__"):
        (tmp_path / "lake" / "db" / "t" / folder).mkdir(parents=True)
        pq.write_table(TABLE, tmp_path / "lake" / "db" / "t" / folder / "a.parquet")
    client = _client(tmp_path / "lake", tmp_path / "home")
    names = client.get_partition_names("db", "t")
    partitions = client.get_partitions_by_names("db", "t", names)
    locations = {tuple(p.values): p.sd.location for p in partitions}
    base = (tmp_path / "lake" / "db" / "t").as_uri()
    assert locations == {("50%off",): f"{base}/k=50%off", ("plain",): f"{base}/k=plain",
                         ("__HIVE_DEFAULT_PARTITION__",): f"{base}/k=__HIVE_DEFAULT_PARTITION__"}
    assert client.get_partition_names_ps("db", "t", ["plain"]) == ["k=plain"]
    projected = client.get_partitions_by_names("db", "t", names, fields=["values", "sd.location"])
    assert {tuple(p.values): p.sd.location for p in projected} == locations  # a projection is only a floor


def test_files_keep_no_column_statistics(tmp_path: Path) -> None:
    (tmp_path / "lake" / "db" / "t" / "k=1").mkdir(parents=True)
    pq.write_table(TABLE, tmp_path / "lake" / "db" / "t" / "k=1" / "a.parquet")
    client = _client(tmp_path / "lake", tmp_path / "home")
    assert client.get_table_column_statistics("db", "t", ["id"]) == []
    assert client.get_partitions_column_statistics("db", "t", ["k=1"], ["id"]) == {}


def test_set_format_keeps_nothing_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "lake" / "db" / "t").mkdir(parents=True)
    pq.write_table(TABLE, tmp_path / "lake" / "db" / "t" / "a.parquet")
    client = _client(tmp_path / "lake", tmp_path / "home")
    client.get_table("db", "t")
    with pytest.raises(ConfigurationError, match="SET FORMAT of lake.db.t: .*cannot be read as json"):
        client.set_format("db", "t", {"type": "json"})
    kept = client.layout("db", "t")
    assert kept is not None and kept.format == "parquet"


def test_one_sampled_file(tmp_path: Path) -> None:
    for index in range(3):
        pq.write_table(TABLE, tmp_path / f"a{index}.parquet")
    listing = list_table(pafs.LocalFileSystem(), str(tmp_path))
    assert listing is not None
    layout = detect_table(pafs.LocalFileSystem(), listing, 1)
    assert layout.format == "parquet" and "1 of 3 files opened" in layout.reason


def test_the_promotions_file_damaged_or_dropped(tmp_path: Path) -> None:
    (tmp_path / "lake" / "db" / "t").mkdir(parents=True)
    pq.write_table(TABLE, tmp_path / "lake" / "db" / "t" / "a.parquet")
    home = tmp_path / "home"
    session = open_session(home)
    session.run_one(f"CREATE CATALOG lake PROPERTIES ('type'='filesystem', 'root'='{(tmp_path / 'lake').as_uri()}')")
    session.run_one("DESCRIBE lake.db.t")
    kept = list((home / "filesystem").glob("*.json"))
    assert len(kept) == 1 and oct(kept[0].stat().st_mode & 0o777) == "0o600"
    kept[0].write_text("{not json")
    session.run_one("REFRESH TABLE lake.db.t")
    with pytest.raises(ConfigurationError, match=rf"the promoted tables file {kept[0]} is damaged .*remove it"):
        session.run_one("DESCRIBE lake.db.t")
    session.run_one("DROP CATALOG lake")
    assert not kept[0].exists()
    session.manager.close()
