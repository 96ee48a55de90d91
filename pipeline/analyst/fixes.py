"""Fix proposals: a plan from the matched doc, and a unified diff against the read-only source
tree when the evidence names a file that one of the doc's fix hints applies to.

Nothing here writes to any repository: the diff is a proposal for a human to apply.
"""
from __future__ import annotations

import difflib
import fnmatch
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from pipeline.analyst.null_expression import null_expression
from pipeline.analyst.consistency import contradicted_hint
from pipeline.analyst.findings import FRAME_RULES, LIBRARY_PATH
from pipeline.analyst.technology import evidence_stack, foreign_step
from pipeline.knowledge.index import Doc
from pipeline.state import IncidentState

_COMMENT = {".java": "//", ".kt": "//", ".js": "//", ".ts": "//", ".go": "//", ".py": "#"}


@dataclass(frozen=True)
class FileRef:
    path: str
    line: int


# files and lines a proposal considers: the frames nearest the failure, in the order the traces
# name them; a 250 KB trace names thousands, and each was compared with every one kept before it
# (`ref not in refs` over a list): 8 such traces held a run for 397 s (issue 39.2)
MAX_REFS = 100


def file_refs(state: IncidentState) -> list[FileRef]:
    """Files and lines of the application's code named in the evidence (library frames left out),
    in order of first appearance; at most MAX_REFS of them."""
    refs: dict[FileRef, None] = {}  # insertion-ordered, and a membership test that does not grow
    seen: set[str] = set()
    for event in state.evidence:
        text = "\n".join(filter(None, [event.message, event.stack]))
        if text in seen:  # a burst repeats its trace
            continue
        seen.add(text)
        for pattern in FRAME_RULES:
            for match in pattern.finditer(text):
                path, line = match.group(match.lastindex - 1), match.group(match.lastindex)
                if not LIBRARY_PATH.search(path):
                    refs.setdefault(FileRef(path, int(line)))
                    if len(refs) >= MAX_REFS:
                        return list(refs)
    return list(refs)


def repo_files(repo: Path, pattern: str = "*") -> list[Path]:
    """The source tree's files whose name matches `pattern`, sorted (as os.walk finds them; runs
    for every incident's proposal, so the listing is kept while no folder of the tree changes)."""
    if not repo.is_dir():
        return []
    return [path for path in _listing(repo) if fnmatch.fnmatch(path.name, pattern)]


# The tree's sorted file list, kept with the modification time of every folder it walked: a file
# added, removed or renamed changes its folder's time, so a listing is used only while every
# folder still has the time it had when listed. Folders changed within RACY_NS of the listing are
# not trusted (a change in the same clock tick would keep the time): such a listing is not kept.
RACY_NS = 2_000_000_000
_LISTINGS: dict[tuple[str, str], tuple[tuple[tuple[str, int], ...], list[Path]]] = {}


def _listing(repo: Path) -> list[Path]:
    top = os.fspath(repo)
    # keyed by the tree as the caller spells it (its paths come back spelled so: callers take them
    # relative to the same spelling) and, for a relative one, the folder it is relative to
    key = (top, "" if os.path.isabs(top) else os.getcwd())
    kept = _LISTINGS.get(key)
    if kept is not None and all(_mtime_ns(folder) == stamp for folder, stamp in kept[0]):
        return kept[1]
    started = time.time_ns()
    stamps: list[tuple[str, int]] = []
    files: list[Path] = []
    complete = _walk(top, stamps, files)
    files.sort()
    if complete and all(stamp < started - RACY_NS for _, stamp in stamps):
        _LISTINGS[key] = (tuple(stamps), files)
    else:
        _LISTINGS.pop(key, None)
    return files


def _walk(top: str, stamps: list[tuple[str, int]], files: list[Path]) -> bool:
    # os.walk's view (symlinked folders listed, not entered); the folder's time is read before
    # its entries, so a change in between makes the next check walk again rather than keep it
    stamp = _mtime_ns(top)
    try:
        entries = list(os.scandir(top))
    except OSError:
        return False
    if stamp is None:
        return False
    stamps.append((top, stamp))
    complete = True
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if not is_dir:
            files.append(Path(top, entry.name))
        elif not entry.is_symlink():
            complete = _walk(entry.path, stamps, files) and complete
    return complete


def _mtime_ns(folder: str) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


def _find_in_repo(repo: Path, ref_path: str, service: str) -> Path | None:
    """The repo file a stack-trace path points at: by path suffix, then by name under the service."""
    if not repo.is_dir():
        return None
    name = Path(ref_path).name
    candidates = [p for p in repo_files(repo) if p.name == name]
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


def _null_guard(lines: list[str], line_no: int, suffix: str, said: list[str] | None = None) -> list[str] | None:
    """The lines with a guard before `line_no`: of the expression the errors name as null (`said`: the
    helpful NPE's call or variable, the attribute read from None or undefined), else of the line's first
    receiver."""
    if not 1 <= line_no <= len(lines):
        return None
    target = lines[line_no - 1]
    indent = target[: len(target) - len(target.lstrip())]
    comment = _COMMENT.get(suffix, "//")
    receiver = re.search(r"([A-Za-z_][\w]*)\s*(?:\?\.|\.|\[|->)", target.strip())
    name = null_expression(said or (), target) or (receiver.group(1) if receiver else None)
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


def _set_property(lines: list[str], key: str, value: str) -> tuple[list[str], int, str] | None:
    """The lines with the property set, the (1-based) line changed and its old value; None if unchanged."""
    leaf = key.split(".")[-1]
    pattern = re.compile(rf"^(\s*(?:{re.escape(key)}|{re.escape(leaf)})\s*[:=]\s*)(\S.*?)(\s*)$")
    out, changed, old = [], 0, ""
    for number, line in enumerate(lines, 1):
        m = pattern.match(line.rstrip("\n"))
        if m and not changed and m.group(2).strip("\"'") != str(value):
            out.append(f"{m.group(1)}{value}{m.group(3)}\n")
            changed, old = number, m.group(2).strip("\"'").rstrip(";")
        else:
            out.append(line)
    return (out, changed, old) if changed else None


def own_hints(doc: Doc | None, stack: frozenset[str]) -> list[dict]:
    """The doc's fix hints less another stack's (a hint naming only technologies the evidence does
    not show, or code of the doc's runtime when the evidence shows another: pipeline/analyst/technology.py
    `foreign_step`, `stack` from `evidence_stack`)."""
    if doc is None:
        return []
    return [hint for hint in doc.fix_hints
            if not foreign_step(f"{hint.get('hint') or ''} {hint.get('key') or ''}", stack, doc.systems)]


def foreign_fix(state: IncidentState, doc: Doc | None) -> str | None:
    """Why no code fix is proposed when none of the doc's fix hints is for the technology the
    evidence shows (issue 36.5: SQLAlchemy and redis-py hints for a Kafka client's refusal): such a
    proposal would be "No diff" and nothing to do, or another stack's change. None when one is."""
    if doc is None or own_hints(doc, evidence_stack(state.evidence)):
        return None
    shown = sorted(t for t in evidence_stack(state.evidence) if not t.startswith("named:"))
    what = ", ".join(shown) if shown else "no technology this analyzer recognises"
    return (f"no code fix: no fix hint of doc {doc.doc_id} is for the technology the evidence shows ({what}); "
            f"the recommendation's steps stand")


def hint_steps(doc: Doc | None, stack: frozenset[str], *, skip: dict | None = None) -> list[str]:
    """The doc's own fix hints (`own_hints`) as by-hand plan steps, leaving out the hint the diff applies (`skip`)."""
    return [f"By hand (not in the diff): {hint['hint']} ({hint.get('applies_to') or 'any file'})"
            for hint in own_hints(doc, stack) if hint.get("hint") and hint != skip]


def curated_plan(state: IncidentState, doc: Doc | None) -> list[str]:
    """The offline analyst's part of a fix plan: the doc's fix hints, to apply by hand.

    The recommendation's remediation stays in the recommendation: its order ("fix the leak, only
    then size the pool") is not the diff's, and a plan that says one thing while its diff does
    another cannot be approved in good conscience.
    """
    return hint_steps(doc, evidence_stack(state.evidence))


def sha256_of(plan: list[str], diff: str | None, target_file: str | None) -> str:
    """The proposal's hash: sha256 of canonical JSON of its plan, diff and target file."""
    canonical = json.dumps({"plan": list(plan), "diff": diff, "target_file": target_file},
                           sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def facts_of(state: IncidentState) -> list[str]:
    """The RCA's findings as the numbers and names a change rests on (pool stats first)."""
    found = state.rca.findings if state.rca else []
    pool = {f.kind[5:]: f.value for f in reversed(found) if f.kind.startswith("pool_") and f.kind != "pool_name"}
    waiting = [int(f.value) for f in found if f.kind == "pool_waiting" and f.value.isdigit()]
    if waiting:
        pool["waiting"] = str(max(waiting))
    facts = []
    if pool:
        facts.append("the pool at " + ", ".join(f"{k}={pool[k]}" for k in ("total", "active", "idle", "waiting")
                                                 if k in pool))
    for f in found:
        if f.kind in ("column", "table", "key", "host", "port", "timeout", "http_status", "limit", "constraint") \
                and len(facts) < 4:
            facts.append(f"{f.kind.replace('_', ' ')} {f.value}")
    return facts


def _change_step(change: dict, facts: list[str]) -> str:
    grounds = f" The evidence shows {'; '.join(facts)}." if facts else ""
    if change["kind"] == "set_property":
        return (f"The diff changes {change['key']} in {change['file']} from {change['before']} to {change['after']}"
                f" (line {change['line']}): {change['hint']}.{grounds}")
    return (f"The diff adds a null guard in {change['file']} before line {change['line']}, where the evidence "
            f"shows the failure ({change['ref']}): {change['hint']}.{grounds}")


def _no_diff_step(doc: Doc | None, refs: list[FileRef], category: str | None) -> str:
    if doc is None:
        return "No diff: no known cause, so no fix hint applies; nothing in the source tree is changed."
    named = f"{refs[0].path}:{refs[0].line}" if refs else None
    if named:
        return (f"No diff: no machine-applicable fix hint of doc {doc.doc_id} applies to {named}, which the "
                f"evidence names; that file is not changed by this proposal.")
    return f"No diff: the fix hints of doc {doc.doc_id} ({category}) apply to no file of the source tree."


def _verify_step(state: IncidentState) -> str:
    quote = state.rca.quotes[0].text if state.rca and state.rca.quotes else None
    if not quote:
        return "Verify: after the change, the errors of this incident stop."
    quote = quote if len(quote) <= 120 else quote[:119] + "…"
    return f"Verify: after the change, the errors of this incident stop (no more \"{quote}\")."


def propose(state: IncidentState, doc: Doc | None, repo_dir: Path, *, plan: list[str],
            facts: list[str] | None = None) -> dict:
    """The fix proposal: one change (a diff) when a fix hint applies to the source tree, and a plan
    whose first step states exactly that change with the evidence's numbers (or says plainly that
    there is no diff); then the analyst's steps and the hints to apply by hand; then how to verify."""
    facts = list(facts or [])
    stack = evidence_stack(state.evidence)
    change, diff, target = _first_change(state, doc, repo_dir, stack)
    steps = [_change_step(change, facts) if change else _no_diff_step(doc, file_refs(state),
                                                                     state.rca.category if state.rca else None)]
    skip = change.get("hint_ref") if change else None
    # the hint the diff applies is the diff's step, never a by-hand one too (whoever wrote the plan)
    unskipped = hint_steps(doc, stack, skip=skip)
    done = [] if skip is None else [s for s in hint_steps(doc, stack) if s not in unskipped]
    by_hand = ([step for step in plan if step not in steps and step not in done]
               + [s for s in unskipped if s not in plan])
    steps += by_hand + [_verify_step(state)]
    if change:
        change = {k: v for k, v in change.items() if k != "hint_ref"}
    return {"plan": steps, "diff": diff, "target_file": target, "change": change,
            "hash": sha256_of(steps, diff, target)}


def _first_change(state: IncidentState, doc: Doc | None, repo_dir: Path,
                  stack: frozenset[str]) -> tuple[dict | None, str | None, str | None]:
    if doc is None:
        return None, None, None
    refs = file_refs(state)
    for hint in own_hints(doc, stack):
        pattern = str(hint.get("applies_to") or "")
        kind = hint.get("kind")
        if kind == "null_guard":
            for ref in refs:
                if fnmatch.fnmatch(Path(ref.path).name, pattern) or fnmatch.fnmatch(ref.path, pattern):
                    path = _find_in_repo(repo_dir, ref.path, state.service)
                    if path is None:
                        continue
                    before = path.read_text(encoding="utf-8").splitlines(keepends=True)
                    after = _null_guard(before, ref.line, path.suffix, [e.message for e in state.evidence])
                    if after:
                        rel = path.relative_to(repo_dir).as_posix()
                        change = {"kind": "null_guard", "file": rel, "line": ref.line, "ref": f"{ref.path}:{ref.line}",
                                  "hint": hint.get("hint") or "guard the null value", "hint_ref": hint}
                        return change, _diff(repo_dir, path, before, after), rel
        elif kind == "set_property" and hint.get("key"):
            named = {r.path for r in refs}
            configs = repo_files(repo_dir, pattern)
            # prefer the config of the incident's service, then any file the evidence names
            configs.sort(key=lambda p: (state.service not in p.parts, p.name not in named))
            for path in configs:
                before = path.read_text(encoding="utf-8").splitlines(keepends=True)
                edited = _set_property(before, str(hint["key"]), str(hint.get("value", "")))
                if edited and contradicted_hint(state.rca.root_cause if state.rca else "", str(hint["key"]),
                                                edited[2], str(hint.get("value", ""))):
                    break  # the root cause says this is not the problem: the next hint, or no diff
                if edited:
                    after, line, old = edited
                    rel = path.relative_to(repo_dir).as_posix()
                    change = {"kind": "set_property", "file": rel, "line": line, "key": str(hint["key"]),
                              "before": old, "after": str(hint.get("value", "")),
                              "hint": hint.get("hint") or "set the property", "hint_ref": hint}
                    return change, _diff(repo_dir, path, before, after), rel
    return None, None, None
