"""The Hadoop helper: Hadoop's own Java client in one long-lived JVM, through its ``file://`` and ``viewfs://``
filesystems, configured by catalog-style Hadoop properties. Real JVM, no mocks; one helper for the module."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from hms_catalog.errors import StorageError
from hms_catalog.storage.hadoop import HadoopHelper, hadoop_filesystem
from hms_catalog.storage.hadoop._jvm import compile_server

CLUSTER = "lake"
BLOCK = 1 << 20  # fs.local.block.size given by the catalog (the local filesystem reports one block per file)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hadoop")
    (root / "wh" / "t" / "dt=1").mkdir(parents=True)
    (root / "wh" / "t" / "dt=2").mkdir()
    (root / "wh" / "t" / "dt=1" / "a.txt").write_bytes(b"alpha\n")
    (root / "wh" / "t" / "dt=2" / "b.txt").write_bytes(b"bravo!\n")
    (root / "wh" / "t" / "_SUCCESS").write_bytes(b"")
    (root / "wh" / "t" / ".hidden").write_bytes(b"h")
    (root / "wh" / "big.bin").write_bytes(random.Random(7).randbytes(3 * BLOCK + BLOCK // 2))
    pq.write_table(pa.table({"id": pa.array(range(5000), pa.int64()), "name": [f"n{i}" for i in range(5000)]}),
                   root / "wh" / "rows.parquet", row_group_size=1000)
    (root / "other").mkdir()
    (root / "other" / "o.txt").write_bytes(b"other")
    return root


@pytest.fixture(scope="module")
def helper(tree: Path) -> Iterator[HadoopHelper]:
    settings = {  # as a catalog gives them
        "fs.local.block.size": str(BLOCK),
        "hadoop.username": "etl",
        f"fs.viewfs.mounttable.{CLUSTER}.link./warehouse": f"file://{tree / 'wh'}",
        f"fs.viewfs.mounttable.{CLUSTER}.link./other": f"file://{tree / 'other'}",
    }
    with HadoopHelper(settings, name="hive") as started:
        yield started


def uri(path: Path) -> str:
    return f"file://{path}"


def test_lists_a_folder_and_below_it_with_hidden_files(helper: HadoopHelper, tree: Path) -> None:
    table = tree / "wh" / "t"
    top = {entry.path: entry for entry in helper.list(uri(table))}
    assert set(top) == {f"{table}/dt=1", f"{table}/dt=2", f"{table}/_SUCCESS", f"{table}/.hidden"}
    assert top[f"{table}/dt=1"].is_dir and top[f"{table}/_SUCCESS"].type == "file"
    below = {entry.path: entry for entry in helper.list(uri(table), recursive=True)}
    assert set(below) == set(top) | {f"{table}/dt=1/a.txt", f"{table}/dt=2/b.txt"}
    file = below[f"{table}/dt=2/b.txt"]
    assert file.size == 7 and file.block_size == BLOCK
    assert file.mtime_ms == int((table / "dt=2" / "b.txt").stat().st_mtime * 1000)


def test_stat_and_a_missing_path(helper: HadoopHelper, tree: Path) -> None:
    assert helper.stat(uri(tree / "wh" / "t")).is_dir
    assert helper.stat(uri(tree / "wh" / "big.bin")).size == 3 * BLOCK + BLOCK // 2
    with pytest.raises(FileNotFoundError, match="does not exist"):
        helper.stat(uri(tree / "missing"))
    with pytest.raises(FileNotFoundError):
        helper.list(uri(tree / "missing"), recursive=True)


def test_reads_ranges_equal_to_the_bytes_on_disk(helper: HadoopHelper, tree: Path) -> None:
    data = (tree / "wh" / "big.bin").read_bytes()
    chooser = random.Random(3)
    for _ in range(20):
        offset = chooser.randrange(len(data))
        length = chooser.randrange(1, 2 * BLOCK)
        assert helper.read(uri(tree / "wh" / "big.bin"), offset, length) == data[offset:offset + length]
    assert helper.read(uri(tree / "wh" / "big.bin"), len(data) - 3, 100) == data[-3:]
    assert helper.read(uri(tree / "wh" / "big.bin"), 0, 0) == b""


def test_block_locations_of_many_files_in_one_call(helper: HadoopHelper, tree: Path) -> None:
    big, small, missing = (uri(tree / "wh" / name) for name in ("big.bin", "rows.parquet", "nothing.bin"))
    found = helper.blocks([big, small, missing])
    assert found[2] is None
    blocks = found[0]
    assert blocks is not None and blocks.block_size == BLOCK
    assert blocks.offsets == (0,) and blocks.lengths == (blocks.size,) == (3 * BLOCK + BLOCK // 2,)
    assert blocks.hosts == (("localhost",),)
    assert found[1] is not None and len(found[1].offsets) == 1 and found[1].hosts[0]


def test_the_settings_name_the_user(helper: HadoopHelper) -> None:
    identity = helper.whoami()
    assert identity.user == "etl" and identity.authentication == "simple" and not identity.kerberos
    assert identity.hadoop_version.startswith("3.")


def test_viewfs_mount_table_over_local_folders(helper: HadoopHelper, tree: Path) -> None:
    root = {entry.path: entry for entry in helper.list(f"viewfs://{CLUSTER}/")}
    assert set(root) == {"/warehouse", "/other"} and all(entry.is_dir for entry in root.values())
    below = {entry.path for entry in helper.list(f"viewfs://{CLUSTER}/warehouse/t", recursive=True)}
    assert "/warehouse/t/dt=1/a.txt" in below
    assert helper.read(f"viewfs://{CLUSTER}/warehouse/t/dt=1/a.txt", 0, 100) == b"alpha\n"
    [blocks] = helper.blocks([f"viewfs://{CLUSTER}/warehouse/big.bin"])
    assert blocks is not None and blocks.block_size == BLOCK and blocks.hosts == (("localhost",),)
    with pytest.raises(OSError, match="[Mm]ount"):  # Hadoop's own rule, carried back with its class
        helper.rename(f"viewfs://{CLUSTER}/other/o.txt", f"viewfs://{CLUSTER}/warehouse/o.txt")
    filesystem = hadoop_filesystem(helper, f"viewfs://{CLUSTER}")
    assert pq.read_table("/warehouse/rows.parquet", filesystem=filesystem).num_rows == 5000


def test_pyarrow_reads_parquet_through_the_filesystem(helper: HadoopHelper, tree: Path) -> None:
    filesystem = hadoop_filesystem(helper, "file://")
    path = str(tree / "wh" / "rows.parquet")
    assert pq.read_table(path, filesystem=filesystem).equals(pq.read_table(path))
    assert pq.read_table(path, filesystem=filesystem, columns=["name"]).column(0)[4321].as_py() == "n4321"
    with filesystem.open_input_file(str(tree / "wh" / "big.bin")) as file:
        file.seek(BLOCK - 5)
        assert file.read(10) == (tree / "wh" / "big.bin").read_bytes()[BLOCK - 5:BLOCK + 5]
        assert file.size() == 3 * BLOCK + BLOCK // 2


def test_file_infos_and_selectors(helper: HadoopHelper, tree: Path) -> None:
    filesystem = hadoop_filesystem(helper, "file://")
    table = str(tree / "wh" / "t")
    found = filesystem.get_file_info(pafs.FileSelector(table, recursive=True))
    files = {info.path: info for info in found if info.type == pafs.FileType.File}
    assert files[f"{table}/dt=1/a.txt"].size == 6 and f"{table}/.hidden" in files
    assert filesystem.get_file_info(pafs.FileSelector(str(tree / "none"), allow_not_found=True)) == []
    with pytest.raises(FileNotFoundError):
        filesystem.get_file_info(pafs.FileSelector(str(tree / "none")))
    with pytest.raises(NotADirectoryError):
        filesystem.get_file_info(pafs.FileSelector(f"{table}/_SUCCESS"))
    info, missing = filesystem.get_file_info([table, str(tree / "none")])
    assert info.type == pafs.FileType.Directory and missing.type == pafs.FileType.NotFound


def test_changes_through_the_helper_and_the_filesystem(helper: HadoopHelper, tmp_path: Path) -> None:
    assert helper.mkdirs(uri(tmp_path / "a" / "b")) and (tmp_path / "a" / "b").is_dir()
    (tmp_path / "a" / "b" / "f").write_bytes(b"x")
    assert helper.rename(uri(tmp_path / "a" / "b" / "f"), uri(tmp_path / "a" / "g"))
    assert (tmp_path / "a" / "g").read_bytes() == b"x" and not (tmp_path / "a" / "b" / "f").exists()
    with pytest.raises(OSError):
        helper.delete(uri(tmp_path / "a"))  # not empty, not recursive
    assert helper.delete(uri(tmp_path / "a"), recursive=True) and not (tmp_path / "a").exists()
    with pytest.raises(FileNotFoundError):
        helper.delete(uri(tmp_path / "a"), recursive=True)

    filesystem = hadoop_filesystem(helper, "file://")
    filesystem.create_dir(str(tmp_path / "d" / "e"))
    (tmp_path / "d" / "e" / "one").write_bytes(b"1")
    (tmp_path / "d" / "two").write_bytes(b"2")
    filesystem.move(str(tmp_path / "d" / "two"), str(tmp_path / "d" / "e" / "one"))  # an existing file is replaced
    assert (tmp_path / "d" / "e" / "one").read_bytes() == b"2"
    filesystem.delete_file(str(tmp_path / "d" / "e" / "one"))
    assert not (tmp_path / "d" / "e" / "one").exists()
    (tmp_path / "d" / "e" / "three").write_bytes(b"3")
    filesystem.delete_dir_contents(str(tmp_path / "d"))
    assert (tmp_path / "d").is_dir() and not any((tmp_path / "d").iterdir())
    filesystem.delete_dir(str(tmp_path / "d"))
    assert not (tmp_path / "d").exists()
    filesystem.delete_dir_contents(str(tmp_path / "d"), missing_dir_ok=True)
    with pytest.raises(NotImplementedError, match="does not write"):
        filesystem.open_output_stream(str(tmp_path / "new"))


def test_many_threads_share_one_process(helper: HadoopHelper, tree: Path) -> None:
    helper.whoami()
    starts, pid = helper.starts, helper.pid
    data = (tree / "wh" / "big.bin").read_bytes()
    failures: list[BaseException] = []

    def work(seed: int) -> None:
        chooser = random.Random(seed)
        try:
            for _ in range(25):
                offset = chooser.randrange(len(data))
                assert helper.read(uri(tree / "wh" / "big.bin"), offset, 4096) == data[offset:offset + 4096]
                assert len(helper.list(uri(tree / "wh" / "t"), recursive=True)) == 6
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            failures.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert helper.starts == starts and helper.pid == pid  # 800 calls, no new JVM


def test_a_killed_process_is_started_again(helper: HadoopHelper, tree: Path) -> None:
    helper.whoami()
    starts, pid = helper.starts, helper.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # the helper's own JVM, started by this test's fixture
    deadline = time.monotonic() + 10
    while helper.pid == pid and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(helper.list(uri(tree / "wh" / "t"))) == 4
    assert helper.starts == starts + 1 and helper.pid not in (None, pid)


def test_bad_settings_give_a_storage_error_naming_the_catalog_without_secrets(tmp_path: Path) -> None:
    settings = {"hadoop.security.authentication": "kerberos", "hadoop.kerberos.principal": "nobody@NOWHERE.TEST",
                "hadoop.kerberos.keytab": str(tmp_path / "missing.keytab"), "fs.s3a.secret.key": "s3cr3t-value-42"}
    helper = HadoopHelper(settings, name="lake")
    with pytest.raises(StorageError, match="catalog 'lake'") as raised:
        helper.list(uri(tmp_path))
    assert "s3cr3t-value-42" not in str(raised.value) and "s3cr3t-value-42" not in repr(helper)
    helper.close()
    helper.close()  # idempotent
    with pytest.raises(StorageError, match="closed"):
        helper.stat(uri(tmp_path))


def test_no_java_is_a_storage_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    compile_server()  # compiled already (or now): only the missing java is tested
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with HadoopHelper({}, name="lake") as helper, pytest.raises(StorageError, match="catalog 'lake'.*no java"):
        helper.stat(uri(tmp_path))
