"""What a move sets off in its own transaction besides its row: the linked rows its effects
move (through the pipeline, handed in as `effects.MoveLinked`), the totals it touches, the
limits it must keep and the webhook deliveries its automations queue."""
