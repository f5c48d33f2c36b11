"""Secrets never reach a log line."""

from __future__ import annotations

import io
import logging

from hms_catalog._logging import SecretMaskingFilter
from hms_catalog.masking import mask_text


def test_mask_text_masks_secret_pairs_only() -> None:
    text = "CREATE CATALOG c PROPERTIES ('s3.secret.key'='abc', 'hive.metastore.uris'='thrift://h:1') password=hunter2"
    masked = mask_text(text)
    assert "abc" not in masked and "hunter2" not in masked
    assert "'s3.secret.key'='******'" in masked and "password=******" in masked
    assert "'hive.metastore.uris'='thrift://h:1'" in masked


def test_the_filter_masks_formatted_records() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SecretMaskingFilter())
    logger = logging.getLogger("hms_catalog.test_masking")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("properties: %s", {"oauth.token": "s3cr3t", "type": "hms"})
    finally:
        logger.removeHandler(handler)
    assert "s3cr3t" not in stream.getvalue()
    assert "'oauth.token': '******'" in stream.getvalue()
