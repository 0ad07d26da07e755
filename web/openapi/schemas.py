"""The shapes both APIs' documents share: a row, a value, an error, a page, each body.

`SCHEMAS` is the components of the document of every app (`web.openapi.paths`); one app's
own document (`web.openapi.tables`) takes the ones it needs and adds each table's bodies.
"""

from __future__ import annotations

from typing import Any

_ANY_VALUE: dict[str, Any] = {
    "type": ["string", "number", "integer", "boolean", "null"],
    "description": "A column's value: times in ISO 8601 (instants in UTC), numerics as text.",
}
_KEY: dict[str, Any] = {"type": ["integer", "string"], "description": "The row's key."}
_ROW: dict[str, Any] = {"type": "object", "additionalProperties": _ANY_VALUE}
_VALUES: dict[str, Any] = {
    "type": "object",
    "additionalProperties": _ANY_VALUE,
    "description": "Values by column; timestamptz as ISO 8601 with an offset, timestamp as a"
    " wall time on the venue's clock (its offset optional), dates YYYY-MM-DD, uuid as a UUID."
    " Left out of a create, a column with a manifest default is given it by the server."
    " Each table's columns, as the server checks them, are in its app's own document.",
}
_TIME = {"type": "string", "format": "date-time"}
_MANIFEST: dict[str, Any] = {
    "type": "object",
    "description": "The app's whole new manifest, as `adminium app add CONN FILE --replace "
    "--preview` reads it (its JSON Schema: docs/manifest.schema.json), named as the app of "
    "the path. The manifest check runs first: a refusal is MANIFEST_REFUSED with "
    "`details.refusals`. Only a manager of the app (or an admin) may send one.",
}

SCHEMAS: dict[str, Any] = {
    "Row": _ROW,
    "Error": {
        "type": "object",
        "required": ["error"],
        "additionalProperties": False,
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message", "details"],
                "additionalProperties": False,
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "details": {"type": "object"},
                },
            }
        },
    },
    "PublicError": {
        "type": "object",
        "required": ["error"],
        "additionalProperties": False,
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message", "params"],
                "additionalProperties": False,
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "params": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"from": _TIME, "at": _TIME},
                    },
                },
            }
        },
    },
    "Apps": {
        "type": "object",
        "required": ["apps"],
        "properties": {
            "apps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["connection", "app", "roles", "tables"],
                    "properties": {
                        "connection": {"type": "string"},
                        "app": {"type": "string"},
                        "roles": {"type": "array", "items": {"type": "string"}},
                        "tables": {"type": "array", "items": {"type": "string"}},
                    },
                },
            }
        },
    },
    "Page": {
        "type": "object",
        "required": ["rows", "next"],
        "additionalProperties": False,
        "properties": {
            "rows": {"type": "array", "items": {"$ref": "#/components/schemas/Row"}},
            "next": {
                "type": ["integer", "string", "null"],
                "description": "The key to ask `after` for the next page; null on the last.",
            },
        },
    },
    "RowAnswer": {
        "type": "object",
        "required": ["key", "row"],
        "additionalProperties": False,
        "properties": {"key": _KEY, "row": {"$ref": "#/components/schemas/Row"}},
    },
    "WriteAnswer": {
        "type": "object",
        "required": ["key", "row", "late"],
        "additionalProperties": False,
        "properties": {
            "key": _KEY,
            "row": {"$ref": "#/components/schemas/Row"},
            "late": {"type": "boolean", "description": "The move was late (a flag rule)."},
        },
    },
    "PublicRow": {
        "type": "object",
        "required": ["row", "moves"],
        "additionalProperties": False,
        "properties": {
            "row": {"$ref": "#/components/schemas/Row"},
            "moves": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The moves open to the guest now: listed from the row's "
                "state for `public`, inside their time, not turned away by a late rule.",
            },
        },
    },
    "Create": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"values": _VALUES},
    },
    "Update": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "values": _VALUES,
            "from": {"type": ["string", "null"], "description": "The state the writer saw."},
        },
    },
    "Move": {
        "type": "object",
        "required": ["to"],
        "additionalProperties": False,
        "properties": {
            "to": {"type": "string"},
            "from": {
                "type": ["string", "null"],
                "description": "The state the writer saw; required for an undo.",
            },
            "values": _VALUES,
        },
    },
    "PublicMove": {
        "type": "object",
        "required": ["to"],
        "additionalProperties": False,
        "properties": {"to": {"type": "string"}, "values": _VALUES},
    },
    "PreviewRequest": {
        "type": "object",
        "additionalProperties": False,
        "oneOf": [{"required": ["set"]}, {"required": ["manifest"]}],
        "description": "Exactly one of `set` (new values) and `manifest` (a new manifest).",
        "properties": {
            "set": {
                "type": "array",
                "minItems": 1,
                "maxItems": 50,
                "items": {
                    "type": "object",
                    "required": ["table", "column"],
                    "additionalProperties": False,
                    "properties": {
                        "table": {"type": "string", "minLength": 1, "maxLength": 200},
                        "column": {"type": "string", "minLength": 1, "maxLength": 200},
                        "value": {
                            "type": ["string", "number", "integer", "boolean", "null"],
                            "description": "The new value, as the column takes it "
                            "(HH:MM text for a kept time).",
                        },
                        "key": {
                            "type": ["integer", "string", "null"],
                            "description": "The row's key; leave it out for a table's one "
                            "(settings) row.",
                        },
                    },
                },
            },
            "manifest": _MANIFEST,
            "at": {
                **_TIME,
                "description": "The instant to read the change at; the clock's by default.",
            },
        },
    },
    "Preview": {
        "type": "object",
        "required": ["at", "horizon_hours", "read_to", "summary", "counts", "more", "changes"],
        "additionalProperties": False,
        "properties": {
            "at": _TIME,
            "horizon_hours": {
                "type": "integer",
                "description": "How far past `at` it read (192: 8 days); a moment moved"
                " past `read_to` is not counted.",
            },
            "read_to": {**_TIME, "description": "`at` plus `horizon_hours`, on the venue's clock."},
            "summary": {
                "type": "string",
                "description": "`3 rows due at once, 12 moments later, 0 earlier (read to"
                " Mon 5 Apr 10:30, 8 days)`.",
            },
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "more": {"type": "boolean", "description": "Some changes were left off the list."},
            "changes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": [
                        "kind",
                        "app",
                        "table",
                        "key",
                        "what",
                        "effect",
                        "old",
                        "new",
                        "old_read",
                        "new_read",
                    ],
                    "additionalProperties": False,
                    "properties": {
                        "kind": {"enum": ["timed", "hold", "reminder"]},
                        "app": {"type": "string"},
                        "table": {"type": "string"},
                        "key": {"type": "string"},
                        "what": {"type": "string"},
                        "effect": {
                            "enum": [
                                "due-at-once",
                                "set-aside",
                                "no-longer-due",
                                "still-due",
                                "later",
                                "earlier",
                                "no-time",
                                "new-time",
                            ]
                        },
                        "old": {"type": ["string", "null"], "format": "date-time"},
                        "new": {"type": ["string", "null"], "format": "date-time"},
                        "old_read": {"type": "string"},
                        "new_read": {"type": "string"},
                    },
                },
            },
        },
    },
}
