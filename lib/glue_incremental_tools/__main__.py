"""``python -m glue_incremental_tools``: see ``glue_incremental_tools.cli``."""

from glue_incremental_tools.cli import main

raise SystemExit(main())
