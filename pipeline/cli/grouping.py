"""`grouping PATH...`: the template miner's grouping accuracy (GA) on labelled logs; `outages
[FOLDER...]`: the outage test bed (incidents per outage, purity, leaders: unattended/outage_bed.py)."""
from __future__ import annotations

from pipeline.cli import emit, path_arg


def register(sub) -> None:
    p = sub.add_parser("grouping", help="grouping accuracy of the template miner on Loghub structured CSVs")
    p.add_argument("paths", nargs="+", type=path_arg, metavar="PATH",
                   help="a system folder (X_2k.log_structured.csv) or a folder of them")
    p.add_argument("--loo", action="store_true",
                   help="also the miner's leave-one-system-out GA: threshold, depth and masks picked on the other systems")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_grouping)
    p = sub.add_parser("outages", help="the outage test bed: incidents per outage, merged causes, leaders, healthy"
                                       " controls (and incidents per Loghub system)")
    p.add_argument("folders", nargs="*", type=path_arg, metavar="FOLDER",
                   help="folders of scenarios (<name>.json beside its log); default: tests/data/outages/open")
    p.add_argument("--loghub", type=path_arg, metavar="DIR", help="also count each Loghub system's incidents")
    p.add_argument("--analyse", action="store_true",
                   help="also run each cause's incident through the pipeline with the offline analyst (file order)"
                        " and score its category against --labels (unattended/outage_analysis.py)")
    p.add_argument("--labels", type=path_arg, metavar="PATH",
                   help="the causes' categories, {\"<folder>/<scenario>\": {\"<cause>\": {\"category\": ...}}};"
                        " default: tests/data/outages/categories.json")
    p.add_argument("--batch-lines", type=int, metavar="N",
                   help="read each scenario as the poller reads a live tail delivering N lines at a time (each"
                        " batch stored as it stores one, the runs of its new incidents started before the next;"
                        " INCIDENTIQ_SETTLE_SECONDS's settle window applies); default: read whole, as `ingest` reads")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_outages)


def cmd_outages(args) -> int:
    from pathlib import Path

    from pipeline.errors import UsageError
    from pipeline.unattended import outage_analysis, outage_bed

    folders = args.folders or [Path(__file__).resolve().parents[2] / "tests" / "data" / "outages" / "open"]
    if args.batch_lines is not None and args.batch_lines < 1:
        raise UsageError("--batch-lines: at least 1")
    if args.batch_lines is not None and (args.analyse or args.labels):
        raise UsageError("--batch-lines measures grouping alone: not with --analyse or --labels")
    if args.analyse or args.labels:
        emit(args, outage_analysis.measure(folders, labels=args.labels or outage_analysis.LABELS, loghub=args.loghub),
             outage_analysis.text)
    else:
        emit(args, outage_bed.measure(folders, loghub=args.loghub, batch_lines=args.batch_lines), outage_bed.text)
    return 0


def cmd_grouping(args) -> int:
    from pipeline.incidents.grouping import measure

    emit(args, measure(args.paths, loo=args.loo), _text)
    return 0


def _text(summary) -> str:
    def cell(value) -> str:
        return f"{value:>9.3f}" if value is not None else f"{'-':>9}"

    loo = "mean_loo" in summary
    columns = [("GA", "miner"), ("D3 bench", "drain3_benchmark"), ("raw GA", "raw_miner"),
               ("D3b raw", "raw_drain3_benchmark"), ("masks", "baseline"), ("Drain3", "drain3")]
    if loo:
        columns.append(("LOO", "loo"))
    head = f"{'system':<14}{'lines':>6}{'templates':>10}" + "".join(f"{title:>9}" for title, _ in columns)
    lines = [head + ("  picked on the others" if loo else "")]
    for r in summary["systems"]:
        line = f"{r['system']:<14}{r['lines']:>6}{r['templates']:>10}" + "".join(cell(r.get(key)) for _, key in columns)
        lines.append(line + (f"  {r['loo_config']}" if loo else ""))
    lines.append(f"{'mean':<30}" + "".join(cell(summary.get(f"mean_{key}")) for _, key in columns))
    goal = summary["goal"]
    lines.append("GA: the miner (one configuration) on the messages; D3 bench: Drain3 with the Loghub benchmark's"
                 " settings tuned per system; raw: the same two on the messages our reader takes out of the raw"
                 " lines; masks: the masked text alone; Drain3: its defaults"
                 + ("; LOO: the miner with the threshold, depth and masks the other systems pick" if loo else ""))
    below = ", ".join(summary["below_drain3_benchmark"]) or "none"
    below_raw = ", ".join(summary["below_drain3_benchmark_raw"]) or "none"
    lines.append(f"below Drain3's benchmark settings{' (LOO)' if loo else ''}: {below}; on raw lines: {below_raw}")
    lines.append(f"lowest {summary['min_miner']:.3f}; goal (mean >= {goal['mean']}, none below {goal['min']}): "
                 f"{'met' if summary['goal_met'] else 'NOT met'}")
    return "\n".join(lines)
