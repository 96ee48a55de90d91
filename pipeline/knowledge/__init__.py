"""The curated error docs, their persistent Chroma index and embeddings, and KnowledgeService."""
