"""The domain of timed moves. Imports no flask, redis or rq."""
