"""The one masking rule, on the shapes statements and messages take."""

from __future__ import annotations

from hms_catalog.masking import mask_excerpt, mask_text


def test_quoted_keys_and_values_of_every_kind() -> None:
    text = """PROPERTIES ("db.password" = "p1", 'oauth.token'='p''2', `s3.secret.key`='p\\'3', password: p4)"""
    masked = mask_text(text)
    for fragment in ("p1", "p''2", "2'", "p\\'3", "3'", "p4"):
        assert fragment not in masked, masked
    assert masked.count("******") == 4


def test_an_unterminated_secret_is_masked_to_the_end() -> None:
    assert mask_text("'hive.metastore.password'='abc def") == "'hive.metastore.password'='******"


def test_other_values_are_left_alone() -> None:
    text = "('type'='hms', 'hive.metastore.uris'='thrift://h:1', 'keys'='a=b')"
    assert mask_text(text) == text


def test_the_caret_follows_the_token_after_a_masked_value() -> None:
    source = "('password'='a-long-secret' 'next'='1')"
    column = source.index("'next'")
    masked = mask_excerpt(f"{source}\n{' ' * column}^")
    line, caret = masked.split("\n")
    assert "a-long-secret" not in line
    assert line[caret.index("^"):].startswith("'next'")


def test_a_caret_inside_a_secret_moves_to_its_start() -> None:
    source = "('password'='a-long-secret"
    masked = mask_excerpt(f"{source}\n{' ' * source.index('long')}^")
    line, caret = masked.split("\n")
    assert caret.index("^") == line.index("'******")
