"""`eval [--json] [--split tune|holdout|holdout2|outside|outside-sealed|outside2|outside3|all]`: the labelled incidents through the real pipeline.

Prints accuracy, graded accuracy, precision at the code-fix threshold, retrieval accuracy@3, unknown recall, the calibration gap, the key facts named and a
per-category confusion table, and writes the figures to <data dir>/eval-latest.json (what the
knowledge page shows); it never writes into the repository. `tune` is the default. `holdout` is the
2026-11 hold-out file, as before the split into files; `holdout2` is the 2026-12 one, sealed;
`outside` and `outside-sealed` are the open and sealed halves of the outside test bed, `outside2` and
`outside3` the second and third outside beds (open). This command
with `--split holdout2` or `--split outside-sealed` is the only code that unseals that split's file
(pipeline.evaluation's docstring); `all` is every split but the sealed ones.
"""
from __future__ import annotations

from pipeline.cli import emit, path_arg

SPLIT_CHOICES = ("tune", "holdout", "holdout2", "outside", "outside-sealed", "outside2", "outside3", "outside4",
                 "outside4-held", "outside5", "outside5-held", "outside6", "outside6-held", "outside7", "outside8", "outside9", "outside10", "outside11", "outside12", "outside13", "decisions",
                 "all")  # pipeline.evaluation.SPLIT_CHOICES, kept light


def register(sub) -> None:
    p = sub.add_parser("eval", help="measure the analyst on labelled incidents (knowledge/eval unless --cases), or "
                                   "turn reviewers' corrections into eval cases (--from-decisions)")
    p.add_argument("--split", choices=SPLIT_CHOICES, default="tune",
                   help="tune (the tuning set, the default), holdout (the 2026-11 hold-out, contaminated), holdout2 "
                        "(the sealed 2026-12 hold-out: run it once per analyzer you mean to report), outside (the "
                        "outside test bed's open half), outside-sealed (its sealed half, like holdout2), outside2 and outside3 (the second and third outside beds, open) or all "
                        "(every split but the sealed ones, reported per split)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N cases of the split (a quick check)")
    p.add_argument("--cases", type=path_arg, metavar="PATH",
                   help="another eval file, or a directory of them, in the same format (default: knowledge/eval)")
    p.add_argument("--from-decisions", action="store_true",
                   help="write the reviewers' corrections (approved after an edit of the category or root cause, "
                        "rejected with a reason) as eval cases to <data dir>/eval-decisions.jsonl; --split decisions "
                        "then measures the analyst on them")
    p.add_argument("--since", metavar="AGE|DATE", help="with --from-decisions: decided in the last AGE (30d) or since DATE")
    p.add_argument("--model", action="store_true", help="evaluate the configured chat model instead of the offline analyzer")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_eval)


def cmd_eval(args) -> int:
    from pipeline.config import Settings
    from pipeline.errors import UsageError
    from pipeline.evaluation import EVAL_DIR, HOLDOUT_UNSEAL, SEALED_SPLITS, evaluate, load_cases, write_latest

    if args.limit is not None and args.limit <= 0:
        raise UsageError("--limit must be a positive number of cases")
    settings = Settings.from_env()
    if args.from_decisions:
        return _from_decisions(args, settings)
    if args.since:
        raise UsageError("--since goes with --from-decisions")
    source = args.cases or EVAL_DIR
    if args.split == "decisions" and args.cases is None:
        from pipeline.backtest.decisions import DECISIONS_FILE

        source = settings.data_dir / DECISIONS_FILE
        if not source.exists():
            raise UsageError(f"no {source}: write the reviewers' corrections first with `eval --from-decisions`")
    unseal = HOLDOUT_UNSEAL if args.split in SEALED_SPLITS else None  # the one place a hold-out is unsealed
    cases = load_cases(source, split=args.split, limit=args.limit, unseal=unseal)
    report = evaluate(cases, settings=settings, use_model=args.model)
    report["written"] = [str(write_latest(report, data_dir=settings.data_dir))]
    emit(args, report, _text)
    return 0


def _from_decisions(args, settings) -> int:
    from pipeline.backtest.decisions import DECISIONS_FILE, decision_cases, write_cases
    from pipeline.cli import engine_from_env
    from pipeline.cli.backtest import parse_since

    engine = engine_from_env(sync_knowledge=False)
    skipped: list[dict] = []
    cases = decision_cases(engine, since=parse_since(args.since, engine.records.clock.now()), skipped=skipped)
    path = write_cases(cases, settings.data_dir / DECISIONS_FILE)
    by: dict[str, int] = {}
    for c in cases:
        by[c["expected"]] = by.get(c["expected"], 0) + 1
    emit(args, {"written": str(path), "cases": len(cases), "by_expected": by, "skipped": skipped},
         lambda r: f"{r['cases']} cases from reviewers' decisions written to {r['written']}"
                   + "".join(f"\n  {k}: {v}" for k, v in sorted(r["by_expected"].items()))
                   + (f"\n{len(r['skipped'])} skipped:" if r["skipped"] else "")
                   + "".join(f"\n  {s['incident_id']}: {s['why']}" for s in r["skipped"]))
    return 0


COLUMNS = (("cases", "cases", "{:>5}"), ("accuracy", "accuracy", "{:>8}"), ("graded", "graded", "{:>6}"),
           ("acc@3", "accuracy_at_3", "{:>6}"), ("prec@fix", "precision_at_fix_threshold", "{:>8}"),
           ("unk.recall", "unknown_recall", "{:>10}"), ("unk.prec", "unknown_precision", "{:>8}"),
           ("conf.right", "confidence_right", "{:>10}"), ("conf.wrong", "confidence_wrong", "{:>10}"),
           ("gap", "calibration_gap", "{:>6}"), ("facts", "key_facts", "{:>6}"))


def _fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _text(report: dict) -> str:
    from pipeline.evaluation import SPLIT_TITLES

    splits = report["splits"]
    total = sum(s["cases"] for name, s in splits.items() if name != "all")
    lines = [f"Analysis quality: {report['analyst']} analyst, {total} cases in {report['seconds']} s", ""]
    width = max(8, *(len(name) for name in splits))
    lines.append(f"{'split':<{width}} " + " ".join(fmt.format(title) for title, _, fmt in COLUMNS))
    for name, fig in splits.items():
        lines.append(f"{name:<{width}} " + " ".join(fmt.format(_fmt(fig.get(key))) for _, key, fmt in COLUMNS))
    lines.append("graded: mean grade / 100 (100 right, 65 same area, 35 unknown where a cause was expected, "
                 "0 otherwise: docs/CONTRACT.md §3); prec@fix: share right of the categories named at or above "
                 "the code-fix threshold")
    lines.append("accuracy@3: expected category among the top-3 retrieved docs' (cases not expected unknown); "
                 "gap = mean confidence right - wrong; facts = the cases' key facts the analysis names")
    lines += [f"{name}: {fig['healthy_opened']} of {fig['healthy']} healthy controls would open an incident"
              for name, fig in splits.items() if fig.get("healthy") and name != "all"]
    lines.append("splits: " + "; ".join(f"{name} = {SPLIT_TITLES[name]}" for name in splits if name in SPLIT_TITLES))
    shown = "all" if "all" in splits else next(iter(splits))
    lines += ["", f"Confusion ({shown}): expected category → what the analyst named",
              f"{'expected':<22} {'cases':>5} {'right':>5} {'recall':>6}  named instead"]
    for expected, row in splits[shown]["confusion"].items():
        cases, right = sum(row.values()), row.get(expected, 0)
        instead = ", ".join(f"{cat}×{n}" for cat, n in sorted(row.items(), key=lambda kv: -kv[1]) if cat != expected)
        lines.append(f"{expected:<22} {cases:>5} {right:>5} {right / cases:>6.2f}  {instead or '-'}")
    if report["misses"]:
        lines += ["", "Misses (open splits only; hold-outs are reported in aggregate):"]
        lines += [f"  {m['id']:<10} expected {m['expected']:<22} named {m['predicted']:<22} @ {m['confidence']:.2f}"
                  f"  top docs: {', '.join(m['top_doc_categories'])}" for m in report["misses"]]
    missed_facts = [r for r in report["results"] if r.get("facts_missed")]
    if missed_facts:
        lines += ["", "Key facts not named (open splits only):"]
        lines += [f"  {r['id']:<10} {'; '.join(r['facts_missed'])}" for r in missed_facts]
    lines += ["", "written: " + ", ".join(report["written"])]
    return "\n".join(lines)
