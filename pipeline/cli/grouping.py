"""`grouping PATH...`: the template miner's grouping accuracy (GA) on labelled logs."""
from __future__ import annotations

from pipeline.cli import emit, path_arg


def register(sub) -> None:
    p = sub.add_parser("grouping", help="grouping accuracy of the template miner on Loghub structured CSVs")
    p.add_argument("paths", nargs="+", type=path_arg, metavar="PATH",
                   help="a system folder (X_2k.log_structured.csv) or a folder of them")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_grouping)


def cmd_grouping(args) -> int:
    from pipeline.incidents.grouping import measure

    emit(args, measure(args.paths), _text)
    return 0


def _text(summary) -> str:
    lines = [f"{'system':<14}{'lines':>6}{'templates':>10}{'GA':>8}{'masks':>8}"]
    for r in summary["systems"]:
        lines.append(f"{r['system']:<14}{r['lines']:>6}{r['templates']:>10}{r['miner']:>8.3f}{r['baseline']:>8.3f}")
    lines.append(f"{'mean':<30}{summary['mean_miner']:>8.3f}{summary['mean_baseline']:>8.3f}")
    goal = summary["goal"]
    lines.append(f"lowest {summary['min_miner']:.3f}; goal (mean >= {goal['mean']}, none below {goal['min']}): "
                 f"{'met' if summary['goal_met'] else 'NOT met'}")
    return "\n".join(lines)
