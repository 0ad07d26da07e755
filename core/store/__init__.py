"""A connection's database: the app's tables built from its manifest and installed with the
indexes the clock wants (`install`), rows read and locked (`store`), Adminium's own tables,
each defined once below every user (`schema`), the audit entry a write leaves with its row,
the sample marks, the set-aside records and the clock's refused attempts kept
(`refused_log`)."""
