"""An Iceberg table as a target: one snapshot per run, side tables, schema, maintenance."""
