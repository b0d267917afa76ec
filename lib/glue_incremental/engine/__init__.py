"""The run engine the load, the join and custom scripts share: one behaviour for all three.

``job`` (``CustomJob``: recover, plan, stage, publish, one commit of every slot, the
summary), ``declarations`` (``Dataset``, ``Reference``, ``Output``), ``planned`` (what the
engine asks of a planned source), ``datasets``/``sides``/``upstream``/``s3_side``/
``side_partitions`` (planning a partitioned dataset: its increment, affected partitions and
the upstream rule), ``errors``. Design: ``docs/custom-jobs.md`` ("One engine").
"""
