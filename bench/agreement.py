"""What the comparison of a manifest with its tables costs, and what its fingerprint adds to
the sweep's opening statement (the statement every minute's sweep sends first).

On a fresh database holding the three example apps (15 tables), one JSON object per line:

- open: the sweep's opening statement (fence taken, record opened) and its closing one,
  turn about without and with the fingerprints of the three apps' tables (`catalogue`):
  median and p95 ms of the opening statement, each side in the same run (`--rounds`);
- fingerprint: one app's fingerprint read alone (median ms);
- compare: the whole comparison of one app (`core.agreement.compare.compare_tables`:
  Alembic's reflection, ours), median ms over `--compares` runs — what `app add`, `app diff`
  and a sweep that found the fingerprint moved pay.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python bench/agreement.py [--rounds 400] [--compares 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import database, emit  # noqa: E402
from core.agreement.catalogue import qualified, read_fingerprint  # noqa: E402
from core.agreement.compare import compare_tables  # noqa: E402
from core.manifest.model import App, load_app  # noqa: E402
from core.store.install import install_app  # noqa: E402
from core.store.store import make_engine  # noqa: E402
from core.sweep.fence import Fence  # noqa: E402
from core.sweep.records import close_fenced, open_fenced  # noqa: E402
from tests.integration.pipeline_fixtures import at  # noqa: E402

NOW = at("2026-05-04 12:00")


def examples() -> list[App]:
    """The three example apps, each in a schema of its own (as the demo keeps them)."""
    found = []
    for name in ("takeaway", "tickets", "hotel"):
        manifest = json.loads((ROOT / "examples" / f"{name}.json").read_text())
        manifest.setdefault("schema", name)
        found.append(load_app(manifest))
    return found


def ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(len(ordered) * 0.95)] * 1000, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--compares", type=int, default=20)
    options = parser.parse_args()
    server = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    load = os.getloadavg()[0]
    with database(server) as url:
        engine = make_engine(url)
        apps = examples()
        for app in apps:
            install_app(engine, app)
        catalogue = {app.name: qualified(app.schema_name, app.tables) for app in apps}
        names = [app.name for app in apps]
        timings: dict[str, list[float]] = {"without": [], "with": []}
        with engine.connect() as conn:
            for round_ in range(options.rounds * 2):
                side = "with" if round_ % 2 else "without"
                fence = Fence("bench", deadline=50.0)
                started = time.perf_counter()
                opened = open_fenced(conn, fence, NOW, names, catalogue if side == "with" else None)
                timings[side].append(time.perf_counter() - started)
                assert opened is not None
                assert bool(opened.fingerprints) == (side == "with")
                close_fenced(conn, fence, opened.record_id, {"outcome": "done"})
            for side, samples in timings.items():
                emit(bench="agreement", case="open", fingerprints=side, load=load, **ms(samples))
            reads = []
            for _ in range(options.rounds):
                started = time.perf_counter()
                read_fingerprint(conn, catalogue["takeaway"])
                reads.append(time.perf_counter() - started)
            emit(bench="agreement", case="fingerprint", tables=5, load=load, **ms(reads))
            compares = []
            for _ in range(options.compares):
                started = time.perf_counter()
                assert compare_tables(conn, apps[0]).agree
                compares.append(time.perf_counter() - started)
                conn.rollback()
            emit(bench="agreement", case="compare", tables=5, load=load, **ms(compares))
        engine.dispose()


if __name__ == "__main__":
    main()
