"""The web console at ``/ui``: a front end of the REST API that runs in the browser.

The Python side only serves the console's files (HTML, CSS, JavaScript modules), ahead of the token
gate: they hold no data, and the sign-in page must load before the user has typed a token. Everything
the console shows it asks the API for, from the browser, with the token the user typed.
"""

from __future__ import annotations

from service.console._files import CONSOLE_PREFIX, Console, console_files

__all__ = ["CONSOLE_PREFIX", "Console", "console_files"]
