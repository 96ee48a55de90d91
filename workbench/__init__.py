"""Building blocks of the Streamlit workbench shared by the pages in `app_pages/`.

Pages and these modules reach the engine only through the review service and the engine's
public objects (records queries, knowledge base); they never open SQLite or call LangGraph.
"""
