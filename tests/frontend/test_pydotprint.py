"""printing.pydotprint: graphs as Graphviz DOT (exact text), rendered when Graphviz is there."""
import shutil

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering import printing_dot
from lowering.printing import GraphvizNotFoundError, graph_to_dot, pydotprint

HEADER = 'digraph G {\n  graph [bgcolor="#FFFFFF"];\n'
VEC = "TensorType(float64, vector)"


def small_graph():
    x, y = T.dvector("x"), T.dvector("y")
    return x, y, (x + y) * x


def test_a_small_graph_gives_exactly_its_nodes_and_edges():
    _, _, z = small_graph()
    assert graph_to_dot(z) == HEADER + (
        '  "apply0" [label="Elemwise{add,no_inplace}", shape=box, style=filled, '
        'fillcolor="#FFAABB"];\n'
        f'  "var0" [label="x {VEC}", shape=ellipse, style=filled, fillcolor="green"];\n'
        f'  "var0" -> "apply0" [label="0 {VEC}"];\n'
        f'  "var1" [label="y {VEC}", shape=ellipse, style=filled, fillcolor="green"];\n'
        f'  "var1" -> "apply0" [label="1 {VEC}"];\n'
        '  "apply1" [label="Elemwise{mul,no_inplace}", shape=box, style=filled, '
        'fillcolor="#FFAABB"];\n'
        f'  "apply0" -> "apply1" [label="0 {VEC}"];\n'
        f'  "var0" -> "apply1" [label="1 {VEC}"];\n'
        f'  "var2" [label="{VEC}", shape=ellipse, style=filled, fillcolor="lightblue"];\n'
        f'  "apply1" -> "var2" [label="{VEC}"];\n'
        "}")


def test_without_compact_intermediate_variables_are_drawn():
    _, _, z = small_graph()
    text = graph_to_dot(z, compact=False)
    assert f'  "var2" [label="{VEC}", shape=ellipse];\n' in text
    assert f'  "apply0" -> "var2" [label="{VEC}"];\n' in text
    assert f'  "var2" -> "apply1" [label="0 {VEC}"];\n' in text
    assert '"apply0" -> "apply1"' not in text


def test_a_compiled_function_shows_its_final_graph_shared_and_constants():
    x = T.dvector("x")
    s = theano.shared(np.zeros(3), name="s")
    g = theano.function([x], T.exp(x) * 2 + s, updates=[(s, s + x)], mode="FAST_COMPILE")
    text = graph_to_dot(g)
    assert text.count("shape=box") == len(g.maker.fgraph.toposort()) == 4
    assert '[label="s TensorType(float64, vector)", shape=ellipse, style=filled, ' \
           'fillcolor="YellowGreen"]' in text
    assert '[label="TensorConstant{(1,) of 2.0}", shape=ellipse, style=filled, ' \
           'fillcolor="SpringGreen"]' in text
    # Two nodes print alike: their positions tell them apart.
    assert '"apply2" [label="Elemwise{add,no_inplace} id=2"' in text
    assert '"apply3" [label="Elemwise{add,no_inplace} id=3"' in text
    assert text.count('fillcolor="lightblue"') == 2  # the output and the update


def test_shared_variables_of_a_users_graph_are_marked():
    s = theano.shared(np.zeros(2), name="s")
    assert 'fillcolor="YellowGreen"' in graph_to_dot(s * 2)


def test_fused_and_inplace_nodes_show_in_theano_notation_with_red_edges():
    x = T.dvector("x")
    with theano.change_flags(optimizer_excluding="fuse"):
        f = theano.function([x], T.exp(x) * 2 + 1)
    inplace = [a for a in f.maker.fgraph.toposort() if getattr(a.op, "inplace_pattern", None)]
    text = graph_to_dot(f)
    assert text.count('color="red"') == len(inplace)
    for a in inplace:
        assert f'label="{a.op}"' in text and str(a.op).endswith("[(0, 0)]")
    fused = theano.function([x], T.exp(x) * 2)
    assert 'label="Elemwise{Composite{[mul(exp(i0), 2.0)]}}"' in graph_to_dot(fused)


def test_views_get_blue_edges_and_long_labels_are_shortened():
    m = T.dmatrix("m")
    text = graph_to_dot(m.T * 2, max_label_size=20)
    assert '"var0" -> "apply0" [label="TensorType(float6...", color="blue"];' in text
    assert '"var0" [label="m TensorType(floa...", shape=ellipse' in text
    assert '"apply1" [label="Elemwise{mul,no_i...", shape=box' in text


def test_dot_format_is_written_without_graphviz(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(printing_dot.shutil, "which", lambda name: None)
    _, _, z = small_graph()
    path = tmp_path / "g.dot"
    pydotprint(z, str(path), format="dot")
    assert path.read_text() == graph_to_dot(z) + "\n"
    assert capsys.readouterr().out == f"The output file is available at {path}\n"
    assert pydotprint(z, format="dot", return_image=True) == (graph_to_dot(z) + "\n").encode()


def test_the_default_file_is_in_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, _, z = small_graph()
    pydotprint(z, format="dot", print_output_file=False)
    assert (tmp_path / "lowering.pydotprint.cpu.dot").read_text().startswith("digraph G {")


def test_rendering_without_graphviz_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(printing_dot.shutil, "which", lambda name: None)
    _, _, z = small_graph()
    for fmt in ("png", "svg"):
        with pytest.raises(GraphvizNotFoundError, match=r"Graphviz's 'dot'.*apt-get install "
                                                        r"graphviz.*format='dot'"):
            pydotprint(z, "unused." + fmt, format=fmt)


def test_an_unknown_format_is_refused():
    _, _, z = small_graph()
    with pytest.raises(ValueError, match="unknown format 'bmpx'"):
        pydotprint(z, format="bmpx", return_image=True)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_svg_and_png_are_rendered_by_graphviz(tmp_path):
    x = T.dvector("x")
    f = theano.function([x], T.exp(x) * 2)
    svg = tmp_path / "f.svg"
    pydotprint(f, str(svg), format="svg", print_output_file=False)
    text = svg.read_text()
    assert "<svg" in text and "Elemwise{Composite{[mul(exp(i0), 2.0)]}}" in text
    png = pydotprint(f, format="png", return_image=True)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
