"""Storage properties: every spelling users write reaches the same setting, bad values name their key,
and no credential shows where properties or settings are shown."""

from __future__ import annotations

import pytest

from hms_catalog.errors import ConfigurationError
from hms_catalog.properties import CatalogConfig, mask_properties
from hms_catalog.storage.engines import hadoop_settings, pyiceberg_properties
from hms_catalog.storage.properties import StorageConfig

_DORIS = {"s3.endpoint": "http://127.0.0.1:9000", "s3.region": "eu-west-1", "s3.access_key": "AKID",
          "s3.secret_key": "SECRET-1", "use_path_style": "true", "s3.connection.maximum": "20",
          "s3.connection.timeout": "2500"}


@pytest.mark.parametrize("props", [
    _DORIS,
    {"AWS_ENDPOINT": "http://127.0.0.1:9000", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY": "AKID",
     "AWS_SECRET_KEY": "SECRET-1", "use_path_style": "true", "AWS_MAX_CONNECTIONS": "20",
     "AWS_CONNECTION_TIMEOUT_MS": "2500"},
    {"fs.s3a.endpoint": "http://127.0.0.1:9000", "fs.s3a.endpoint.region": "eu-west-1", "fs.s3a.access.key": "AKID",
     "fs.s3a.secret.key": "SECRET-1", "fs.s3a.path.style.access": "true", "fs.s3a.connection.maximum": "20",
     "fs.s3a.connection.establish.timeout": "2500"},
], ids=["doris", "aws", "hadoop"])
def test_every_spelling_gives_the_same_s3_settings(props: dict[str, str]) -> None:
    s3 = StorageConfig.from_properties(props).s3
    assert (s3.endpoint_host, s3.scheme, s3.region, s3.access_key, s3.secret_key) == (
        "127.0.0.1:9000", "http", "eu-west-1", "AKID", "SECRET-1")
    assert s3.path_style and s3.max_connections == 20 and s3.connect_timeout == 2.5


def test_secrets_stay_out_of_repr_and_masked_properties() -> None:
    config = StorageConfig.from_properties({**_DORIS, "s3.session_token": "TOKEN-1",
                                            "fs.azure.account.key.acct.dfs.core.windows.net": "AZKEY-1",
                                            "adls.account-key": "AZKEY-2"})
    assert "SECRET-1" not in repr(config) and "TOKEN-1" not in repr(config) and "AZKEY" not in repr(config)
    shown = mask_properties({**_DORIS, "s3.session_token": "TOKEN-1", "AWS_SECRET_KEY": "S2",
                             "fs.s3a.secret.key": "S3", "fs.azure.account.key.acct.dfs.core.windows.net": "AZKEY-1",
                             "adls.account-key": "AZKEY-2", "hive.metastore.sasl.enabled": "true"})
    assert not {"SECRET-1", "TOKEN-1", "S2", "S3", "AZKEY-1", "AZKEY-2"} & set(shown.values())
    assert shown["hive.metastore.sasl.enabled"] == "true" and shown["s3.endpoint"] == "http://127.0.0.1:9000"


@pytest.mark.parametrize(("props", "named"), [
    ({"s3.access_key": "AKID"}, "s3.access_key"),
    ({"fs.s3a.secret.key": "SHOWN-NOWHERE"}, "fs.s3a.secret.key"),
    ({"s3.endpoint": "ftp://host:21"}, "s3.endpoint"),
    ({"s3.endpoint": "http://host:notaport"}, "s3.endpoint"),
    ({"use_path_style": "yes"}, "use_path_style"),
    ({"s3.connection.maximum": "0"}, "s3.connection.maximum"),
])
def test_bad_values_name_their_key(props: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigurationError, match=named.replace(".", r"\.")) as raised:
        CatalogConfig.from_properties({"type": "hms", "hive.metastore.uris": "thrift://h:9083", **props})
    assert "SHOWN-NOWHERE" not in str(raised.value)


def test_s3_compatible_stores_use_their_own_prefix_then_s3() -> None:
    config = StorageConfig.from_properties({**_DORIS, "oss.endpoint": "https://oss-cn-hangzhou.aliyuncs.com",
                                            "oss.access_key": "OSSID", "oss.secret_key": "OSSKEY"})
    assert config.s3_for("oss").endpoint_host == "oss-cn-hangzhou.aliyuncs.com"
    assert config.s3_for("oss").access_key == "OSSID" and config.s3_for("oss").region == "eu-west-1"
    assert config.s3_for("cosn") is config.s3 and config.s3_for("s3a") is config.s3


def test_engines_get_the_settings_in_their_own_names() -> None:
    config = StorageConfig.from_properties({**_DORIS, "dfs.nameservices": "ns1", "hadoop.username": "hive"})
    iceberg = pyiceberg_properties(config, _DORIS)
    assert iceberg["s3.endpoint"] == "http://127.0.0.1:9000" and iceberg["s3.access-key-id"] == "AKID"
    assert iceberg["s3.secret-access-key"] == "SECRET-1" and iceberg["s3.path-style-access"] == "true"
    shown = hadoop_settings(config, secrets=False)
    assert shown["fs.s3a.endpoint"] == "http://127.0.0.1:9000" and shown["fs.s3a.path.style.access"] == "true"
    assert shown["dfs.nameservices"] == "ns1" and shown["fs.s3.impl"].endswith("S3AFileSystem")
    assert not any("key" in key or "token" in key for key in shown)
    vended = hadoop_settings(config, secrets=True)
    assert vended["fs.s3a.access.key"] == "AKID" and vended["fs.s3a.secret.key"] == "SECRET-1"
