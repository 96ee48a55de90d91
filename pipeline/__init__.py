"""IncidentIQ Workbench engine.

Importing it changes nothing outside it: the checkpoint serializer's strictness is its own
(pipeline/store/checkpoint_values.py, OwnAllowlistSerde), not LANGGRAPH_STRICT_MSGPACK's, so
langgraph may be imported before or after pipeline.
"""
