"""The session helpers' settings: the connector's session extension is appended to the extensions a user has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spark_connector.session import EXTENSIONS_CLASS, EXTENSIONS_KEY, configure, with_extensions


class _Builder:
    """Records settings as pyspark's ``SparkSession.Builder`` does (its ``_options``)."""

    def __init__(self, **options: str) -> None:
        self._options: dict[str, Any] = dict(options)

    def config(self, key: str, value: str) -> _Builder:
        self._options[key] = value
        return self


@pytest.mark.parametrize(("existing", "expected"), [
    (None, EXTENSIONS_CLASS),
    ("", EXTENSIONS_CLASS),
    ("a.Ext", f"a.Ext,{EXTENSIONS_CLASS}"),
    (f" a.Ext , {EXTENSIONS_CLASS},b.Ext", f"a.Ext,{EXTENSIONS_CLASS},b.Ext"),
])
def test_the_extension_is_appended_once_to_those_set(existing: str | None, expected: str) -> None:
    assert with_extensions(existing) == expected


def test_configure_keeps_the_builders_extensions(tmp_path: Path) -> None:
    builder = configure(_Builder(**{EXTENSIONS_KEY: "user.Ext"}), "http://127.0.0.1:1", "token", home=tmp_path, plugin=False)
    assert builder._options[EXTENSIONS_KEY] == f"user.Ext,{EXTENSIONS_CLASS}"
    assert configure(_Builder(), "http://127.0.0.1:1", "token", home=tmp_path)._options[EXTENSIONS_KEY] == EXTENSIONS_CLASS
