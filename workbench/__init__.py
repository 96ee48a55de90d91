"""Building blocks of the Streamlit workbench shared by the pages in `app_pages/`.

Pages and these modules reach the engine only through the services of `pipeline.services`
(review, operations, knowledge); they never open SQLite, Chroma or call LangGraph
(tests/test_layout.py reads their imports).
"""
