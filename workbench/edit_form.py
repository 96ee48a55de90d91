"""A form generated from the editable fields of the state (pipeline.state.EDITABLE_FIELDS).

Widget kinds follow the schema: choices for Literal fields, a bounded number for confidence,
one line per item for lists, a text area for text. Only changed fields become edits.
"""
from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Literal

import streamlit as st
from pydantic import BaseModel

from pipeline.state import EDITABLE_FIELDS, IncidentState
from workbench.audit_words import field_words


@dataclass(frozen=True)
class FieldSpec:
    name: str
    description: str
    kind: str  # choice | number | lines | text
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None


def _model_of(annotation) -> type[BaseModel]:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return args[0] if args else annotation


def field_specs() -> list[FieldSpec]:
    """One spec per editable field, its widget kind read from the state schema."""
    specs = []
    for name, description in EDITABLE_FIELDS.items():
        model: type[BaseModel] = IncidentState
        *parents, leaf = name.split(".")
        for part in parents:
            model = _model_of(model.model_fields[part].annotation)
        info = model.model_fields[leaf]
        annotation = info.annotation
        if typing.get_origin(annotation) is typing.Literal:
            specs.append(FieldSpec(name, description, "choice", choices=tuple(typing.get_args(annotation))))
        elif typing.get_origin(annotation) is list:
            specs.append(FieldSpec(name, description, "lines"))
        elif annotation in (float, int):
            low = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
            high = next((m.le for m in info.metadata if hasattr(m, "le")), None)
            specs.append(FieldSpec(name, description, "number", low=low, high=high))
        else:
            specs.append(FieldSpec(name, description, "text"))
    return specs


def current_value(state: dict, name: str):
    """The value of a dotted field in a state dict; None when a parent is missing."""
    value = state
    for part in name.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def editable_now(state: dict) -> list[FieldSpec]:
    """Fields that exist in this state (an incident not yet analysed has no rca to edit)."""
    return [s for s in field_specs() if "." not in s.name or isinstance(state.get(s.name.split(".")[0]), dict)]


# a field's label in the form: its word, as the audit says it (never the state's path, `rca.category`)
FORM_LABELS = {"rca.category": "Category", "rca.confidence": "Confidence (0 to 1)", "rca.evidence": "Evidence lines",
               "recommendation.steps": "Recommended steps"}


def form_label(spec: FieldSpec) -> str:
    """The label of a field's widget: "Category", "Root cause", "Recommended action" …"""
    return FORM_LABELS.get(spec.name) or field_words(spec.name).capitalize()


def choice_words(choice: str) -> str:
    """A choice as a reviewer reads it: "null reference" for `null_reference`."""
    return str(choice).replace("_", " ")


def render_fields(state: dict, *, key: str, persist_state: Literal["page", "session"] | None = None) -> None:
    """Widgets for every editable field, prefilled from `state` (read them with `collect_edits`);
    `persist_state="page"` keeps their values over runs that do not draw them (a folded expander)."""
    for spec in editable_now(state):
        value = current_value(state, spec.name)
        widget_key = f"{key}_{spec.name}"
        label = form_label(spec)
        if spec.kind == "choice":
            index = spec.choices.index(value) if value in spec.choices else 0
            st.selectbox(label, spec.choices, index=index, key=widget_key, format_func=choice_words,
                         persist_state=persist_state)
        elif spec.kind == "number":
            st.number_input(label, min_value=spec.low, max_value=spec.high, step=0.05,
                            value=float(value if value is not None else spec.low or 0.0), key=widget_key,
                            persist_state=persist_state)
        elif spec.kind == "lines":
            st.text_area(label, value="\n".join(value or []), key=widget_key, help="one item per line",
                         persist_state=persist_state)
        else:
            st.text_area(label, value=value or "", key=widget_key, persist_state=persist_state)


def field_value(spec: FieldSpec, raw):
    """A widget's value as the state stores it."""
    if spec.kind == "number":
        return round(float(raw), 4)
    if spec.kind == "lines":
        return [line.strip() for line in str(raw or "").splitlines() if line.strip()]
    return raw


def collect_edits(state: dict, *, key: str) -> dict:
    """The fields whose widgets (drawn by `render_fields` with the same key) differ from `state`."""
    edits = {}
    for spec in editable_now(state):
        widget_key = f"{key}_{spec.name}"
        if widget_key not in st.session_state:
            continue
        new = field_value(spec, st.session_state[widget_key])
        if new != current_value(state, spec.name):
            edits[spec.name] = new
    return edits


# -- the one edit form: the decision panel's Edit & approve, the State tab and a fork all use it ----

WHAT_EDITS_DO = ("An edit of the analysis (its category, root cause, confidence or severity) redoes the "
                 "recommendation and the fix proposal from it; an edit of the recommendation keeps it as edited and "
                 "derives the fix proposal again.")
AFTER = {
    "approve": "Edit & approve saves the edits as one audited change, re-runs what depends on them (as above) and "
               "approves at once: the approval is of the re-derived recommendation and fix proposal, and that "
               "proposal is the one recorded. The edited fields are marked human-edited.",
    "edit": "Save edits writes one audited change (an update checkpoint in the history) and re-runs what depends "
            "on it (as above); the incident then waits for approval again with the new analysis and proposal to "
            "review. The edited fields are marked human-edited.",
    "fork": "Fork applies the edits at that checkpoint on a new branch (the current one stays in the history as "
            "abandoned), re-runs what depends on them (the confirmation names the steps) and runs it to the "
            "approval gate, which needs a new decision.",
}


def edit_form(state: dict, *, key: str, mode: str, submit_label: str, on_submit, args: tuple,
              disabled: bool = False, primary: bool = True, submit_key: str | None = None,
              persist_state: Literal["page", "session"] | None = None) -> None:
    """The editable fields of `state` in a form, what saving does (`mode`: approve, edit or fork),
    and the submit button; its callback reads the edits with `collect_edits(state, key=key)`."""
    with st.form(f"{key}_form", border=False):
        st.caption(WHAT_EDITS_DO)
        render_fields(state, key=key, persist_state=persist_state)
        st.caption(AFTER[mode])
        st.form_submit_button(submit_label, type="primary" if primary else "secondary", disabled=disabled,
                              key=submit_key or f"{key}_submit", on_click=on_submit, args=args)


def refusal(exc, *, doing: str) -> str:
    """The same sentence for an edit the service refused, wherever it was made."""
    where = f" ({exc.field})" if getattr(exc, "field", None) else ""
    return f"{doing} not done{where}: {exc.message}"
