"""A row of figures (`st.metric`) that wraps, each as wide as its label: equal columns cut the labels
at 1024 px with the sidebar open ("Agreement, ca…", "Awaiting appr…")."""
from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator


def figure_row() -> DeltaGenerator:
    """A horizontal container that wraps; each `metric` in it takes `width="content"`."""
    return st.container(horizontal=True, gap="large")
