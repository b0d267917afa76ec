"""Partition directory names, typed partition values and the predicates built from them."""
