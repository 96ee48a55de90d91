"""Derive the outside bed's expected records for Loghub systems (tests/data/outside/loghub, see the
bed's README.md): each line split by the system's `log_format`, the header description Loghub's
benchmark (logpai/loghub, logpai/logparser) splits its raw logs with into the structured CSVs'
columns; the time from the Date/Time columns as written, the level from Level, the message from
Content. Run from the repository root after placing a log: `python tests/data/outside/loghub/derive.py`."""
from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMIT = "374038faa4ca122dd7ca0730372c0b78f76f8597"
SYSTEMS = {  # module: (log name, commit of the log, log_format, zone, expected time from the columns)
    "android": ("Android_2k.log", COMMIT, "<Date> <Time>  <Pid>  <Tid> <Level> <Component>: <Content>", None,
                lambda g: (f"2017-{g['Date']}T{g['Time']}", False)),
    "bgl": ("BGL_2k.log", COMMIT,
            "<Label> <Timestamp> <Date> <Node> <Time> <NodeRepeat> <Type> <Component> <Level> <Content>", "-07:00",
            lambda g: (datetime.strptime(g["Time"], "%Y-%m-%d-%H.%M.%S.%f").isoformat() + "-07:00", True)),
    "healthapp": ("HealthApp_2k.log", "bc5be362f34b89cbc32aad2aec92a4879cdb67fc",
                  r"<Time>\|<Component>\|<Pid>\|<Content>", None,
                  lambda g: (_unpadded(g["Time"]), True)),
    "windows": ("Windows_2k.log", "bc5be362f34b89cbc32aad2aec92a4879cdb67fc",
                "<Date> <Time>, <Level>                  <Component>    <Content>", None,
                lambda g: (f"{g['Date']}T{g['Time']}", True)),
}


def _unpadded(text: str) -> str:
    """HealthApp's `20171223-22:15:35:11`: every field unpadded, the last milliseconds (.011)."""
    day, clock = text.split("-")
    h, m, s, ms = (int(x) for x in clock.split(":"))
    return f"{day[:4]}-{day[4:6]}-{day[6:]}T{h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def format_regex(log_format: str) -> re.Pattern[str]:
    """Loghub's header description → a regex (as logparser's `generate_logformat_regex`)."""
    parts = re.split(r"(<[^<>]+>)", log_format)
    regex = "".join(re.sub(" +", r"\\s+", p) if k % 2 == 0 else f"(?P<{p.strip('<>')}>.*?)"
                    for k, p in enumerate(parts))
    return re.compile("^" + regex + "$")


def main() -> None:
    for module, (name, commit, log_format, zone, when) in SYSTEMS.items():
        log = HERE / module / "2k" / name
        data = log.read_bytes()
        regex = format_regex(log_format)
        records, offset = [], 0
        for n, raw in enumerate(data.split(b"\n")[:-1]):
            m = regex.match(raw.decode("utf-8"))
            assert m, (module, n)
            g = m.groupdict()
            time, year_written = when(g)
            record = {"offset": offset, "line": n, "time": time}
            if g.get("Level"):
                record["level"] = g["Level"]
            record["message"] = g["Content"]
            if not year_written:
                record["year_written"] = False
            records.append(record)
            offset += len(raw) + 1
        system = name.split("_")[0]
        out = {"log": {"repo": "logpai/loghub", "path": f"{system}/{name}", "commit": commit},
               "expected": {"repo": "logpai/loghub", "path": f"{system}/{system}_2k.log_structured.csv", "commit": COMMIT},
               "timezone": zone,
               "note": "derived from the line by the system's log_format (the split behind Loghub's structured CSV)",
               "records": records}
        log.with_name(name + ".expected.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
