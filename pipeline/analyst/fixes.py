"""Fix proposals: a plan from the matched doc, and a unified diff against the read-only source
tree when the evidence names a file that one of the doc's fix hints applies to.

Nothing here writes to any repository: the diff is a proposal for a human to apply.
"""
from __future__ import annotations

import difflib
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

from pipeline.knowledge.index import Doc
from pipeline.state import IncidentState

# (path, line) references as Java, Python, Node and Go print them in stack traces. A path match
# starts only where a path token starts (the lookbehinds): otherwise a long run of path characters
# is rescanned from each of its positions, quadratic in the line (a 60,000-character message took
# 80 s while its approval held the incident's claim).
_PATH_START = r"(?<![\w@./$-])"
_FRAME_PATTERNS = (
    re.compile(r"\(([\w$.-]+\.(?:java|kt|scala)):(\d+)\)"),
    re.compile(r'File "([^"\n]+\.py)", line (\d+)'),
    re.compile(_PATH_START + r"([\w@./-]+\.(?:js|mjs|cjs|ts)):(\d+)(?::\d+)?"),
    re.compile(_PATH_START + r"([\w@./-]+\.go):(\d+)"),
)
_COMMENT = {".java": "//", ".kt": "//", ".js": "//", ".ts": "//", ".go": "//", ".py": "#"}


@dataclass(frozen=True)
class FileRef:
    path: str
    line: int


def file_refs(state: IncidentState) -> list[FileRef]:
    """Files and lines named in the evidence, in order of first appearance."""
    refs: list[FileRef] = []
    for event in state.evidence:
        text = "\n".join(filter(None, [event.message, event.stack]))
        for pattern in _FRAME_PATTERNS:
            for path, line in pattern.findall(text):
                ref = FileRef(path, int(line))
                if ref not in refs:
                    refs.append(ref)
    return refs


def _find_in_repo(repo: Path, ref_path: str, service: str) -> Path | None:
    """The repo file a stack-trace path points at: by path suffix, then by name under the service."""
    if not repo.is_dir():
        return None
    name = Path(ref_path).name
    candidates = [p for p in repo.rglob(name) if p.is_file()]
    parts = [p for p in Path(ref_path).parts if p not in ("/", "..", ".")]
    for size in range(len(parts), 0, -1):
        suffix = Path(*parts[-size:])
        hits = [c for c in candidates if c.as_posix().endswith(suffix.as_posix())]
        if len(hits) == 1:
            return hits[0]
    in_service = [c for c in candidates if service in c.parts]
    return in_service[0] if len(in_service) == 1 else (candidates[0] if len(candidates) == 1 else None)


def _diff(repo: Path, path: Path, before: list[str], after: list[str]) -> str:
    rel = path.relative_to(repo).as_posix()
    return "".join(difflib.unified_diff(before, after, fromfile=f"a/{rel}", tofile=f"b/{rel}"))


def _null_guard(lines: list[str], line_no: int, suffix: str) -> list[str] | None:
    if not 1 <= line_no <= len(lines):
        return None
    target = lines[line_no - 1]
    indent = target[: len(target) - len(target.lstrip())]
    comment = _COMMENT.get(suffix, "//")
    receiver = re.search(r"([A-Za-z_][\w]*)\s*(?:\?\.|\.|\[|->)", target.strip())
    name = receiver.group(1) if receiver else None
    if name in (None, "self", "this", "return", "await"):
        guard = [f"{indent}{comment} IncidentIQ: a value dereferenced on the next line can be null here; guard it\n"]
    elif suffix == ".py":
        guard = [f"{indent}if {name} is None:\n", f"{indent}    raise LookupError(\"{name} is missing\")  # IncidentIQ: was AttributeError on None\n"]
    elif suffix == ".go":
        guard = [f"{indent}if {name} == nil {{\n", f"{indent}\treturn fmt.Errorf(\"{name} is nil\") // IncidentIQ: was a nil pointer panic\n", f"{indent}}}\n"]
    elif suffix in (".js", ".ts", ".mjs", ".cjs"):
        guard = [f"{indent}if ({name} == null) {{\n", f"{indent}  throw new Error('{name} is missing'); // IncidentIQ: was a TypeError on undefined\n", f"{indent}}}\n"]
    else:
        guard = [f"{indent}if ({name} == null) {{\n", f"{indent}    throw new IllegalStateException(\"{name} is missing\"); // IncidentIQ: was a NullPointerException\n", f"{indent}}}\n"]
    return lines[: line_no - 1] + guard + lines[line_no - 1:]


def _set_property(lines: list[str], key: str, value: str) -> list[str] | None:
    leaf = key.split(".")[-1]
    pattern = re.compile(rf"^(\s*(?:{re.escape(key)}|{re.escape(leaf)})\s*[:=]\s*)(\S.*?)(\s*)$")
    out, changed = [], False
    for line in lines:
        m = pattern.match(line.rstrip("\n"))
        if m and not changed and m.group(2).strip("\"'") != str(value):
            out.append(f"{m.group(1)}{value}{m.group(3)}\n")
            changed = True
        else:
            out.append(line)
    return out if changed else None


def hint_steps(doc: Doc | None) -> list[str]:
    """The doc's fix hints as plan steps: `Hint (applies_to): text`."""
    return [f"Hint ({hint.get('applies_to') or ''}): {hint['hint']}" for hint in (doc.fix_hints if doc else ())
            if hint.get("hint")]


def curated_plan(state: IncidentState, doc: Doc | None) -> list[str]:
    """The deterministic fix plan: the recommendation's steps, then the doc's fix hints."""
    plan = list(state.recommendation.steps if state.recommendation else []) + hint_steps(doc)
    return plan or ["No curated fix applies; investigate manually."]


def propose(state: IncidentState, doc: Doc | None, repo_dir: Path, *, plan: list[str]) -> dict:
    """The fix proposal: the analyst's plan with the doc's hints, and a diff where the evidence
    names a file a fix hint applies to."""
    rca = state.rca
    plan = list(plan) + [step for step in hint_steps(doc) if step not in plan]
    if doc is None:
        return {"plan": plan, "diff": None, "target_file": None}
    refs = file_refs(state)
    for hint in doc.fix_hints:
        pattern = str(hint.get("applies_to") or "")
        kind = hint.get("kind")
        if kind == "null_guard":
            for ref in refs:
                if fnmatch.fnmatch(Path(ref.path).name, pattern) or fnmatch.fnmatch(ref.path, pattern):
                    path = _find_in_repo(repo_dir, ref.path, state.service)
                    if path is None:
                        continue
                    before = path.read_text(encoding="utf-8").splitlines(keepends=True)
                    after = _null_guard(before, ref.line, path.suffix)
                    if after:
                        return {"plan": plan, "diff": _diff(repo_dir, path, before, after),
                                "target_file": path.relative_to(repo_dir).as_posix()}
        elif kind == "set_property" and hint.get("key"):
            named = [r.path for r in refs]
            configs = [p for p in sorted(repo_dir.rglob("*")) if p.is_file() and fnmatch.fnmatch(p.name, pattern)] \
                if repo_dir.is_dir() else []
            # prefer the config of the incident's service, then any file the evidence names
            configs.sort(key=lambda p: (state.service not in p.parts, p.name not in named))
            for path in configs:
                before = path.read_text(encoding="utf-8").splitlines(keepends=True)
                after = _set_property(before, str(hint["key"]), str(hint.get("value", "")))
                if after:
                    return {"plan": plan, "diff": _diff(repo_dir, path, before, after),
                            "target_file": path.relative_to(repo_dir).as_posix()}
    if rca and rca.category != "unknown" and refs:
        plan.append(f"Evidence points at {refs[0].path}:{refs[0].line}; no machine-applicable hint matched it.")
    return {"plan": plan, "diff": None, "target_file": None}
