"""Catalog properties are validated once, into typed config, with errors naming the key."""

from __future__ import annotations

import pytest

from hms_catalog.errors import ConfigurationError
from hms_catalog.properties import (
    CatalogConfig,
    MetastoreUri,
    is_secret_key,
    mask_properties,
    parse_uris,
    property_as_bool,
    property_as_seconds,
)

BASE = {"type": "hms", "hive.metastore.uris": "thrift://h1:9083"}


def test_defaults_and_unknown_keys_are_kept() -> None:
    config = CatalogConfig.from_properties({**BASE, "hadoop.security.authentication": "kerberos"})
    assert config.client.uris == (MetastoreUri("h1", 9083),)
    assert config.client.pool_size == 8
    assert config.client.socket_timeout == 60.0
    assert config.raw["hadoop.security.authentication"] == "kerberos"


def test_typed_values_are_parsed() -> None:
    config = CatalogConfig.from_properties(
        {
            **BASE,
            "hive.metastore.client.pool.size": "3",
            "hive.metastore.client.socket.timeout": "1500ms",
            "hive.metastore.failure.retries": "0",
            "hive.metastore.uri.backoff": "2m",
            "hive.metastore.partition.batch.size": "250",
        }
    )
    assert (config.client.pool_size, config.client.socket_timeout) == (3, 1.5)
    assert (config.client.retries, config.client.uri_backoff) == (0, 120.0)
    assert config.client.partition_batch_size == 250
    assert CatalogConfig.from_properties(BASE).client.partition_batch_size == 1000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("thrift://h1:9083,thrift://h2:9084", (MetastoreUri("h1", 9083), MetastoreUri("h2", 9084))),
        (" thrift://h1 , thrift://10.0.0.2:1 ", (MetastoreUri("h1", 9083), MetastoreUri("10.0.0.2", 1))),
        ("thrift://[::1]:9083", (MetastoreUri("::1", 9083),)),
    ],
)
def test_uri_lists(text: str, expected: tuple[MetastoreUri, ...]) -> None:
    assert parse_uris(text) == expected


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"hive.metastore.uris": "thrift://h:1"}, "property 'type' is required"),
        ({"type": "jdbc", "hive.metastore.uris": "thrift://h:1"}, "property 'type' must be 'hms' or 'filesystem', got 'jdbc'"),
        ({"type": "hms"}, "property 'hive.metastore.uris' is required"),
        ({"type": "hms", "hive.metastore.uris": ""}, "is empty"),
        ({"type": "hms", "hive.metastore.uris": "http://h:1"}, "entry 1 'http://h:1' is not of the form thrift://host:port"),
        ({"type": "hms", "hive.metastore.uris": "thrift://a:1,thrift://b:x"}, "entry 2 'thrift://b:x'"),
        ({"type": "hms", "hive.metastore.uris": "thrift://a:70000"}, "port 70000 out of range"),
        ({**BASE, "hive.metastore.client.pool.size": "eight"}, "'hive.metastore.client.pool.size' must be an integer, got 'eight'"),
        ({**BASE, "hive.metastore.client.pool.size": "0"}, "must be at least 1, got 0"),
        ({**BASE, "hive.metastore.client.socket.timeout": "soon"}, "'hive.metastore.client.socket.timeout' must be a duration"),
        ({**BASE, "hive.metastore.client.socket.timeout": "0"}, "must be greater than zero"),
        ({**BASE, "hive.metastore.partition.batch.size": "0"}, "'hive.metastore.partition.batch.size' must be at least 1, got 0"),
    ],
)
def test_bad_properties_name_the_key(properties: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        CatalogConfig.from_properties(properties)


def test_small_parsers() -> None:
    assert property_as_seconds({"k": "2h"}, "k", 0.0) == 7200.0
    assert property_as_seconds({}, "k", 5.0) == 5.0
    assert property_as_bool({"k": "TRUE"}, "k", False) is True
    with pytest.raises(ConfigurationError, match="'k' must be 'true' or 'false', got 'yes'"):
        property_as_bool({"k": "yes"}, "k", False)


def test_secrets_are_masked() -> None:
    assert is_secret_key("s3.secret.key") and is_secret_key("jdbc.Password")
    assert is_secret_key("fs.azure.account.OAuth2.Client.Credential")
    assert not is_secret_key("hive.metastore.uris")
    # A keytab's path is shown back (which file a catalog reads); what is in the keytab never is.
    assert not is_secret_key("hadoop.kerberos.keytab") and not is_secret_key("hive.metastore.client.keytab")
    masked = mask_properties({"a.token": "t0k", "hive.metastore.uris": "thrift://h:1"})
    assert masked == {"a.token": "******", "hive.metastore.uris": "thrift://h:1"}
