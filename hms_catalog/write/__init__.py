"""Writes through the catalog: jobs that write into a staging folder and commits that make their files
the table's in one swap (:mod:`~hms_catalog.write.commit`, :mod:`~hms_catalog.write.create`), apart from
reads (:mod:`hms_catalog.model`) and DDL (:mod:`hms_catalog.ddl`)."""
