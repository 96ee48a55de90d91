"""The incident graph (ARCHITECTURE.md):

START → intake ─┬→ retrieval ─┬→ rca → recommend → propose_fix → approval ⏸ → route ─┬→ code_fix → END
                └→ rag ───────┘   ▲                                           ├→ END
                                  └──────────────── revise ◄──────────────────┘
"""
from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from pipeline.engine import nodes
from pipeline.engine.nodes import Deps
from pipeline.state import IncidentState

# the compiled graph: its state, the runtime context the nodes read (Deps), its input and output
IncidentGraph = CompiledStateGraph[IncidentState, Deps, IncidentState, IncidentState]

NODE_NAMES = ("intake", "retrieval", "rag", "rca", "recommend", "propose_fix", "approval", "revise", "code_fix")


def build_graph(checkpointer: BaseCheckpointSaver[str] | None) -> IncidentGraph:
    """Compile the incident graph against a checkpointer (one per process, shared)."""
    builder = StateGraph(IncidentState, context_schema=Deps)
    for name in NODE_NAMES:
        builder.add_node(name, getattr(nodes, name))
    builder.add_edge(START, "intake")
    builder.add_edge("intake", "retrieval")
    builder.add_edge("intake", "rag")
    builder.add_edge(["retrieval", "rag"], "rca")
    builder.add_edge("rca", "recommend")
    builder.add_edge("recommend", "propose_fix")
    builder.add_edge("propose_fix", "approval")
    builder.add_conditional_edges("approval", nodes.route_after_approval, ["code_fix", "revise", END])
    # a request for changes re-analyses: the RCA, the recommendation and the proposal are redone
    builder.add_edge("revise", "rca")
    builder.add_edge("code_fix", END)
    return builder.compile(checkpointer=checkpointer)


def thread_config(incident_id: str) -> RunnableConfig:
    """The thread config: addresses the newest checkpoint of the incident's run."""
    return {"configurable": {"thread_id": incident_id}}
