"""RQ glue: the cron registration and the per-connection sweep job."""
