import dagster as dg

# One dynamic partition per clip; keys encode dataset, video and window (epic_sounds__P09_08__45-75).
# A two-dimensional dataset x clip partitioning would create every combination, most of them invalid.
clip_partitions = dg.DynamicPartitionsDefinition(name="clips")
