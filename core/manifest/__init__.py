"""The app manifest: its model (`model`, with the parts it is made of in `refs`,
`ledger_model`, `outbox_model` and `automation_model`), the check that refuses a manifest
with the fix named (`check` and its `*_rules`), its JSON Schema (`schema`), its email
templates' sandbox (`templates`) and the small questions the runtime asks of a manifest
(`lookup`). Below it only `basics`: it reads no database and no clock."""
