"""`eval [--json] [--split tune|holdout|holdout2|all]`: the labelled incidents through the real pipeline.

Prints accuracy, retrieval accuracy@3, unknown recall, the calibration gap and a per-category
confusion table, and writes the figures to <data dir>/eval-latest.json (what the knowledge page
shows); it never writes into the repository. `tune` is the default. `holdout` is the 2026-11 hold-out
file, as before the split into files; `holdout2` is the 2026-12 one, sealed: this command with
`--split holdout2` is the only code that unseals it (pipeline.evaluation's docstring); `all` is every
split but that one.
"""
from __future__ import annotations

from pipeline.cli import emit, path_arg

SPLIT_CHOICES = ("tune", "holdout", "holdout2", "all")  # pipeline.evaluation.SPLIT_CHOICES, kept light


def register(sub) -> None:
    p = sub.add_parser("eval", help="measure the analyst on the labelled incidents of knowledge/eval")
    p.add_argument("--split", choices=SPLIT_CHOICES, default="tune",
                   help="tune (the tuning set, the default), holdout (the 2026-11 hold-out, contaminated), holdout2 "
                        "(the sealed 2026-12 hold-out: run it once per analyzer you mean to report) or all "
                        "(every split but holdout2, reported per split)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N cases of the split (a quick check)")
    p.add_argument("--cases", type=path_arg, metavar="PATH",
                   help="another eval file, or a directory of them, in the same format (default: knowledge/eval)")
    p.add_argument("--model", action="store_true", help="evaluate the configured chat model instead of the offline analyzer")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_eval)


def cmd_eval(args) -> int:
    from pipeline.config import Settings
    from pipeline.errors import UsageError
    from pipeline.evaluation import EVAL_DIR, HOLDOUT_UNSEAL, SEALED_SPLIT, evaluate, load_cases, write_latest

    if args.limit is not None and args.limit <= 0:
        raise UsageError("--limit must be a positive number of cases")
    settings = Settings.from_env()
    unseal = HOLDOUT_UNSEAL if args.split == SEALED_SPLIT else None  # the one place the hold-out is unsealed
    cases = load_cases(args.cases or EVAL_DIR, split=args.split, limit=args.limit, unseal=unseal)
    report = evaluate(cases, settings=settings, use_model=args.model)
    report["written"] = [str(write_latest(report, data_dir=settings.data_dir))]
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
    from pipeline.evaluation import SPLIT_TITLES

    splits = report["splits"]
    total = sum(s["cases"] for name, s in splits.items() if name != "all")
    lines = [f"Analysis quality: {report['analyst']} analyst, {total} cases in {report['seconds']} s", ""]
    lines.append(f"{'split':<8} " + " ".join(fmt.format(title) for title, _, fmt in COLUMNS))
    for name, fig in splits.items():
        lines.append(f"{name:<8} " + " ".join(fmt.format(_fmt(fig[key])) for _, key, fmt in COLUMNS))
    lines.append("accuracy@3: expected category among the top-3 retrieved docs' (cases not expected unknown); "
                 "gap = mean confidence right - wrong")
    lines.append("splits: " + "; ".join(f"{name} = {SPLIT_TITLES[name]}" for name in splits if name in SPLIT_TITLES))
    shown = "all" if "all" in splits else next(iter(splits))
    lines += ["", f"Confusion ({shown}): expected category → what the analyst named",
              f"{'expected':<22} {'cases':>5} {'right':>5} {'recall':>6}  named instead"]
    for expected, row in splits[shown]["confusion"].items():
        cases, right = sum(row.values()), row.get(expected, 0)
        instead = ", ".join(f"{cat}×{n}" for cat, n in sorted(row.items(), key=lambda kv: -kv[1]) if cat != expected)
        lines.append(f"{expected:<22} {cases:>5} {right:>5} {right / cases:>6.2f}  {instead or '-'}")
    if report["misses"]:
        lines += ["", "Misses (tuning set only; hold-outs are reported in aggregate):"]
        lines += [f"  {m['id']:<10} expected {m['expected']:<22} named {m['predicted']:<22} @ {m['confidence']:.2f}"
                  f"  top docs: {', '.join(m['top_doc_categories'])}" for m in report["misses"]]
    lines += ["", "written: " + ", ".join(report["written"])]
    return "\n".join(lines)
