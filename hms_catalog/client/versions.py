"""Which metastore versions answer which thrift calls, and the forms one question can be asked in.

Hive 2.3 added request-object forms of the table calls (``get_table_req``,
``get_table_objects_by_name_req``); Hive 4.0 added more (partitions by names and by filter, and
``get_partitions_with_specs``, which fills only the fields asked for) and Hive 4.0.1 removed the
oldest table calls (HIVE-26537). A metastore that does not know a method answers with
``TApplicationException`` ``UNKNOWN_METHOD`` ("Invalid method name: '...'") after reading the whole
request, so the connection stays usable and the next form can be asked on it at once.

A question is a list of :class:`CallForm`, preferred first; :meth:`HmsClientPool.call_forms` tries them
in order and remembers, per metastore URI, each method that URI refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from thrift.Thrift import TApplicationException

__all__ = ["ANSWERED_BY", "CallForm", "is_unknown_method", "unsupported_message"]


def _unchanged(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class CallForm:
    """One way to ask a question: a thrift method, its arguments, and how to read its answer."""

    method: str
    args: tuple[Any, ...] = ()
    read: Callable[[Any], Any] = field(default=_unchanged, compare=False)


# The releases that answer each method the project calls; checked against each release's
# hive_metastore.thrift (Hive 4's for the removals and the Hive 4.0 additions).
ANSWERED_BY: Mapping[str, str] = MappingProxyType({
    "get_all_databases": "every Hive release",
    "get_databases": "every Hive release",
    "get_database": "every Hive release",
    "get_all_tables": "every Hive release",
    "get_table": "Hive releases before 4.0.1",
    "get_table_req": "Hive 2.3 and later",
    "get_table_objects_by_name": "Hive releases before 4.0.1",
    "get_table_objects_by_name_req": "Hive 2.3 and later",
    "get_partition_names": "every Hive release",
    "get_partition_names_ps": "every Hive release",
    "get_partitions_by_names": "every Hive release to date",
    "get_partitions_by_names_req": "Hive 4.0 and later",
    "get_partitions_by_filter": "every Hive release to date",
    "get_partitions_by_filter_req": "Hive 4.0 and later",
    "get_partitions_with_specs": "Hive 4.0 and later",
    "get_table_statistics_req": "Hive 0.13 and later",
    "get_partitions_statistics_req": "Hive 0.13 and later",
    "get_current_notificationEventId": "Hive 2.0 and later",
    "get_next_notification": "Hive 2.0 and later",
})


def is_unknown_method(error: BaseException) -> bool:
    """Whether ``error`` is a metastore saying it has no such method (as opposed to failing in one)."""
    return isinstance(error, TApplicationException) and error.type in (
        TApplicationException.UNKNOWN_METHOD,
        TApplicationException.WRONG_METHOD_NAME,
    )


def unsupported_message(uri: object, forms: Sequence[CallForm], said: str | None) -> str:
    """The error for a metastore that refused every form: what was tried, which releases answer each."""
    tried = ", ".join(f"{form.method} ({ANSWERED_BY.get(form.method, 'unknown releases')})" for form in forms)
    answer = f"; it answered: {said}" if said else ""
    if len(forms) == 1:
        return f"the metastore at {uri} does not answer {tried}{answer}"
    return f"the metastore at {uri} answers none of {tried}{answer}"
