"""moto's S3 server (``python -m moto.server``'s own ``main``) with its per-request backend lookup remembered.

moto's dispatcher finds the backend for every request by listing its own package folder (an ``isdir`` for each of
its ~150 service folders) and then trying every service's URL patterns in turn; in a profile of many small writes
that took about a third of the server's CPU. The answer depends only on the request's host, so it is kept per host
(the folder listing is used nowhere else): the server answers the same, sooner. Run as a script (its arguments are
moto.server's).
"""

from __future__ import annotations

import functools
from typing import Any

from moto.moto_server import werkzeug_app
from moto.server import main

_lookup = werkzeug_app.DomainDispatcherApplication.get_backend_for_host


@functools.lru_cache(maxsize=256)
def _remembered(dispatcher: Any, host: str | None) -> Any:
    return _lookup(dispatcher, host)


werkzeug_app.DomainDispatcherApplication.get_backend_for_host = _remembered  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
