"""Row values survive the trip through JSON with their Python type, so a remote run renders as a local one."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pytest

from hms_catalog.cli.render import JsonRenderer, TextRenderer
from hms_catalog.execution import Result
from hms_catalog.remote.values import decode_value, encode_value

VALUES: list[Any] = [
    None, True, False, 0, -7, 2**63 - 1, 1.5, float("1e-300"), "", "héllo\nworld",
    Decimal("12.340"), Decimal("-0.000001"), Decimal("123456789012345678901234567890.12"),
    date(1, 1, 1), date(2024, 2, 29), datetime(2024, 1, 1, 10, 11, 12, 123456), datetime(1970, 1, 1),
    b"", b"\x00\xffbinary",
    [1, None, [Decimal("1.0"), "x"]], {"a": 1, "b": [date(2024, 1, 1)], "c": {"d": None}},
    {"$decimal": "not a decimal, a map key"}, {"$map": 1}, {"$date": 1, "other": 2},
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_value_reads_back_as_it_was(value: Any) -> None:
    carried = json.loads(json.dumps(encode_value(value)))
    back = decode_value(carried)
    assert back == value and type(back) is type(value)


def test_values_json_holds_exactly_are_sent_as_they_are() -> None:
    assert encode_value([1, "a", None, True, 1.25, {"k": "v"}]) == [1, "a", None, True, 1.25, {"k": "v"}]
    assert encode_value(Decimal("1.20")) == {"$decimal": "1.20"}
    assert encode_value(datetime(2024, 1, 1, 0, 0, 1)) == {"$timestamp": "2024-01-01T00:00:01"}
    assert encode_value(b"\x01") == {"$binary": "AQ=="}


def test_rows_render_the_same_after_the_trip() -> None:
    rows = [tuple(VALUES[index:index + 4]) for index in range(0, 20, 4)]
    local = Result.table(("a", "b", "c", "d"), rows)
    carried = json.loads(json.dumps([[encode_value(v) for v in row] for row in local.rows]))
    remote = Result.table(local.columns, [tuple(decode_value(v) for v in row) for row in carried])
    for renderer in (TextRenderer(), JsonRenderer()):
        assert renderer.result("SELECT", remote) == renderer.result("SELECT", local)
