"""Benchmark: fixes only for code causes (issue 36.5), over the demo and the open eval sets.

Runs the bundled sample day (samples/pos-day.jsonl, the demo) and the open eval splits (tune,
holdout, outside: never the sealed holdout2 or outside-sealed) through the product's graph with
the offline analyzer to the approval pause, and reads back which analyses carry a fix proposal.

Counted, goal 0 each:
- proposals on an infrastructure cause: a DNS failure, a full volume or a TLS certificate (the
  case's expected category, or the demo incident's named one), memory exhausted where the events
  show a kill at a limit, or any cause whose events name a network policy;
- proposals none of whose doc's fix hints is for the technology the evidence shows (a Python
  doc's SQLAlchemy advice for a Kafka client).
Every proposal is listed with its category, doc and first plan step so a reader can judge.

    .venv/bin/python bench/fix_scope.py [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (strict msgpack before langgraph loads)
from pipeline.analyst import fixes, operational  # noqa: E402
from pipeline.composition import open_engine  # noqa: E402
from pipeline.config import Settings  # noqa: E402
from pipeline.engine.graph import thread_config  # noqa: E402
from pipeline.evaluation import case_state, load_cases  # noqa: E402
from pipeline.knowledge.retrieval import cause_doc  # noqa: E402
from pipeline.state import IncidentState  # noqa: E402
from pipeline.store import checkpoints  # noqa: E402
from pipeline.unattended.file_ingest import ingest_path  # noqa: E402

INFRA_CATEGORIES = {"dns_resolution", "disk_full", "tls_certificate"}
OPEN_SPLITS = ("tune", "holdout", "outside")


def infrastructure(category: str, state: IncidentState) -> bool:
    text = "\n".join(f"{e.message}\n{e.exception or ''}\n{e.stack or ''}" for e in state.evidence)
    return (category in INFRA_CATEGORIES or operational._NETWORK_POLICY.search(text) is not None
            or (category == "out_of_memory" and operational._OOM_KILL.search(text) is not None))


def row(engine, source: str, case_id: str, expected: str, state: IncidentState) -> dict:
    doc = cause_doc(engine.kb, state) if state.rca else None
    foreign = getattr(fixes, "foreign_fix", None)
    return {"source": source, "case": case_id, "expected": expected,
            "named": state.rca.category if state.rca else None,
            "confidence": state.rca.confidence if state.rca else None,
            "doc": doc.doc_id if doc else None, "proposal": state.proposal is not None,
            "infrastructure": infrastructure(expected, state),
            "foreign_plan": bool(state.proposal is not None and doc is not None and
                                 (foreign(state, doc) if foreign else not fixes.own_hints(
                                     doc, fixes.evidence_stack(state.evidence)))),
            "first_step": state.proposal.plan[0][:110] if state.proposal else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        engine = open_engine(Settings.from_env(data_dir=data, repo_dir=ROOT / "samples" / "pos-backend",
                                               merge_delay=0.0))
        try:
            ingest_path(engine, ROOT / "samples" / "pos-day.jsonl")
            for incident in engine.records.incidents():
                snap = engine.graph.get_state(thread_config(incident["incident_id"]))
                state = IncidentState.model_validate(snap.values)
                rows.append(row(engine, "demo", incident["incident_id"], state.rca.category if state.rca else "", state))
            for split in OPEN_SPLITS:
                for case in load_cases(split=split):
                    config = thread_config(case.case_id)
                    engine.graph.invoke(case_state(engine, case), config, context=engine.deps)
                    state = IncidentState.model_validate(engine.graph.get_state(config).values)
                    rows.append(row(engine, split, case.case_id, case.expected, state))
        finally:
            engine.records.close()
            checkpoints.close_all()
    infra = [r for r in rows if r["proposal"] and r["infrastructure"]]
    foreign = [r for r in rows if r["proposal"] and r["foreign_plan"]]
    summary = {"analyses": len(rows), "proposals": sum(r["proposal"] for r in rows),
               "infrastructure_causes": sum(r["infrastructure"] for r in rows),
               "proposals_on_infrastructure": len(infra), "proposals_with_no_plan_for_the_technology": len(foreign)}
    if args.json:
        print(json.dumps({"summary": summary, "rows": rows}, indent=1))
        return 0
    print(f"analyses {summary['analyses']} (demo + {', '.join(OPEN_SPLITS)}), fix proposals {summary['proposals']}, "
          f"infrastructure causes {summary['infrastructure_causes']}")
    print(f"proposals on infrastructure causes: {len(infra)} (goal 0)")
    print(f"proposals whose doc has no fix hint for the evidence's technology: {len(foreign)} (goal 0)")
    for r in infra + foreign:
        print(f"  {r['source']:8} {r['case']:28} expected {r['expected']:20} named {r['named']} @ {r['confidence']} "
              f"doc {r['doc']}: {r['first_step']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
