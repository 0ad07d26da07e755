"""The write pipeline: one write, one transaction, every step in order, for a writer's
change and the clock's timed move alike; it judges the row, makes the write, and settles
what the write sets off before it commits."""
