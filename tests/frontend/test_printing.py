"""printing.debugprint in Theano's exact format, and printing.pp."""
import io

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.printing import char_from_number, debugprint, pp


def test_identifiers_count_in_base_26_as_theano():
    assert [char_from_number(n) for n in (0, 1, 25, 26, 27, 52, 676)] == \
        ["A", "B", "Z", "BA", "BB", "CA", "BAA"]


def test_a_variable_prints_its_graph_with_ids_and_empty_order():
    x = T.dvector("x")
    assert debugprint(T.exp(x), file="str") == (
        "Elemwise{exp,no_inplace} [id A] ''   \n"
        " |x [id B]\n")


def test_a_variable_met_again_prints_only_its_id():
    x = T.dvector("x")
    y = x * 2
    assert debugprint(y + y, file="str") == (
        "Elemwise{add,no_inplace} [id A] ''   \n"
        " |Elemwise{mul,no_inplace} [id B] ''   \n"
        " | |x [id C]\n"
        " | |TensorConstant{(1,) of 2.0} [id D]\n"
        " |Elemwise{mul,no_inplace} [id B] ''   \n")


def test_names_of_results_are_quoted_and_unnamed_inputs_show_their_type():
    x = T.fmatrix()
    y = T.exp(x)
    y.name = "y"
    assert debugprint(y, file="str") == (
        "Elemwise{exp,no_inplace} [id A] 'y'   \n"
        " |<TensorType(float32, matrix)> [id B]\n")


def test_a_function_prints_its_final_graph_with_toposort_positions():
    x = T.dvector("x")
    f = theano.function([x], T.exp(x) * 2, mode="FAST_COMPILE")  # no fusion: one node per op
    order = f.maker.fgraph.toposort()
    assert [str(n.op) for n in order] == ["Elemwise{exp,no_inplace}", "Elemwise{mul,no_inplace}"]
    assert debugprint(f, file="str") == (
        "Elemwise{mul,no_inplace} [id A] ''   1\n"
        " |Elemwise{exp,no_inplace} [id B] ''   0\n"
        " | |x [id C]\n"
        " |TensorConstant{(1,) of 2.0} [id D]\n")


def test_fused_ops_print_as_theano_composites():
    x = T.dvector("x")
    f = theano.function([x], T.exp(x) * 2)
    assert [str(n.op) for n in f.maker.fgraph.toposort()] == ["Elemwise{Composite{[mul(exp(i0), 2.0)]}}"]


def test_a_function_with_updates_prints_the_updated_values_after_the_outputs():
    s = theano.shared(np.zeros(2), name="s")
    x = T.dvector("x")
    f = theano.function([x], (s * x).sum(), updates=[(s, s + x)], mode="FAST_COMPILE")
    assert debugprint(f, file="str") == (
        "Sum{acc_dtype=float64} [id A] ''   1\n"
        " |Elemwise{mul,no_inplace} [id B] ''   0\n"
        "   |s [id C]\n"
        "   |x [id D]\n"
        "Elemwise{add,no_inplace} [id E] ''   2\n"
        " |s [id C]\n"
        " |x [id D]\n")


def test_the_seed_squaring_function_on_the_cpu():
    a = T.fmatrix("a")
    sq = theano.function([a], a ** 2)
    text = debugprint(sq, file="str")
    lines = text.splitlines()
    assert lines[0].endswith("[id A] ''   0") and lines[0].startswith("Elemwise{")
    assert lines[1] == " |a [id B]"


def test_print_type_and_other_id_styles():
    x = T.dvector("x")
    y = T.exp(x)
    assert debugprint(y, file="str", print_type=True, ids="int") == (
        "Elemwise{exp,no_inplace} [id 0] <TensorType(float64, vector)> ''   \n"
        " |x [id 1] <TensorType(float64, vector)>\n")
    assert debugprint(y, file="str", ids="") == (
        "Elemwise{exp,no_inplace}  ''   \n"
        " |x \n")
    assert f"[id {id(x.value)}]" not in debugprint(y, file="str", ids="id")
    assert "[id " in debugprint(y, file="str", ids="id")


def test_depth_and_stop_on_name_limit_what_is_printed():
    x, w = T.dvector("x"), T.dvector("w")
    inner = T.log(w)
    inner.name = "inner"
    z = T.exp(x) + inner
    assert debugprint(z, file="str", depth=2) == (
        "Elemwise{add,no_inplace} [id A] ''   \n"
        " |Elemwise{exp,no_inplace} [id B] ''   \n"
        " |Elemwise{log,no_inplace} [id C] 'inner'   \n")
    assert debugprint(z, file="str", stop_on_name=True).splitlines()[-1] == \
        " |Elemwise{log,no_inplace} [id D] 'inner'   "


def test_a_list_shares_ids_and_files_are_written_and_returned():
    x = T.dvector("x")
    y = T.exp(x)
    out = io.StringIO()
    assert debugprint([y, y + 1], file=out) is out
    assert out.getvalue() == (
        "Elemwise{exp,no_inplace} [id A] ''   \n"
        " |x [id B]\n"
        "Elemwise{add,no_inplace} [id C] ''   \n"
        " |Elemwise{exp,no_inplace} [id A] ''   \n"
        " |TensorConstant{(1,) of 1.0} [id D]\n")


def test_debugprint_writes_to_stdout_by_default(capsys):
    x = T.dvector("x")
    assert debugprint(x) is None
    assert capsys.readouterr().out == "x [id A]\n"


def test_debugprint_of_something_else_is_an_error():
    with pytest.raises(TypeError, match="debugprint cannot print an object of type int"):
        debugprint(3)


def test_deep_graphs_print_without_recursion_limits():
    x = T.dscalar("x")
    y = x
    for _ in range(1500):  # deeper than Python's default recursion limit
        y = y + 1
    text = debugprint(y, file="str")
    assert text.count("\n") == 1 + 2 * 1500


def test_pp_prints_infix_expressions_as_theano():
    x, y = T.dvector("x"), T.dvector("y")
    m = T.dmatrix("m")
    i = T.lscalar("i")
    assert pp(x * y + x) == "((x * y) + x)"
    assert pp(-x / y) == "((-x) / y)"
    assert pp(T.exp(x) - T.log(y)) == "(exp(x) - log(y))"
    assert pp(T.dot(m, x)) == "(m \\dot x)"
    assert pp(m.T) == "m.T"
    assert pp(abs(x)) == "|x|"
    assert pp(x[1:3]) == "x[1:3]" and pp(m[i, ::2]) == "m[i, ::2]"
    assert pp(T.switch(x > y, x, y)) == "switch((x > y), x, y)"
    assert pp(x.sum()) == "Sum{acc_dtype=float64}(x)"
    assert theano.pp is pp


def test_pp_of_a_function_is_an_error():
    x = T.dvector("x")
    with pytest.raises(TypeError, match="use debugprint"):
        pp(theano.function([x], x))


def test_a_transfer_prints_as_gpu_from_host_over_the_host_graph():
    with theano.config.change_flags(floatX="float32"):
        a = T.matrix()
    assert debugprint(a.transfer(None), file="str") == (
        "GpuFromHost<None> [id A] ''   \n"
        " |<TensorType(float32, matrix)> [id B]\n")
    assert debugprint(a.transfer("cpu"), file="str") == "<TensorType(float32, matrix)> [id A]\n"


def test_inplace_nodes_print_their_pattern_and_destroy_map():
    x = T.dvector("x")
    with theano.change_flags(optimizer_excluding="fuse"):
        f = theano.function([x], T.exp(x) * 2 + 1)
    inplace = {str(n.op) for n in f.maker.fgraph.toposort() if n.op.inplace_pattern}
    assert inplace == {"Elemwise{add}[(0, 0)]", "Elemwise{mul}[(0, 0)]"}
    assert debugprint(f, file="str", print_destroy_map=True) == (
        "Elemwise{add}[(0, 0)] [id A] '' d={0: [0]}  2\n"
        " |Elemwise{mul}[(0, 0)] [id B] '' d={0: [0]}  1\n"
        " | |Elemwise{exp,no_inplace} [id C] ''   0\n"
        " | | |x [id D]\n"
        " | |TensorConstant{(1,) of 2.0} [id E]\n"
        " |TensorConstant{(1,) of 1.0} [id F]\n")


def test_views_print_their_view_map():
    m = T.dmatrix("m")
    g = theano.function([m], (m.T * 2).sum(), mode="FAST_COMPILE")
    assert debugprint(g, file="str", print_view_map=True, print_destroy_map=True) == (
        "Sum{acc_dtype=float64} [id A] ''   2\n"
        " |Elemwise{mul,no_inplace} [id B] ''   1\n"
        "   |InplaceDimShuffle{1,0} [id C] ''  v={0: [0]} 0\n"
        "   | |m [id D]\n"
        "   |TensorConstant{(1, 1) of 2.0} [id E]\n")
