"""Record how long each test file takes, for the order the suite's two workers take files in.

    .venv/bin/python -m pytest -q --junitxml=/tmp/run.xml
    .venv/bin/python tools/test_durations.py /tmp/run.xml > tests/durations.json

pytest-xdist hands each worker whole files (`--dist loadfile`), by default the files with the most
tests first; a file of one slow test (a browser journey, a 100k-incident store) then comes last and
one worker runs it alone while the other idles. tests/conftest.py orders the files by these seconds,
longest first, so the two workers finish together (longest-processing-time-first). A file missing
here (a new one) counts as the median file; rerun this after adding a slow one.
"""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def durations(junit_xml: str) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown of its tests), from a JUnit XML report."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")
        # classname is tests.test_x or tests.test_x.TestClass: the file is the first two parts
        path = "/".join(module[:2]) + ".py" if len(module) >= 2 else ""
        if path:
            seconds[path] += float(case.get("time") or 0)
    return {path: round(s, 1) for path, s in sorted(seconds.items())}


if __name__ == "__main__":
    json.dump(durations(sys.argv[1]), sys.stdout, indent=0, sort_keys=True)
    sys.stdout.write("\n")
