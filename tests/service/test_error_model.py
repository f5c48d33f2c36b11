"""One error model: every class of the one hierarchy has a kind, and every protocol answers every kind from its
own table, so the same failure is the same answer on the REST API, Iceberg REST and the thrift endpoint."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import ErrorKind, HmsCatalogError, kind_of
from service.errors import STATUS_OF_KIND, status_of
from service.iceberg_rest.errors import ICEBERG_OF_KIND, IcebergError, iceberg_error
from service.thrift.errors import THRIFT_OF_KIND, metastore_exception

_PACKAGES = ("hms_catalog", "planner", "service", "spark_connector")


def _every_error_class() -> list[type[HmsCatalogError]]:
    """Every subclass of HmsCatalogError in the project's packages (each module imported, none run as a script)."""
    for package_name in _PACKAGES:
        package = importlib.import_module(package_name)
        for module in pkgutil.walk_packages(package.__path__, f"{package_name}."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    found: list[type[HmsCatalogError]] = []
    pending: list[type[HmsCatalogError]] = [HmsCatalogError]
    while pending:
        current = pending.pop()
        for subclass in current.__subclasses__():
            if subclass.__module__.split(".")[0] in _PACKAGES and subclass not in found:
                found.append(subclass)
                pending.append(subclass)
    return sorted(found, key=lambda each: f"{each.__module__}.{each.__qualname__}")


_CLASSES = _every_error_class()


def _own_kind(cls: type[HmsCatalogError]) -> ErrorKind | None:
    """The kind ``cls`` declares or takes from an ancestor below the root (never the root's default)."""
    for ancestor in cls.__mro__:
        if ancestor is HmsCatalogError:
            return None
        if "error_kind" in vars(ancestor):
            return vars(ancestor)["error_kind"]
    return None


def _instance(cls: type[HmsCatalogError]) -> HmsCatalogError:
    """An instance of ``cls`` with a message, whatever its constructor takes (the kind is the class's)."""
    error = cls.__new__(cls)
    Exception.__init__(error, f"a {cls.__name__}")
    return error


def test_the_hierarchy_is_found_whole() -> None:
    names = {cls.__name__ for cls in _CLASSES}
    assert {"NotFoundError", "StorageUnavailableError", "ForbiddenError", "IcebergError", "EndpointRefusal",
            "SyncDdlTimeoutError", "FileChangedError", "MetastoreAlreadyRunning"} <= names


@pytest.mark.parametrize("cls", _CLASSES, ids=lambda cls: cls.__qualname__)
def test_every_class_has_a_kind_of_its_own(cls: type[HmsCatalogError]) -> None:
    kind = _own_kind(cls)
    assert isinstance(kind, ErrorKind), f"{cls.__module__}.{cls.__qualname__} declares no error_kind"
    assert kind_of(_instance(cls)) is kind


@pytest.mark.parametrize("table", [STATUS_OF_KIND, ICEBERG_OF_KIND, THRIFT_OF_KIND], ids=["rest", "iceberg-rest", "thrift"])
def test_every_protocol_maps_every_kind(table: dict[ErrorKind, object]) -> None:
    assert set(table) == set(ErrorKind)


@pytest.mark.parametrize("cls", [cls for cls in _CLASSES if cls is not IcebergError], ids=lambda cls: cls.__qualname__)
def test_the_http_protocols_agree_on_what_a_client_may_do(cls: type[HmsCatalogError]) -> None:
    """The same class-level kind gives the same class of answer: a status each HTTP protocol agrees on wherever the
    Iceberg spec has no answer of its own (a requirement that no longer holds is its 409 CommitFailedException)."""
    error = _instance(cls)
    rest = status_of(error)
    iceberg, iceberg_type, _ = iceberg_error(error)
    kind = kind_of(error)
    assert rest == STATUS_OF_KIND[kind]
    if kind is ErrorKind.STALE:
        assert (rest, iceberg, iceberg_type) == (412, 409, "CommitFailedException")
    else:
        assert iceberg == rest, (cls, rest, iceberg)


@pytest.mark.parametrize(("status", "kind"), [(400, ErrorKind.INVALID), (404, ErrorKind.NOT_FOUND), (406, ErrorKind.UNSUPPORTED),
                                              (409, ErrorKind.CONFLICT), (503, ErrorKind.UNAVAILABLE)])
def test_iceberg_s_own_refusals_take_the_kind_of_their_status(status: int, kind: ErrorKind) -> None:
    refusal = IcebergError(status, "SomeException", "refused")
    assert kind_of(refusal) is kind and iceberg_error(refusal) == (status, "SomeException", "refused")


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_unreachable_is_503_and_never_a_4xx_or_500(kind: ErrorKind) -> None:
    rest, (iceberg, iceberg_type) = STATUS_OF_KIND[kind], ICEBERG_OF_KIND[kind]
    if kind is ErrorKind.UNAVAILABLE:
        assert (rest, iceberg, iceberg_type) == (503, 503, "ServiceUnavailableException")
    if kind in (ErrorKind.INVALID, ErrorKind.UNSUPPORTED):
        assert (rest, iceberg, iceberg_type) == (400, 400, "BadRequestException")


@pytest.mark.parametrize(("cls", "method", "answer"), [
    ("NotFoundError", "get_table", ttypes.NoSuchObjectException),
    ("NotFoundError", "get_all_tables", ttypes.MetaException),  # declares no NoSuchObjectException
    ("AlreadyExistsError", "create_table", ttypes.AlreadyExistsException),
    ("ConfigurationError", "alter_table", ttypes.InvalidOperationException),
    ("ConfigurationError", "create_table", ttypes.InvalidObjectException),
    ("ForbiddenError", "create_table", ttypes.MetaException),
    ("StorageUnavailableError", "get_table", ttypes.MetaException),
    ("VersionMismatchError", "alter_table", ttypes.MetaException),
])
def test_thrift_answers_with_the_first_exception_the_call_declares(cls: str, method: str, answer: type) -> None:
    error = _instance(next(each for each in _CLASSES if each.__name__ == cls))
    made = metastore_exception(method, error)
    assert type(made) is answer and made.message == f"a {cls}"


def test_an_exception_that_is_no_catalog_error_is_internal() -> None:
    assert kind_of(KeyError("x")) is ErrorKind.INTERNAL
    assert status_of(KeyError("x")) == 500
    assert iceberg_error(KeyError("x"))[:2] == (500, "InternalServerError")
    assert type(metastore_exception("get_table", KeyError("x"))) is ttypes.MetaException
