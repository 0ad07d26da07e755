"""The minute's sweep of a connection: the rows and holds due (found through indexes), the
fence that keeps it one at a time, the timed moves made and the refused set aside, the
holds given back, its record and health, the next due moment, and what the screens read
of it (pending moves, holds, fixes)."""
