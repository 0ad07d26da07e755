"""Emails: the messages a write queues in its transaction, the reminders the minute queues
before a moment, and their words rendered from the row."""
