-- On a production Hive metastore's PostgreSQL database, as its owner, outside a transaction (psql runs each
-- statement on its own): builds the index without stopping the metastore's writes.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "PARTITION_KEY_VALS_BY_VALUE" ON "PARTITION_KEY_VALS" ("INTEGER_IDX", "PART_KEY_VAL");
