"""The one edit form (Edit & approve, the State tab, a fork) labels its fields in a reviewer's words,
"Category", "Root cause", "Recommended steps", never the state's path and its description
("rca.category — root-cause category"), and offers the categories as words ("null reference")
while storing the category's name."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _form():
    from workbench.edit_form import render_fields

    render_fields({"severity": "high",
                   "rca": {"category": "null_reference", "root_cause": "a null cart", "confidence": 0.9,
                           "evidence": ["NullPointerException at CartService.java:87"]},
                   "recommendation": {"action": "guard the cart", "steps": ["add a null check"], "risk": "low"}},
                  key="edit")


def test_the_edit_forms_labels_and_categories_are_words():
    at = AppTest.from_function(_form).run(timeout=30)
    labels = [w.label for w in [*at.selectbox, *at.text_area, *at.number_input]]
    assert set(labels) == {"Category", "Severity", "Root cause", "Evidence lines", "Recommended action",
                           "Recommended steps", "Risk", "Confidence (0 to 1)"}, labels
    category = at.selectbox(key="edit_rca.category")
    assert "null reference" in category.options and "null_reference" not in category.options
    assert category.value == "null_reference"  # what is stored is the category's name

