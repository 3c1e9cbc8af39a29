"""The store room: Chroma (vectors + metadata, the source of truth) with a BM25 store in sync beside it.

``chroma`` connects and pages; ``metadata`` packs what a chunk stores; ``bm25`` is the sparse index;
``collection`` owns the collection, the BM25 sync and the writer lock; ``ingest`` and ``transfer`` write to
it; ``index`` puts them behind one ``PaperIndex``; ``retrieve`` searches both and fuses them (``adapter``
wraps that as a LangChain retriever).
"""
