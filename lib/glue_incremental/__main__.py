"""``python -m glue_incremental``: forwards to ``glue_incremental_tools.cli``.

This file is local-only: the deployed library zip leaves it out, so nothing Glue
runs imports the tools package.
"""

import importlib

if __name__ == "__main__":
    raise SystemExit(importlib.import_module("glue_incremental_tools.cli").main())
