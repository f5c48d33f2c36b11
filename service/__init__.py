"""The catalog service (``hms-catalog serve``): one process holds every catalog of a home, and every
client shares its pools, caches, event followers, versions and change log over a REST API.

A front end like the CLI: it depends on ``hms_catalog`` (and the planner, for split plans), and nothing
depends on it. The CLI finds the ``serve`` command through the ``hms_catalog.commands`` entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    """``create_app`` on first use: the CLI imports ``service.main`` for the ``serve`` command's arguments on
    every run, and loading FastAPI and every route is most of a plain CLI run's start-up otherwise."""
    if name == "create_app":
        from service.app import create_app

        return create_app
    raise AttributeError(f"module 'service' has no attribute {name!r}")
