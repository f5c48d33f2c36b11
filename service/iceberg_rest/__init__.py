"""The Iceberg REST catalog protocol at ``/iceberg`` on the service (Iceberg's ``rest-catalog-open-api.yaml``).

Thin routes (:mod:`.router`, :mod:`.namespaces`, :mod:`.tables`, :mod:`.commits`) over the catalogs the
service already serves: namespaces are a metastore's databases, tables its Iceberg tables, and every change
is a catalog event (one version, source ``iceberg-rest``, caches dropped, an audit line) made with pyiceberg's
own HiveCatalog. Nothing is imported here: :mod:`service.middleware` imports :mod:`.auth` and :mod:`.errors`,
which must not pull the routes (and through them the middleware) in.
"""

from __future__ import annotations

__all__: list[str] = []
