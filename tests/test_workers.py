"""The groups ``make test``'s two workers take whole (tests/support/workers.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.workers import SHARED_SETUP_PACKAGES, GroupScheduling, group_of, in_worker_order

TESTS = Path(__file__).parent
# A fixture made once for many tests: by a worker once per group, so its tests must be one group.
_SHARED_FIXTURE = re.compile(r"@pytest\.fixture\(scope=\"(package|session)\"")


def test_every_package_with_a_set_up_of_its_own_is_one_group() -> None:
    sharing = {conftest.relative_to(TESTS).parts[0] for conftest in TESTS.glob("*/**/conftest.py")
               if _SHARED_FIXTURE.search(conftest.read_text())}
    assert sharing, "no package makes a set-up of its own: the pattern no longer finds the fixtures"
    assert sharing <= set(SHARED_SETUP_PACKAGES), f"not grouped: {sorted(sharing - set(SHARED_SETUP_PACKAGES))}"
    assert all((TESTS / package).is_dir() for package in SHARED_SETUP_PACKAGES)


def test_a_shared_packages_files_are_one_group_and_other_files_one_each() -> None:
    assert group_of("faults/test_cli_kill.py") == group_of("faults/test_service_kill.py") == "faults"
    assert group_of("service/thrift/test_reads.py") == "service"
    assert group_of("ddl/test_rules.py") != group_of("ddl/test_statements.py")
    assert group_of("test_store.py") == "test_store.py"


def test_the_shared_packages_go_first_longest_first_each_in_its_own_order() -> None:
    files = ["cache/test_a.py", "faults/test_x.py", "spark_connector/test_y.py", "faults/test_w.py", "test_store.py",
             "spark_connector/test_z.py"]
    ordered = [files[index] for index in in_worker_order(files)]
    assert ordered == ["spark_connector/test_y.py", "spark_connector/test_z.py", "faults/test_x.py",
                       "faults/test_w.py", "cache/test_a.py", "test_store.py"]


def test_the_scheduler_reads_the_group_from_a_tests_id() -> None:
    split = GroupScheduling._split_scope
    assert split(None, "tests/kerberos/test_config.py::test_x[a::b]") == "kerberos"
    assert split(None, "tests/ddl/test_rules.py::Rules::test_y") == "ddl/test_rules.py"


def test_make_test_fast_leaves_out_every_test_of_the_session_spark_session() -> None:
    """``-m "not slow"`` (make test-fast) collects no test using the ``spark`` fixture, marked or not in its file,
    and keeps the pure tests."""
    import subprocess
    import sys

    files = ["tests/spark/test_sql.py", "tests/ddl/test_spark_parity.py", "tests/types/test_spark.py", "tests/sql/test_fuzz.py"]
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow", *files],
                         capture_output=True, text=True, cwd=TESTS.parent, timeout=300, check=False)
    collected = [line for line in run.stdout.splitlines() if "::" in line]
    assert collected, run.stdout[-2000:] + run.stderr[-2000:]
    assert not [test for test in collected if test.startswith(("tests/spark/", "tests/sql/"))]
    parity = [test for test in collected if test.startswith("tests/ddl/test_spark_parity.py::")]
    assert parity and all("refused" in test for test in parity)  # only its tests that never reach Spark
    assert any(test.startswith("tests/types/test_spark.py::") for test in collected)  # its tests without a SparkSession
