"""Graph browser: find an entity (nothing close = no match), see its neighbourhood coloured by type, click a
neighbour (or pick it from the list) to move to it, ask from there."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer import shell
from explorer import projects
from explorer import ui
from tog_core.app import views as V
from tog_core.app.inputs import NAME_MAX
from tog_core.app.session import K
from tog_core.render.neighbourhood import neighbourhood_html

shell.ensure()  # a deep link on a fresh server runs this page without app.py

ss = st.session_state
info, graph = projects.need_project()
st.title("Graph browser")
query = st.text_input("Find an entity", key=K.GRAPH_QUERY, placeholder="e.g. a person's or a place's name",
                      max_chars=NAME_MAX)
if ss.get("_graph_query_seen") != query:  # a new search: forget where clicks had moved to
    ss["_graph_query_seen"] = query
    ss.pop(K.GRAPH_CENTRE, None)
hits = V.entity_matches(graph, query) if query.strip() else []
if not query.strip():  # an empty page is a dead end: offer the best-connected entities to start from
    st.caption("Or start from one of the best-connected entities:")
    with st.container(horizontal=True):
        for title in V.best_connected(graph, 6):
            st.button(V.md_text(title), key=f"graph_start_{title}", on_click=ss.__setitem__,
                      args=(K.GRAPH_QUERY, title))
    st.stop()
if not hits and K.GRAPH_CENTRE not in ss:
    st.warning(f"No entity matches “{V.md_text(query.strip())}”: nothing in this project has a name close to it.")
    st.stop()

labels = {idx: f"{title}  ({score:.0f})" for idx, title, score in hits}
if hits:
    pick = st.selectbox("Matches (fuzzy score)", list(labels), format_func=labels.get, key=K.GRAPH_PICK,
                        on_change=lambda: ss.pop(K.GRAPH_CENTRE, None))
    pick = pick if pick in labels else hits[0][0]
idx = ss.get(K.GRAPH_CENTRE, pick if hits else None)
e = graph.entity(idx)
st.subheader(V.md_text(e.title))
st.caption(f"{V.md_text((e.type or 'no type').lower())} · degree {e.degree}" +
           (" · placeholder (named only by relationships)" if e.placeholder else ""))
if e.description:
    st.markdown(V.md_text(e.description))
if st.button("Ask from here", type="primary", help="Start a question with this entity as the topic entity"):
    ss[K.ASK_SEEDS] = [e.title]
    ss.pop(K.ASK_TRACE, None)  # the last answer and question came from another start: the Ask page opens empty
    ss[K.ASK_QUESTION] = ""
    st.switch_page("pages/ask.py")


def move(value: dict) -> None:
    try:
        target = int(value.get("ref"))
    except (TypeError, ValueError):
        return
    if 0 <= target < graph.n_entities:
        ss[K.GRAPH_CENTRE] = target


hops = st.radio("Hops", [1, 2], horizontal=True, key=K.GRAPH_HOPS)
page = ui.cached(("neighbourhood", projects.version(ss[K.PROJECT_OK]), idx, hops),
                 lambda: neighbourhood_html(graph, idx, hops=hops, height="520px", clickable=True))
ui.picture_pick(page, 520, key=K.GRAPH_CLICK, on_pick=move)

rels, others, outs = graph.neighbors(idx)
rows = []
for r, o, out in zip(rels.tolist(), others.tolist(), outs.tolist()):
    rel = graph.relationship(r)
    rows.append({"direction": "→" if out else "←", "other entity": graph.title(o), "type": graph.entity(o).type,
                 "relationship": rel.description, "weight": rel.weight, "sources": len(rel.text_unit_ids), "idx": o})
neighbours = {}
for r in rows:  # name → index; a name shared by two neighbours gets its index added
    name = r["other entity"] if r["other entity"] not in neighbours else f"{r['other entity']} (#{r['idx']})"
    neighbours.setdefault(name, r["idx"])
go = st.selectbox("Go to a neighbour", list(neighbours), index=None, placeholder="or click one in the picture",
                  key=f"graph_go_{idx}")
if go is not None:
    ss[K.GRAPH_CENTRE] = neighbours[go]
    st.rerun()
st.subheader(f"Relationships ({len(rows)})")
st.dataframe(pd.DataFrame(rows).drop(columns=["idx"]) if rows else pd.DataFrame(), hide_index=True, width="stretch")
