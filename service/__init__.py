"""The catalog service (``hms-catalog serve``): one process holds every catalog of a home, and every
client shares its pools, caches, event followers, versions and change log over a REST API.

A front end like the CLI: it depends on ``hms_catalog`` (and the planner, for split plans), and nothing
depends on it. The CLI finds the ``serve`` command through the ``hms_catalog.commands`` entry point.
"""

from __future__ import annotations

from service.app import create_app

__all__ = ["create_app"]
