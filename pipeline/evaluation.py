"""Measured analysis quality: the labelled incidents of knowledge/eval run through the real pipeline.

Each case is a burst of log events and the category a correct RCA names. The events are stored
in a fresh data dir's records (so the log window is real), and the case becomes exactly one
incident: one IncidentState holding all its events, run on its own thread (the case id) to the
approval pause with the engine's context, like any incident. Production ingest would split a
case whose events have different fingerprints; the eval asks one question per case instead.

The set lives in knowledge/eval, one file per split, each case naming its split: `tune.jsonl`
(`tune`, the only half anyone tunes on), `holdout-2026-11.jsonl` (`holdout`, the first hold-out,
now contaminated: see knowledge/eval/README.md), `holdout-2026-12.jsonl` (`holdout2`, the fresh
hold-out), and the outside test bed built from material the team did not write (libraries' own
error strings, public issue threads): `outside-2026-12.jsonl` (`outside`, its open half, readable
and tunable) and `outside-sealed-2026-12.jsonl` (`outside-sealed`, its sealed half). The loader
discovers every `*.jsonl` there, so a split exists once its file does.

The sealed splits (SEALED_SPLITS: holdout2, outside-sealed) are sealed alike. Their files (in any
eval dir) are not read at all unless the caller asks for that very split with HOLDOUT_UNSEAL, which
only `python -m pipeline eval --split <that split>` passes (tests/test_holdout_seal.py fails when any
other module names it or the files, and when any other command opens a file); unsealed, a file's
bytes must have its pinned sha256, so an edit is refused instead of measured. `all` is every split
but the sealed ones.

A case may carry `facts`: the key facts an on-call engineer needs (a host:port, a pool's name and
size, an endpoint and status, a certificate's expiry, a config key, the deepest `Caused by`), each
a string the events contain; and `healthy: true` for a control with no incident in it.

Figures, per split (each split run, and `all` when more than one ran):
- accuracy: predicted category == expected, over every case (`unknown` included);
- graded: the mean grade of the answers (`pipeline.state.grade`, docs/CONTRACT.md §3: 100 the
  expected category, 65 another of its area, 35 `unknown` where a cause was expected, 0 a category
  of another area or one named where none fits) as a share of 100, and `grades`: cases per grade;
- accuracy_at_3: the expected category is among the categories of the top-3 retrieved docs,
  over the cases whose expected category is not `unknown` (no doc declares `unknown`);
- unknown_recall / unknown_precision: expected `unknown` predicted `unknown`, and the reverse;
- confidence_right / confidence_wrong and calibration_gap = right - wrong (mean confidences);
- wrong_named: wrong answers naming a category (not `unknown`), their highest confidence, and how
  many reach the code-fix threshold (CODE_FIX_MIN_CONFIDENCE), the misses that could propose a fix;
- confusion: {expected: {predicted: count}};
- key_facts: the share of the cases' key facts the analysis names (case-insensitive, in the root
  cause, the findings or the recommendation; the quoted evidence does not count), over
  key_facts_checked facts, None when no case has facts;
- healthy / healthy_opened: the healthy controls, and how many of them have an event that would
  open an incident (opens_incident): a control should open none;
- precision_at_fix_threshold: of the answers naming a category at or above that threshold
  (`named_at_fix_threshold` of them), the share that are right;

Hold-outs are reported only in aggregate: per-case rows are kept for the open splits (DETAILED_SPLITS),
so whoever tunes the analyzer never reads which held-out cases it gets wrong. The report is written only under
the data dir (<data dir>/eval-latest.json), never into the repository.
"""
from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pipeline.store import checkpoints
from pipeline.config import Settings
from pipeline.composition import open_engine
from pipeline.engine import Engine
from pipeline.errors import InvalidEvent, UsageError
from pipeline.ingest.events import normalize
from pipeline.engine.graph import thread_config
from pipeline.incidents.opening import opens_incident
from pipeline.state import CATEGORIES, GRADES, IncidentState, grade

EVAL_DIR = Path(__file__).resolve().parents[1] / "knowledge" / "eval"
REPORT_NAME = "eval-latest.json"  # under the data dir
SPLITS = ("tune", "holdout", "holdout2", "outside", "outside-sealed", "outside2", "outside3", "outside4", "outside4-held",
          "outside5", "outside5-held", "outside6", "outside6-held", "outside7", "outside8", "outside9", "outside10", "outside11", "outside12", "outside13", "decisions")
SPLIT_CHOICES = (*SPLITS, "all")
SPLIT_TITLES = {"tune": "tuning set", "holdout": "hold-out 2026-11 (contaminated)", "holdout2": "hold-out 2026-12",
                "outside": "outside test bed, open half", "outside-sealed": "outside test bed, sealed half",
                "outside2": "second outside bed (2026-12, open: libraries' and servers' own error strings)",
                "outside3": "third outside bed (2026-12, open: one incident per case, a third of them traps)",
                "outside4": "fourth outside bed (2026-12, open two-thirds: other stacks' libraries, written before tuning)",
                "outside4-held": "fourth outside bed, held third (aggregate only: not tuned on)",
                "outside5": "fifth outside bed (2026-12, open two-thirds: near-miss traps from other libraries, written before tuning)",
                "outside5-held": "fifth outside bed, held third (aggregate only: not tuned on)",
                "outside6": "sixth outside bed (2026-12, blind: opened half, tuned on after its first measure)",
                "outside6-held": "sixth outside bed, held half (aggregate only: never opened, never tuned on)",
                "outside7": "seventh outside bed (2026-12, blind: opened half, other languages' libraries, tuned on after its first measure)",
                "outside8": "eighth outside bed (2026-12, blind: opened half, halved by category, many strings from memory, tuned on after its first measure)",
                "outside9": "ninth outside bed (2026-12, blind: opened half, halved by category, stacks no earlier bed used, most strings from memory)",
                "outside10": "tenth outside bed (2026-12, blind: opened half, halved by category; Elixir, PHP, Swift, Haskell, Rust, .NET, Go and others)",
                "outside11": "eleventh outside bed (2026-12, blind: opened half, halved by category; Rust, Elixir, PHP, Ruby, .NET, Go, Kotlin, cloud SDKs, brokers)",
                "outside12": "twelfth outside bed (2026-12, blind: opened half, other libraries' error strings)",
                "outside13": "thirteenth outside bed (2026-12, blind: opened whole after its measures; libraries' own error strings, traps)",
                "decisions": "the reviewers' corrections (eval --from-decisions)"}
DETAILED_SPLITS = ("tune", "outside", "outside2", "outside3", "outside4", "outside5", "outside6", "outside7", "outside8", "outside9", "outside10", "outside11", "outside12", "outside13", "decisions")  # per-case rows; every hold-out stays aggregate-only
SEALED_SPLIT = "holdout2"
HOLDOUT_FILE_NAME = "holdout-2026-12.jsonl"  # the sealed file, wherever an eval dir holds it
HOLDOUT_SHA256 = "08c9cf3c742e6919067f1f0566aced2efea6734c568b54254b2eb43edb5757e9"
OUTSIDE_SEALED_SPLIT = "outside-sealed"
OUTSIDE_SEALED_FILE_NAME = "outside-sealed-2026-12.jsonl"
OUTSIDE_SEALED_SHA256 = "c316b0a59a455a16e725d3cc539d4c3aadf22d8821c7cea3e861b078a0ec866c"
SEALED_SPLITS = {SEALED_SPLIT: (HOLDOUT_FILE_NAME, HOLDOUT_SHA256),  # split → (its file, the file's sha256)
                 OUTSIDE_SEALED_SPLIT: (OUTSIDE_SEALED_FILE_NAME, OUTSIDE_SEALED_SHA256)}
HOLDOUT_UNSEAL = "eval --split <a sealed split>"  # passed only by pipeline/cli/eval.py, for the split asked
TOP_K = 3


@dataclass(frozen=True)
class EvalCase:
    """One labelled incident. `note` is for people and never reaches the analyzer."""

    case_id: str
    expected: str
    split: str
    events: tuple[dict, ...]
    facts: tuple[str, ...] = ()  # key facts the analysis should name (module docstring)
    healthy: bool = False  # a control: no incident expected


@dataclass
class CaseResult:
    case_id: str
    split: str
    expected: str
    predicted: str
    confidence: float
    top_doc_categories: list[str] = field(default_factory=list)
    top_doc_ids: list[str] = field(default_factory=list)
    facts_found: list[str] = field(default_factory=list)
    facts_missed: list[str] = field(default_factory=list)
    healthy: bool = False
    opened: bool = True  # an event of the case opens an incident

    @property
    def right(self) -> bool:
        return self.predicted == self.expected

    @property
    def grade(self) -> int:
        return grade(self.expected, self.predicted)


def load_cases(source: Path = EVAL_DIR, *, split: str = "tune", limit: int | None = None,
               unseal: str | None = None) -> list[EvalCase]:
    """The cases of an eval dir (every `*.jsonl` in it) or of one file, optionally of one split and
    only the first `limit` of it; tune first, then the other splits in SPLITS' order. A sealed split's
    file is skipped unread unless `split` is that split and `unseal` is HOLDOUT_UNSEAL (module docstring)."""
    if split not in SPLIT_CHOICES:
        raise UsageError(f"--split must be one of {', '.join(SPLIT_CHOICES)}, not {split!r}")
    sealed_names = {name: pinned for name, pinned in SEALED_SPLITS.values()}
    unsealed = SEALED_SPLITS[split][0] if split in SEALED_SPLITS and unseal == HOLDOUT_UNSEAL else None
    source = Path(source)
    if source.is_dir():
        files = sorted(source.glob("*.jsonl"))
    elif source.is_file():
        files = [source]
    else:
        raise UsageError(f"no such eval file or directory: {source}")
    sealed = [p for p in files if p.name in sealed_names]
    files = [p for p in files if p.name not in sealed_names or p.name == unsealed]
    cases: list[EvalCase] = []
    file_of_split: dict[str, Path] = {}
    for path in files:
        found = _read_cases(path, pinned=sealed_names.get(path.name))
        # in a directory one file is one split, so a hold-out is sealed in its own file
        if source.is_dir():
            names = {c.split for c in found}
            if len(names) > 1:
                raise UsageError(f"{path}: one file holds one split, this one holds {', '.join(sorted(names))}")
            for name in names:
                if name in file_of_split:
                    raise UsageError(f"split {name!r} is in both {file_of_split[name].name} and {path.name}")
                file_of_split[name] = path
        cases += found
    seen: set[str] = set()
    for case in cases:
        if case.case_id in seen:  # the case id is the thread id: two cases would share one run
            raise UsageError(f"{source}: case id {case.case_id} appears twice")
        seen.add(case.case_id)
    selected = [c for c in cases if split in ("all", c.split)]
    if not selected:
        held = [p for p in sealed if split in SEALED_SPLITS and p.name == SEALED_SPLITS[split][0]]
        if held:
            raise UsageError(f"the {split} hold-out ({held[0]}) is sealed: only "
                             f"`python -m pipeline eval --split {split}` reads it")
        raise UsageError(f"no {split} cases in {source}" + (": no file there holds that split" if source.is_dir() else ""))
    selected.sort(key=lambda c: SPLITS.index(c.split))  # stable: each file keeps its own order
    return selected[:limit] if limit else selected


def _read_cases(path: Path, *, pinned: str | None = None) -> list[EvalCase]:
    """The cases of one file; a sealed file's bytes must have their `pinned` sha256."""
    data = path.read_bytes()
    if pinned and hashlib.sha256(data).hexdigest() != pinned:
        raise UsageError(f"{path}: the sealed hold-out was changed (its sha256 is not the pinned one); "
                         "its figures would not be comparable, so it is not measured")
    cases = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            case = EvalCase(case_id=str(raw["id"]), expected=raw["expected"], split=raw["split"],
                            events=tuple(raw["events"]), facts=tuple(raw.get("facts") or ()),
                            healthy=raw.get("healthy") is True)
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}:{number}: not an eval case ({exc})") from exc
        if case.expected not in CATEGORIES or case.split not in SPLITS or not case.events:
            raise UsageError(f"{path}:{number}: bad expected/split/events in {case.case_id}")
        if not all(isinstance(f, str) and f.strip() for f in case.facts):
            raise UsageError(f"{path}:{number}: the facts of {case.case_id} must be non-empty strings")
        cases.append(case)
    return cases


def case_state(engine: Engine, case: EvalCase) -> IncidentState:
    """Store the case's events in the records and build its one incident's state from all of them."""
    try:
        events = [normalize(obj, source=f"eval:{case.case_id}", position=str(i)) for i, obj in enumerate(case.events)]
    except InvalidEvent as exc:
        raise UsageError(f"eval case {case.case_id}: {exc.reason}") from exc
    engine.incidents.store_batch(events, cursor=None)
    events.sort(key=lambda e: e.time)
    opener = next((e for e in events if opens_incident(e)), events[0])
    return IncidentState(incident_id=case.case_id, service=opener.service, evidence=events)


def run_case(engine: Engine, case: EvalCase) -> CaseResult:
    """Run one case to the approval pause on its own thread and read what the analyst concluded."""
    config = thread_config(case.case_id)
    engine.graph.invoke(case_state(engine, case), config, context=engine.deps)
    snap = engine.graph.get_state(config)
    state = IncidentState.model_validate(snap.values)
    if snap.next != ("approval",) or state.rca is None:
        raise UsageError(f"eval case {case.case_id} did not reach the approval pause: {state.errors[-1:]}")
    top = state.similar_docs[:TOP_K]
    named = _named_text(state)
    return CaseResult(case_id=case.case_id, split=case.split, expected=case.expected,
                      predicted=state.rca.category, confidence=state.rca.confidence,
                      top_doc_categories=[d.category for d in top], top_doc_ids=[d.doc_id for d in top],
                      facts_found=[f for f in case.facts if _fold(f) in named],
                      facts_missed=[f for f in case.facts if _fold(f) not in named],
                      healthy=case.healthy, opened=any(opens_incident(e) for e in state.evidence))


def _named_text(state: IncidentState) -> str:
    """What the analysis says in its own words: the root cause, the findings and the recommendation
    (not the quoted evidence, which holds every fact verbatim)."""
    rca, rec = state.rca, state.recommendation
    parts = [rca.root_cause, *(f.value for f in rca.findings)] if rca else []
    if rec:
        parts += [rec.action, *rec.steps]
    return _fold(" ".join(parts))


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def figures(results: list[CaseResult], *, fix_threshold: float = 0.5) -> dict:
    """The quality figures of a set of case results (see module docstring)."""
    n = len(results)
    known = [r for r in results if r.expected != "unknown"]
    expected_unknown = [r for r in results if r.expected == "unknown"]
    predicted_unknown = [r for r in results if r.predicted == "unknown"]
    right = [r.confidence for r in results if r.right]
    wrong = [r.confidence for r in results if not r.right]
    # a wrong *named* cause is the costly miss: confident enough, it makes code_fix eligible
    wrong_named = [r.confidence for r in results if not r.right and r.predicted != "unknown"]
    confusion: dict[str, dict[str, int]] = defaultdict(Counter)
    for r in results:
        confusion[r.expected][r.predicted] += 1
    facts_found = sum(len(r.facts_found) for r in results)
    facts_checked = facts_found + sum(len(r.facts_missed) for r in results)
    healthy = [r for r in results if r.healthy]
    confident = [r for r in results if r.predicted != "unknown" and r.confidence >= fix_threshold]
    grades = Counter(r.grade for r in results)
    return {
        "cases": n,
        "right": len(right),
        "accuracy": _ratio(len(right), n),
        "graded": _ratio(sum(r.grade for r in results), 100 * n),
        "grades": {str(g): grades.get(g, 0) for g in GRADES},
        "precision_at_fix_threshold": _ratio(sum(r.right for r in confident), len(confident)),
        "named_at_fix_threshold": len(confident),
        "accuracy_at_3": _ratio(sum(r.expected in r.top_doc_categories for r in known), len(known)),
        "accuracy_at_3_cases": len(known),
        "unknown_recall": _ratio(sum(r.predicted == "unknown" for r in expected_unknown), len(expected_unknown)),
        "unknown_precision": _ratio(sum(r.expected == "unknown" for r in predicted_unknown), len(predicted_unknown)),
        "unknown_cases": len(expected_unknown),
        "confidence_right": _mean(right),
        "confidence_wrong": _mean(wrong),
        "calibration_gap": round(_mean(right) - _mean(wrong), 3) if right and wrong else None,
        "wrong_named": len(wrong_named),
        "wrong_named_max_confidence": round(max(wrong_named), 3) if wrong_named else None,
        "wrong_named_above_fix_threshold": sum(c >= fix_threshold for c in wrong_named),
        "key_facts": _ratio(facts_found, facts_checked),
        "key_facts_checked": facts_checked,
        "healthy": len(healthy),
        "healthy_opened": sum(r.opened for r in healthy),
        "confusion": {exp: dict(sorted(row.items())) for exp, row in sorted(confusion.items())},
    }


def evaluate(cases: list[EvalCase], *, settings: Settings | None = None, use_model: bool = False) -> dict:
    """Run the cases in a fresh temp data dir; the report holds figures per split present."""
    if not cases:
        raise UsageError("no eval cases selected")
    base = settings or Settings.from_env()
    with tempfile.TemporaryDirectory(prefix="incidentiq-eval-") as tmp:
        # the offline analyzer unless asked otherwise: docs/BENCHMARKS.md's figures are the offline ones
        overrides: dict[str, Any] = {} if use_model else {"model": None, "embeddings": "offline"}
        run_settings = base.model_copy(update={"data_dir": Path(tmp) / "data", **overrides})
        engine = open_engine(run_settings)
        try:
            started = time.perf_counter()
            results = [run_case(engine, case) for case in cases]
            seconds = time.perf_counter() - started
            analyst = engine.analyst.name
        finally:
            engine.records.close()
            checkpoints.close_all()
    threshold = run_settings.code_fix_min_confidence
    splits = {s: figures([r for r in results if r.split == s], fix_threshold=threshold)
              for s in SPLITS if any(r.split == s for r in results)}
    if len(splits) > 1:
        splits["all"] = figures(results, fix_threshold=threshold)
    return {
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "analyst": analyst,
        "seconds": round(seconds, 2),
        "splits": splits,
        "misses": [_row(r) for r in results if r.split in DETAILED_SPLITS and not r.right],
        "results": [_row(r) for r in results if r.split in DETAILED_SPLITS],
    }


def write_latest(report: dict, *, data_dir: Path) -> Path:
    """Merge a report into <data dir>/eval-latest.json: splits not run this time keep their figures."""
    path = Path(data_dir) / REPORT_NAME
    previous = json.loads(path.read_text()) if path.is_file() else {}
    splits = dict(previous.get("splits") or {})
    for name, values in report["splits"].items():
        splits[name] = {**values, "generated_at": report["generated_at"], "title": SPLIT_TITLES.get(name, name)}
    latest = {"generated_at": report["generated_at"], "analyst": report["analyst"], "splits": splits}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(latest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def latest_report(data_dir: Path) -> dict | None:
    """This data dir's eval report (with its `path`), or None when `eval` has not run here or left
    no readable report. Only the data dir: the repository carries no figures, so nobody is shown
    another machine's run."""
    path = Path(data_dir) / REPORT_NAME
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return {**report, "path": str(path)} if isinstance(report, dict) else None


def _row(r: CaseResult) -> dict:
    return {"id": r.case_id, "expected": r.expected, "predicted": r.predicted, "grade": r.grade, "confidence": r.confidence,
            "top_doc_categories": r.top_doc_categories, "top_doc_ids": r.top_doc_ids,
            "facts_found": r.facts_found, "facts_missed": r.facts_missed}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None
