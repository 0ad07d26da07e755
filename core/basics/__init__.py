"""The words every package of core speaks: the refusals and their codes (`errors`), who
writes (`actors`), what a write tells once it commits (`events`), rows as JSON
(`json_rows`) and the values a column may hold (`values`). Imports nothing of core."""
