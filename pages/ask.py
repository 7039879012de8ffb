"""Ask: one automatic ToG run with live progress, the streamed answer, pictures and evidence."""
from __future__ import annotations

import streamlit as st

import ui
from tog_core.app import session as S
from tog_core.app.session import K
from tog_core.render.viz import chains_html, frontier_html

ss = st.session_state
info, graph = ui.need_project()
st.title("Ask the knowledge graph")
question = st.text_area("Question", key=K.ASK_QUESTION, height=80,
                        placeholder="In which town was the founder of the Lanternwright Guild born?")
seeds = ss.get(K.ASK_SEEDS) or []
if seeds:
    c1, c2 = st.columns([5, 1])
    c1.info("Starting from: " + ", ".join(seeds))
    if c2.button("Clear start"):
        ss[K.ASK_SEEDS] = []
        st.rerun()

if st.button("Ask", type="primary", disabled=not (question or "").strip()):
    engine, model_info, notes = ui.engine_or_stop()
    for n in notes:
        st.caption(n)
    progress = {"depth": 1, "stage": "linking", "usage": {}}
    with st.status("Searching the graph…", expanded=False) as status:
        def on_stage(depth: int, stage: str) -> None:
            progress.update(depth=depth, stage=stage)
            status.update(label=S.progress_line(depth, stage, progress["usage"]))

        def on_usage(u: dict) -> None:
            progress["usage"] = u
            status.update(label=S.progress_line(progress["depth"], progress["stage"], u))

        box, parts = st.empty(), []

        def on_token(t: str) -> None:
            parts.append(t)
            box.markdown(S.md_text("".join(parts)))

        def on_answer_reset() -> None:  # the stream broke: the answer composed from the chains follows
            parts.clear()
            box.empty()

        try:
            trace = S.run_question(engine, question, seeds=seeds or None, store=ui.store(), model_info=model_info,
                                   on_stage=on_stage, on_token=on_token, on_usage=on_usage,
                                   on_answer_reset=on_answer_reset)
        except ValueError as err:
            status.update(label="Could not start", state="error")
            st.error(str(err))
            st.stop()
        box.empty()
        status.update(label="Done · " + S.progress_line(progress["depth"], trace.stop_reason or "", trace.stats),
                      state="error" if trace.stop_reason == "error" else "complete")
    ss[K.ASK_TRACE] = trace.to_dict()
    ss.pop(K.ASK_DEPTH, None)

t = ss.get(K.ASK_TRACE)
if not t:
    st.stop()
st.subheader("Answer")
st.caption(f"run {t['run_id']} · stop reason: {t.get('stop_reason')} · answered by "
           f"{'the LLM' if t.get('answer_by') == 'llm' else 'the chains (no LLM)'}")
st.markdown(S.md_text(t.get("answer") or "(no answer)"))
if t.get("error"):
    st.error(f"The run hit an error: {t['error']}")
for line in S.fallbacks(t):
    st.warning("Fallback: " + line)
stats = t.get("stats") or {}
m = st.columns(4)
m[0].metric("LLM calls", stats.get("llm_calls", 0))
m[1].metric("Tokens", stats.get("prompt_tokens", 0) + stats.get("completion_tokens", 0))
m[2].metric("Cost", "unknown" if stats.get("cost_usd") is None else f"${stats['cost_usd']:.4f}")
m[3].metric("Time", f"{stats.get('wall_s', 0):.1f} s")

tab_chains, tab_search, tab_evidence = st.tabs(["Reasoning chains", "Search replay", "Evidence"])
with tab_chains:
    ui.picture(chains_html(t, height="420px"), 470)
with tab_search:
    depths = sorted({int(s["depth"]) for s in t.get("steps") or []})
    shown = st.select_slider("Replay up to depth", depths, value=depths[-1], key=K.ASK_DEPTH) \
        if len(depths) > 1 else (depths[-1] if depths else None)
    ui.picture(frontier_html(t, shown, height="520px"), 570)
with tab_evidence:
    chains = [c for c in t.get("chains") or [] if c]
    if not chains:
        st.caption("No chains, so no evidence.")
    for ci in range(len(chains)):
        with st.expander(f"Chain {ci + 1}" + (" (used for the answer)" if ci == 0 else ""), expanded=ci == 0):
            for link in S.evidence(graph, t, ci):
                st.markdown(f"**{S.md_text(link['source'])}** → {S.md_text(link['relation'])} → "
                            f"**{S.md_text(link['target'])}**")
                if link["description"] and link["description"] != link["relation"]:
                    st.caption(S.md_text(link["description"]))
                for uid, text in link["units"]:
                    st.caption(f"source text {S.md_text(uid[:12])}…")
                    st.text(text)
                if link["more"]:
                    st.caption(f"… and {link['more']} more source text(s)")
