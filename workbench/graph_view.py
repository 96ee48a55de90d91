"""The incident graph drawn offline: Graphviz DOT built from the compiled graph's nodes and edges.

`draw_mermaid_png()` would call a remote rendering service; nothing here leaves the machine.
"""
from __future__ import annotations

_TERMINALS = {"__start__": "START", "__end__": "END"}


def _quote(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def graph_dot(drawable, *, current: list[str] | tuple[str, ...] = (),
              visited: list[str] | tuple[str, ...] = ()) -> str:
    """DOT text of the graph (`ReviewService.flow()`); `current` nodes (where the run stands) are
    filled, `visited` outlined."""
    lines = ["digraph incident {", "  rankdir=TB;", '  node [shape=box, style="rounded,filled", fillcolor="#f2f0ff",'
             ' fontname="Helvetica", fontsize=11];', '  edge [fontname="Helvetica", fontsize=9];']
    for name in drawable.nodes:
        label = _TERMINALS.get(name, name)
        attrs = [f"label={_quote(label)}"]
        if name in _TERMINALS:
            attrs.append('shape=oval, fillcolor="#ffffff"')
        if name in current:
            attrs.append('fillcolor="#ff8c00", fontcolor="white", penwidth=2')
        elif name in visited:
            attrs.append('color="#6c63ff", penwidth=2')
        lines.append(f"  {_quote(name)} [{', '.join(attrs)}];")
    for edge in drawable.edges:
        style = ' [style=dashed]' if edge.conditional else ""
        lines.append(f"  {_quote(edge.source)} -> {_quote(edge.target)}{style};")
    lines.append("}")
    return "\n".join(lines)


def graph_mermaid(drawable) -> str:
    """The Mermaid text of the graph (text only; rendering it needs no service)."""
    return drawable.draw_mermaid()
