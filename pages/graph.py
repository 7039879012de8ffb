"""Graph browser: find an entity, see its neighbourhood and relationships, ask from there."""
from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from tog_core.app import session as S
from tog_core.tog.linking import search_entities
from tog_core.app.session import K
from tog_core.render.viz import neighbourhood_html

ss = st.session_state
info, graph = ui.need_project()
st.title("Graph browser")
query = st.text_input("Find an entity", key=K.GRAPH_QUERY, placeholder="e.g. Mara Quell")
hits = search_entities(graph, query, limit=12) if query.strip() else []
if not hits:
    if query.strip():
        st.warning("No entity matches that name.")
    st.stop()

labels = {idx: f"{title}  ({score:.0f})" for idx, title, score in hits}
idx = st.selectbox("Matches (fuzzy score)", list(labels), format_func=labels.get, key=K.GRAPH_PICK)
if idx not in labels:
    idx = hits[0][0]
e = graph.entity(idx)
st.subheader(e.title)
st.caption(f"{e.type or 'entity'} · degree {e.degree}" + (" · placeholder (named only by relationships)"
                                                          if e.placeholder else ""))
if e.description:
    st.markdown(S.md_text(e.description))
if st.button("Ask from here", type="primary", help="Start a question with this entity as the topic entity"):
    ss[K.ASK_SEEDS] = [e.title]
    st.switch_page("pages/ask.py")

hops = st.radio("Hops", [1, 2], horizontal=True, key=K.GRAPH_HOPS)
ui.picture(neighbourhood_html(graph, idx, hops=hops, height="480px"), 530)

rels, others, outs = graph.neighbors(idx)
rows = []
for r, o, out in zip(rels.tolist(), others.tolist(), outs.tolist()):
    rel = graph.relationship(r)
    rows.append({"direction": "→" if out else "←", "other entity": graph.title(o), "relationship": rel.description,
                 "weight": rel.weight, "sources": len(rel.text_unit_ids)})
st.subheader(f"Relationships ({len(rows)})")
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
