"""A manifest as the control plane takes it: refused, with the check's sentences, unless the
manifest check passes."""

from __future__ import annotations

from typing import Any

from core.manifest.check import check_manifest
from services.errors import ManifestRefused


def refuse_failed_check(manifest: dict[str, Any]) -> None:
    """Refuse a manifest the manifest check refuses, with its sentences (ManifestRefused)."""
    refusals = check_manifest(manifest)
    if refusals:
        raise ManifestRefused(
            "the manifest check refused the app: "
            + "; ".join(f"{r.where}: {r.sentence}" for r in refusals),
            {"refusals": [{"where": r.where, "sentence": r.sentence} for r in refusals]},
        )
