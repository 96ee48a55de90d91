"""`grouping PATH...`: the template miner's grouping accuracy (GA) on labelled logs."""
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


def cmd_grouping(args) -> int:
    from pipeline.incidents.grouping import measure

    emit(args, measure(args.paths, loo=args.loo), _text)
    return 0


def _text(summary) -> str:
    def cell(value) -> str:
        return f"{value:>9.3f}" if value is not None else f"{'-':>9}"

    loo = "mean_loo" in summary
    head = f"{'system':<14}{'lines':>6}{'templates':>10}{'GA':>9}{'masks':>9}{'Drain3':>9}{'D3 bench':>9}"
    lines = [head + (f"{'LOO':>9}  picked on the others" if loo else "")]
    for r in summary["systems"]:
        line = (f"{r['system']:<14}{r['lines']:>6}{r['templates']:>10}{cell(r['miner'])}{cell(r.get('baseline'))}"
                f"{cell(r.get('drain3'))}{cell(r.get('drain3_benchmark'))}")
        lines.append(line + (f"{cell(r['loo'])}  {r['loo_config']}" if loo else ""))
    lines.append(f"{'mean':<30}{cell(summary['mean_miner'])}{cell(summary.get('mean_baseline'))}"
                 f"{cell(summary.get('mean_drain3'))}{cell(summary.get('mean_drain3_benchmark'))}"
                 + (cell(summary["mean_loo"]) if loo else ""))
    goal = summary["goal"]
    lines.append("GA: the miner (one configuration); masks: the masked text alone; Drain3: its defaults;"
                 " D3 bench: Drain3 with the Loghub benchmark's settings tuned per system"
                 + ("; LOO: the miner with the threshold, depth and masks the other systems pick" if loo else ""))
    lines.append(f"lowest {summary['min_miner']:.3f}; goal (mean >= {goal['mean']}, none below {goal['min']}): "
                 f"{'met' if summary['goal_met'] else 'NOT met'}")
    return "\n".join(lines)
