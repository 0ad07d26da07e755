"""Sample data: the sample files an app ships, their rows added and removed as sample, and
what adding them would set off at once."""
