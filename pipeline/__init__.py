"""IncidentIQ Workbench engine.

LangGraph reads LANGGRAPH_STRICT_MSGPACK once, when it is first imported; setting it here,
before any submodule imports langgraph, makes checkpoint deserialisation strict everywhere.
"""
import os

os.environ["LANGGRAPH_STRICT_MSGPACK"] = "true"
