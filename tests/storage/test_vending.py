"""Vending storage credentials: the properties checked when a catalog is defined, the session policy and the STS
endpoint as pure functions, and the vendor against moto's STS and IAM (the server the suite already runs)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hms_catalog.errors import ConfigurationError, ErrorKind, StorageError, VendingDisabledError, kind_of
from hms_catalog.properties import CatalogConfig
from hms_catalog.storage.engines import iceberg_client_properties, vended_hadoop_settings
from hms_catalog.storage.properties import StorageConfig, VendingConfig, VendingMode
from hms_catalog.storage.vending import CredentialVendor, session_policy, sts_endpoint
from tests.support.s3 import REGION, S3Server

ROLE = "arn:aws:iam::123456789012:role/lake-reader"


def test_the_mode_defaults_to_role_where_a_role_is_set_and_none_otherwise() -> None:
    assert VendingConfig.from_properties({}).mode is VendingMode.NONE
    assert VendingConfig.from_properties({"s3.access_key": "AKIA", "s3.secret_key": "x"}).mode is VendingMode.NONE
    role = VendingConfig.from_properties({"s3.role_arn": ROLE, "s3.external_id": "ext-1"})
    assert (role.mode, role.role_arn, role.external_id, role.duration) == (VendingMode.ROLE, ROLE, "ext-1", 900)
    assert VendingConfig.from_properties({"storage.vending": "CATALOG_KEY"}).mode is VendingMode.CATALOG_KEY
    assert VendingConfig.from_properties({"s3.role_arn": ROLE, "storage.vending": "none"}).mode is VendingMode.NONE
    assert VendingConfig.from_properties({"s3.role_arn": ROLE, "storage.vending.duration": "3600"}).duration == 3600


@pytest.mark.parametrize(("properties", "message"), [
    ({"storage.vending": "always"}, r"'storage.vending' must be one of 'none', 'role', 'catalog_key', got 'always'"),
    ({"storage.vending": "role"}, r"'storage.vending' is 'role', but no role is set: set 's3.role_arn'"),
    ({"s3.role_arn": "lake-reader"}, r"'s3.role_arn' must be a role's ARN .* got 'lake-reader'"),
    ({"s3.role_arn": ROLE, "s3.external_id": "has space"}, r"'s3.external_id' must be .* got 'has space'"),
    ({"s3.role_arn": ROLE, "storage.vending.duration": "600"}, r"'storage.vending.duration' must be at least 900, got 600"),
    ({"s3.role_arn": ROLE, "storage.vending.duration": "50000"}, r"'storage.vending.duration' must be at most 43200 .* got 50000"),
    ({"s3.role_arn": ROLE, "storage.vending.duration": "15m"}, r"'storage.vending.duration' must be an integer, got '15m'"),
    ({"s3.role_arn": ROLE, "s3.sts_endpoint": "ftp://sts.example"}, r"'s3.sts_endpoint' must be an http:// or https://"),
])
def test_a_bad_vending_property_is_refused_naming_it_and_its_value(properties: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        VendingConfig.from_properties(properties)
    with pytest.raises(ConfigurationError, match=message):  # at CREATE CATALOG, with every other property
        CatalogConfig.from_properties({"type": "hms", "hive.metastore.uris": "thrift://127.0.0.1:9083", **properties})


def _statements(policy: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {statement["Sid"]: statement for statement in policy["Statement"]}


def test_a_read_session_gets_and_lists_the_table_only() -> None:
    statements = _statements(session_policy("s3a://lake/sales.db/orders/", write=False))
    assert statements["TheTableObjects"] == {"Sid": "TheTableObjects", "Effect": "Allow",
                                             "Action": ["s3:GetObject", "s3:GetObjectVersion"],
                                             "Resource": ["arn:aws:s3:::lake/sales.db/orders/*"]}
    # orders/ and below: never orders2/ beside it, which a bare 'orders' prefix would list
    assert statements["ListTheTable"]["Condition"] == {"StringLike": {"s3:prefix": ["sales.db/orders/", "sales.db/orders/*"]}}
    assert statements["ListTheTable"]["Resource"] == ["arn:aws:s3:::lake"]
    assert not any("Put" in action or "Delete" in action for each in statements.values() for action in each["Action"])


def test_a_write_session_also_puts_and_deletes_there() -> None:
    objects = _statements(session_policy("s3://lake/t", write=True))["TheTableObjects"]
    assert {"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"} <= set(objects["Action"])
    assert objects["Resource"] == ["arn:aws:s3:::lake/t/*"]


def test_a_keys_own_wildcards_are_literal_and_the_partition_is_the_roles() -> None:
    statements = _statements(session_policy("s3://lake/odd*name?", write=False, partition="aws-cn"))
    assert statements["TheTableObjects"]["Resource"] == ["arn:aws-cn:s3:::lake/odd${*}name${?}/*"]
    root = _statements(session_policy("s3://lake", write=False))
    assert root["TheTableObjects"]["Resource"] == ["arn:aws:s3:::lake/*"] and "Condition" not in root["ListTheTable"]


def test_sessions_are_vended_for_s3_locations_only() -> None:
    with pytest.raises(StorageError, match="S3 locations"):
        session_policy("hdfs://nn/warehouse/t", write=False)


def test_the_sts_endpoint_is_the_given_one_else_the_stores_else_the_regions() -> None:
    def endpoint(**properties: str) -> str:
        return sts_endpoint(StorageConfig.from_properties({"s3.role_arn": ROLE, **properties}))

    assert endpoint(**{"s3.sts_endpoint": "https://sts.internal:8443"}) == "https://sts.internal:8443"
    assert endpoint(**{"s3.endpoint": "http://minio.lan:9000/", "s3.sts_endpoint": "sts.lan:9001"}) == "http://sts.lan:9001"
    assert endpoint(**{"s3.endpoint": "http://minio.lan:9000/some/path"}) == "http://minio.lan:9000"
    assert endpoint(**{"s3.endpoint": "minio.lan:9000", "s3.use_ssl": "false"}) == "http://minio.lan:9000"
    assert endpoint(**{"s3.region": "eu-west-3"}) == "https://sts.eu-west-3.amazonaws.com"
    assert endpoint(**{"s3.region": "cn-north-1"}) == "https://sts.cn-north-1.amazonaws.com.cn"
    assert endpoint() == "https://sts.us-east-1.amazonaws.com"


def test_a_catalog_that_vends_nothing_refuses_saying_so() -> None:
    vendor = CredentialVendor(StorageConfig.from_properties({"s3.access_key": "AKIA", "s3.secret_key": "catalog-secret"}),
                              name="lake")
    with pytest.raises(VendingDisabledError, match="vending is off for catalog 'lake'") as refused:
        vendor.vend("s3://lake/t", write=False, requester="ro")
    assert kind_of(refused.value) is ErrorKind.FORBIDDEN and "catalog-secret" not in str(refused.value)


def test_catalog_key_vends_the_key_only_where_asked_for_by_name() -> None:
    config = StorageConfig.from_properties({"s3.access_key": "AKIACAT", "s3.secret_key": "catalog-secret",
                                            "s3.endpoint": "http://minio.lan:9000", "use_path_style": "true",
                                            "storage.vending": "catalog_key"})
    vended = CredentialVendor(config, name="lake").vend("s3://lake/t", write=False, requester="ro")
    assert vended is not None and (vended.access_key, vended.secret_key, vended.session_token) == ("AKIACAT", "catalog-secret", None)
    assert "catalog-secret" not in repr(vended)
    assert iceberg_client_properties(config, vended) == {
        "s3.endpoint": "http://minio.lan:9000", "s3.region": "us-east-1", "client.region": "us-east-1",
        "s3.path-style-access": "true", "s3.force-virtual-addressing": "false", "s3.access-key-id": "AKIACAT",
        "s3.secret-access-key": "catalog-secret"}


# Against moto's STS: the role is assumed with the catalog's key, and refused when its trust policy says no. --------


@pytest.fixture(scope="module")
def assumable(s3_server: S3Server) -> str:
    """A role the tests' IAM user may assume when it gives the external id ``ext-ok``."""
    import boto3

    iam = boto3.client("iam", endpoint_url=s3_server.endpoint, region_name=REGION,
                       aws_access_key_id=s3_server.access_key, aws_secret_access_key=s3_server.secret_key)
    user = iam.get_user(UserName="hms-catalog-tests")["User"]["Arn"]
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": user}, "Action": "sts:AssumeRole",
                                                     "Condition": {"StringEquals": {"sts:ExternalId": "ext-ok"}}}]}
    arn: str = iam.create_role(RoleName="hms-vendor-unit", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    return arn


def _vendor(s3_server: S3Server, role: str, external_id: str) -> CredentialVendor:
    properties = {**s3_server.catalog_properties(), "s3.role_arn": role, "s3.external_id": external_id}
    return CredentialVendor(StorageConfig.from_properties(properties), name="lake")


def test_a_session_is_assumed_at_the_stores_endpoint_and_kept(s3_server: S3Server, assumable: str) -> None:
    vendor = _vendor(s3_server, assumable, "ext-ok")
    first = vendor.vend("s3a://lake/db/t/", write=False, requester="ro")
    assert first is not None and first.access_key.startswith("ASIA") and first.session_token
    assert first.access_key != s3_server.access_key and first.expiration is not None
    assert vendor.vend("s3a://lake/db/t", write=False, requester="ro") is first  # kept for half its life
    assert vendor.vend("s3a://lake/db/t", write=True, requester="ro") is not first  # another scope, another session
    assert vendor.vend("hdfs://nn/db/t", write=False, requester="ro") is None  # a role reaches S3 only
    settings = vended_hadoop_settings(vendor.config, first)
    assert settings["fs.s3a.access.key"] == first.access_key and settings["fs.s3a.session.token"] == first.session_token
    assert s3_server.secret_key not in settings.values()


def test_a_refused_assume_role_is_a_storage_error_naming_the_role(s3_server: S3Server, assumable: str) -> None:
    with pytest.raises(StorageError, match=r"catalog 'lake': STS at http://127\.0\.0\.1:\d+ refused to assume role "
                                           r".*hms-vendor-unit: AccessDenied") as refused:
        _vendor(s3_server, assumable, "ext-wrong").vend("s3://lake/t", write=False, requester="ro")
    assert kind_of(refused.value) is ErrorKind.UPSTREAM_REFUSED
    assert s3_server.secret_key not in str(refused.value)
