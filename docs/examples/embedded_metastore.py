"""The embedded metastore as a context manager, as the test suite starts it (needs Java 17)."""

from hms_catalog import EmbeddedMetastore

with EmbeddedMetastore("/tmp/hms") as metastore:  # a free port unless port= is given
    print(metastore.uri)  # thrift://127.0.0.1:NNNNN
