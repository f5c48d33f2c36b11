from __future__ import annotations

import sys

from hms_catalog.cli.main import main

sys.exit(main())
