"""`eval [--json] [--split tune|holdout|all]`: the labelled incidents through the real pipeline.

Prints accuracy, retrieval accuracy@3, unknown recall, the calibration gap and a per-category
confusion table; writes the figures to <data dir>/eval-latest.json and, after a full offline run
of the committed set, to knowledge/eval/latest.json (what the knowledge page and README show).
"""
from __future__ import annotations

from pathlib import Path

from pipeline.cli import emit, path_arg


def register(sub) -> None:
    p = sub.add_parser("eval", help="measure the analyst on the labelled incidents of knowledge/eval")
    p.add_argument("--split", choices=("tune", "holdout", "all"), default="all",
                   help="which half of the eval set to run (default: all, reported per half)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N cases of the split (a quick check; "
                   "not written to knowledge/eval/latest.json)")
    p.add_argument("--cases", type=path_arg, metavar="PATH", help="another eval file in the same format")
    p.add_argument("--model", action="store_true", help="evaluate the configured chat model instead of the offline analyzer")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_eval)


def cmd_eval(args) -> int:
    from pipeline.config import Settings
    from pipeline.errors import UsageError
    from pipeline.analyst.evaluation import COMMITTED_LATEST, DEFAULT_CASES, evaluate, load_cases, write_latest

    if args.limit is not None and args.limit <= 0:
        raise UsageError("--limit must be a positive number of cases")
    settings = Settings.from_env()
    cases = load_cases(args.cases or DEFAULT_CASES, split=args.split, limit=args.limit)
    report = evaluate(cases, settings=settings, use_model=args.model)
    written = [write_latest(report, Path(settings.data_dir) / "eval-latest.json")]
    if args.cases is None and args.limit is None and not args.model:
        written.append(write_latest(report, COMMITTED_LATEST))
    report["written"] = [str(p) for p in written]
    emit(args, report, _text)
    return 0


COLUMNS = (("cases", "cases", "{:>5}"), ("accuracy", "accuracy", "{:>8}"), ("acc@3", "accuracy_at_3", "{:>6}"),
           ("unk.recall", "unknown_recall", "{:>10}"), ("unk.prec", "unknown_precision", "{:>8}"),
           ("conf.right", "confidence_right", "{:>10}"), ("conf.wrong", "confidence_wrong", "{:>10}"),
           ("gap", "calibration_gap", "{:>6}"))


def _fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _text(report: dict) -> str:
    splits = report["splits"]
    total = sum(s["cases"] for name, s in splits.items() if name != "all")
    lines = [f"Analysis quality: {report['analyst']} analyst, {total} cases in {report['seconds']} s", ""]
    lines.append(f"{'split':<8} " + " ".join(fmt.format(title) for title, _, fmt in COLUMNS))
    for name, fig in splits.items():
        lines.append(f"{name:<8} " + " ".join(fmt.format(_fmt(fig[key])) for _, key, fmt in COLUMNS))
    lines.append("accuracy@3: expected category among the top-3 retrieved docs' (cases not expected unknown); "
                 "gap = mean confidence right - wrong")
    shown = "all" if "all" in splits else next(iter(splits))
    lines += ["", f"Confusion ({shown}): expected category → what the analyst named",
              f"{'expected':<22} {'cases':>5} {'right':>5} {'recall':>6}  named instead"]
    for expected, row in splits[shown]["confusion"].items():
        cases, right = sum(row.values()), row.get(expected, 0)
        instead = ", ".join(f"{cat}×{n}" for cat, n in sorted(row.items(), key=lambda kv: -kv[1]) if cat != expected)
        lines.append(f"{expected:<22} {cases:>5} {right:>5} {right / cases:>6.2f}  {instead or '-'}")
    if report["misses"]:
        lines += ["", "Misses (tuning half only; the held-out half is reported in aggregate):"]
        lines += [f"  {m['id']:<10} expected {m['expected']:<22} named {m['predicted']:<22} @ {m['confidence']:.2f}"
                  f"  top docs: {', '.join(m['top_doc_categories'])}" for m in report["misses"]]
    lines += ["", "written: " + ", ".join(report["written"])]
    return "\n".join(lines)
