"""Whether an app's manifest and the connection's tables agree: the one comparison (Alembic's
autogenerate comparison for tables, columns and types; ours for states, CHECKs, enum values,
lengths, keys, row-level security and the indexes the clock wants), each disagreement one
sentence with the SQL that fixes it (`compare`), the plan made of those fixes and how it is
applied to the tables Adminium made (`plan`), the fit of a manifest type to a PostgreSQL type
(`fit`), what the catalogue says (`catalogue`), its fingerprint, and what a connection's
database user may do (`privileges`)."""
