"""What the clock will do differently after a change of manifest or settings, read at a
given now and writing nothing: the timed moves, holds and reminders on each side."""
