"""``python -m glue_incremental``: see ``glue_incremental.cli``."""

from glue_incremental.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
