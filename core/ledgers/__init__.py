"""Accounts, postings and holds: a write's postings taken in its own transaction, a
balance kept within its bounds, a hold kept until its heldUntil and given back by the
clock, the ledger's entries and an account's statement."""
