"""History targets (SCD type 2): every version of a key, bounded by watermarks.

A pure core on plain Python data (no Spark): ``options.HistoryOptions`` (the column names
and the tracked columns, validated at construction), ``core.apply`` (a key's stored
versions and the run's deliveries -> the versions to write and those they replace).
The Spark path will apply the same function per key group. Design: ``docs/history.md``.
"""
