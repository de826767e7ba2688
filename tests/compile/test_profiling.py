"""Profiling: function(profile=True) runs a per-node plan, prints Theano's tables, a memory
profile and a Chrome trace, and computes exactly what the unprofiled function computes."""
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lowering as theano
import lowering.tensor as T
from lowering.compile import profiling
from lowering.compile.profile.memory import CREATED, INPLACE, VIEW, NodeBuffers, peak_memory
from lowering.compile.profiling import ProfileStats, print_summary


@pytest.fixture(autouse=True)
def _no_profiles_left_for_exit():
    """Profiles made by a test are not printed when the test process exits."""
    saved = list(profiling._PROFILES)
    yield
    profiling._PROFILES[:] = saved


def quiet_stats(**kwargs):
    return ProfileStats(atexit_print=False, **kwargs)


def logistic_step(profile):
    """The seeds' logistic regression step (small), with its own shared variables."""
    rng = np.random.RandomState(3)
    x, y = T.fmatrix("x"), T.fvector("y")
    w = theano.shared(rng.randn(7).astype("float32"), name="w")
    b = theano.shared(np.float32(0.5), name="b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    train = theano.function([x, y], [p_1 > 0.5, xent], name="train", profile=profile,
                            updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
    return train, w, b


def data(rows=11):
    rng = np.random.RandomState(0)
    return (rng.randn(rows, 7).astype("float32"),
            rng.randint(0, 2, size=rows).astype("float32"))


# Rows of Theano's tables: percent, cumulative percent, seconds, seconds per call, ...
ROW = re.compile(r"^\s+(\d+\.\d)%\s+(\d+\.\d)%\s+(\d+\.\d+)s\s+(\S+)s\s+(.*)$")


def table(text: str, title: str) -> list[tuple]:
    """The rows of the table ``title`` ("Class", "Ops" or "Apply") of a summary."""
    lines = text.splitlines()
    start = lines.index(title) + 3
    rows = []
    for line in lines[start:]:
        match = ROW.match(line)
        if match is None:
            break
        rows.append(match.groups())
    return rows


def test_profiled_calls_compute_what_the_unprofiled_function_computes():
    train, w, b = logistic_step(quiet_stats())
    plain, w2, b2 = logistic_step(False)
    assert plain.profile is None and train.profile is not None
    x, y = data()
    for _ in range(3):
        got, want = train(x, y), plain(x, y)
        for g, e in zip(got, want):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(w.get_value(), w2.get_value(), rtol=1e-6)
    np.testing.assert_allclose(b.get_value(), b2.get_value(), rtol=1e-6)


def test_every_node_is_in_the_tables_with_one_run_per_call():
    train, _, _ = logistic_step(quiet_stats())
    x, y = data()
    calls = 4
    for _ in range(calls):
        train(x, y)
    stats = train.profile
    nodes = train.maker.fgraph.toposort()
    assert [n.apply for n in stats.nodes] == [str(a) for a in nodes]
    assert all(n.calls == calls for n in stats.nodes)
    assert stats.fct_callcount == calls
    text = stats.summary_text(n_ops_to_print=100, n_apply_to_print=100)
    apply_rows = table(text, "Apply")
    assert len(apply_rows) == len(nodes)
    listed = {}
    for *_, rest in apply_rows:
        count, index, name = rest.split(None, 2)
        assert int(count) == calls
        listed[int(index)] = name
    assert listed == {k: str(a) for k, a in enumerate(nodes)}
    ops_rows = table(text, "Ops")
    assert sum(int(r[4].split()[2]) for r in ops_rows) == len(nodes)  # <#apply>
    assert {r[4].split(None, 3)[3] for r in ops_rows} == {str(a.op) for a in nodes}


def test_percentages_add_up_to_a_hundred():
    train, _, _ = logistic_step(quiet_stats())
    x, y = data()
    for _ in range(3):
        train(x, y)
    text = train.profile.summary_text(n_ops_to_print=100, n_apply_to_print=100)
    for title in ("Class", "Ops", "Apply"):
        rows = table(text, title)
        assert abs(sum(float(r[0]) for r in rows) - 100) < 0.1 * len(rows) + 0.05, title
        assert rows[-1][1] == "100.0", title
        cumulative = [float(r[1]) for r in rows]
        assert cumulative == sorted(cumulative), title
        seconds = [float(r[2]) for r in rows]
        assert seconds == sorted(seconds, reverse=True), title


def test_function_section_reports_calls_compile_time_and_each_pass():
    train, _, _ = logistic_step(quiet_stats())
    x, y = data()
    train(x, y)
    train(x, y)
    stats = train.profile
    text = stats.summary_text()
    assert text.startswith("Function profiling\n==================\n  Message: train\n")
    assert "  Time in 2 calls to Function.__call__: " in text
    assert f"    Number of Apply nodes: {len(train.maker.fgraph.toposort())}\n" in text
    passes = [p.split("{")[0] for p in train.pipeline.split(",")]
    assert [p.split("{")[0] for p in stats.pass_times] == passes
    for name in stats.pass_times:
        assert re.search(rf"^       {re.escape(name)}: \S+s$", text, re.M)
    assert 0 < stats.optimizer_time < stats.compile_time
    assert stats.thunk_time <= stats.vm_call_time <= stats.fct_call_time
    assert re.search(r"^Spent \S+s\(100\.00%\) in cpu Op, 0\.000s\(0\.00%\) in gpu Op and "
                     r"0\.000s\(0\.00%\) transfer Op$", text, re.M)


def test_class_names_carry_their_module_and_time_splits_by_device():
    train, _, _ = logistic_step(quiet_stats())
    x, y = data()
    train(x, y)
    stats = train.profile
    classes = {row[0] for row in stats.by_class()}
    assert "lowering.frontend.theano_ops.CGemv" in classes
    kinds = stats.time_by_kind()
    assert kinds["gpu"] == kinds["transfer"] == 0
    assert kinds["cpu"] == pytest.approx(stats.thunk_time)


def test_the_interpreter_mode_profiles_interpreted_nodes():
    x = T.dvector("x")
    f = theano.function([x], T.exp(x) + x, mode="INTERP", profile=quiet_stats())
    np.testing.assert_allclose(f(np.arange(3.0)), np.exp(np.arange(3.0)) + np.arange(3.0))
    assert [n.impl for n in f.profile.nodes] == ["Py", "Py"]
    assert {row[4] for row in f.profile.by_op()} == {"Py"}


def test_a_failing_call_changes_no_shared_variable():
    s = theano.shared(np.zeros(3), name="s")
    x = T.dvector("x")
    f = theano.function([x], (x + s).sum(), updates=[(s, s + x)], profile=quiet_stats())
    with pytest.raises(ValueError):
        f(np.ones(4))
    np.testing.assert_array_equal(s.get_value(), np.zeros(3))
    f(np.ones(3))
    np.testing.assert_array_equal(s.get_value(), np.ones(3))


def test_several_functions_can_share_one_profile():
    stats = quiet_stats(message="both")
    x = T.dvector("x")
    f = theano.function([x], T.exp(x), profile=stats, name="f")
    g = theano.function([x], T.log(x), profile=stats, name="g")
    f(np.ones(2))
    g(np.ones(2))
    g(np.ones(2))
    assert stats.fct_callcount == 3
    assert [(n.function, n.calls) for n in stats.nodes] == [("f", 1), ("g", 2)]
    assert f.profile is g.profile is stats


def test_profile_mode_and_the_flag_profile_functions():
    x = T.dvector("x")
    assert theano.function([x], x * 2, mode="ProfileMode").profile is not None
    with theano.change_flags(profile=True):
        f = theano.function([x], x * 2)
        assert f.profile is not None
        assert theano.function([x], x * 2, profile=False).profile is None
    assert f.profile in profiling.profiles()


def test_print_summary_adds_the_sum_of_several_profiles():
    x = T.dvector("x")
    f = theano.function([x], T.exp(x), profile=quiet_stats(), name="f")
    g = theano.function([x], T.exp(x) * 3, profile=quiet_stats(), name="g")
    f(np.ones(2))
    g(np.ones(2))
    out = __import__("io").StringIO()
    assert print_summary(out, [f.profile, g.profile]) == 2
    text = out.getvalue()
    assert text.count("Function profiling\n") == 3
    assert "  Message: Sum of all(2) printed profiles at exit\n" in text
    assert "  Time in 2 calls to Function.__call__" in text


def test_the_trace_has_one_event_per_node_per_call(tmp_path):
    train, _, _ = logistic_step(quiet_stats(trace=True))
    x, y = data()
    calls = 3
    for _ in range(calls):
        train(x, y)
    path = tmp_path / "trace.json"
    train.profile.write_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    nodes = [e for e in events if e.get("cat") == "node"]
    call_events = [e for e in events if e.get("cat") == "call"]
    assert len(nodes) == calls * len(train.maker.fgraph.toposort())
    assert len(call_events) == calls
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= 0 for e in nodes + call_events)
    names = [e for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert [e["args"]["name"] for e in names] == ["Function train"]
    assert {e["pid"] for e in nodes + call_events} == {names[0]["pid"]}
    for call in call_events:  # each call's nodes run inside it, in toposort order
        inside = [e for e in nodes if call["ts"] <= e["ts"] <= call["ts"] + call["dur"]]
        assert [e["args"]["id"] for e in inside] == list(range(len(inside)))
        assert len(inside) == len(train.maker.fgraph.toposort())


def chain(mode, excluding=""):
    """exp(x) * 2 + 1 as three nodes (no fusion), profiled after one call on 1000 doubles."""
    x = T.dvector("x")
    with theano.change_flags(optimizer_excluding=excluding):
        f = theano.function([x], T.exp(x) * 2 + 1, mode=mode, profile=quiet_stats())
    f(np.zeros(1000))
    return f


def test_memory_peaks_follow_liveness_and_gc():
    f = chain("FAST_COMPILE")  # no inplace stage: every node creates its result
    assert [n.storage for n in f.profile.nodes] == [("c",)] * 3
    assert [n.outputs[0][3] for n in f.profile.nodes] == [8000] * 3
    peaks = f.profile.memory_peaks()
    assert peaks.current == {"cpu": 16000, "gpu": 0, "all": 16000}  # two alive at a time
    assert peaks.without_inplace == peaks.current
    assert peaks.without_gc == {"cpu": 24000, "gpu": 0, "all": 24000}
    text = f.profile.summary_text()
    assert "    Max peak memory with current setting (allow_gc=True)\n        CPU: 16KB\n" \
           "        GPU: 0KB\n        CPU + GPU: 16KB\n" in text
    assert "    Max peak memory if allow_gc=False\n        CPU: 23KB\n" in text


def test_memory_peaks_count_what_the_compiler_did_in_place():
    f = chain("FAST_RUN", excluding="fuse")
    patterns = f.maker.inplace_patterns
    codes = [n.storage for n in f.profile.nodes]
    assert codes == [("i",) if patterns.get(a.ir_op) else ("c",)
                     for a in f.maker.fgraph.toposort()]
    created = sum(code == ("c",) for code in codes)
    peaks = f.profile.memory_peaks()
    assert peaks.without_inplace["cpu"] == 16000
    assert peaks.without_gc["cpu"] == 8000 * created
    assert peaks.current["cpu"] == min(created, 2) * 8000


def test_the_memory_table_needs_the_flag_profile_memory():
    f = chain("FAST_COMPILE")
    assert "<Sum apply outputs (bytes)>" not in f.profile.summary_text()
    with theano.change_flags(profile_memory=True):
        text = f.profile.summary_text()
    assert "          8000B  [(1000,)] c Elemwise{exp,no_inplace}(x)\n" in text
    assert "    input 0: dtype=float64, shape=(1000,), strides=(8,) \n" in text


def test_peak_memory_model_counts_views_and_inplace_results_as_free():
    nodes = [NodeBuffers((0,), (1,), (CREATED,)),          # t1 = f(x)
             NodeBuffers((1,), (2,), ((INPLACE, 0),)),     # t2 = g(t1), written into t1
             NodeBuffers((2,), (3,), ((VIEW, 0),)),        # v = t2.T
             NodeBuffers((3,), (4,), (CREATED,))]          # t4 = h(v): t1 alive through v
    sizes = {1: 10, 2: 10, 3: 10, 4: 5}
    assert peak_memory(nodes, sizes, returned=(4,)) == 15
    assert peak_memory(nodes, sizes, returned=(4,), inplace=False) == 20
    assert peak_memory(nodes, sizes, returned=(4,), allow_gc=False) == 15
    assert peak_memory(nodes, sizes, returned=(4,), allow_gc=False, inplace=False) == 25
    # A returned view keeps its buffer to the end; an unused result is freed at once.
    assert peak_memory(nodes[:3], sizes, returned=(3,)) == 10
    unused = [NodeBuffers((0,), (1,), (CREATED,)), NodeBuffers((0,), (2,), (CREATED,))]
    assert peak_memory(unused, {1: 7, 2: 3}, returned=(2,)) == 7


def test_the_summary_is_printed_at_exit_and_the_trace_written(tmp_path):
    trace = tmp_path / "run.json"
    script = textwrap.dedent("""
        import numpy as np
        import lowering as theano
        import lowering.tensor as T
        x = T.dvector("x")
        f = theano.function([x], T.exp(x), name="first")
        g = theano.function([x], T.exp(x) * 2, name="second")
        for _ in range(3):
            f(np.ones(4))
        g(np.ones(4))
        print("done")
    """)
    env = dict(os.environ, LOWERING_FLAGS=f"profile=True,profiling.trace={trace}")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "done\n"
    err = run.stderr
    assert err.count("Function profiling\n==================\n") == 3
    assert "  Message: first\n  Time in 3 calls to Function.__call__" in err
    assert "  Message: second\n  Time in 1 calls to Function.__call__" in err
    assert "  Message: Sum of all(2) printed profiles at exit\n" \
           "  Time in 4 calls to Function.__call__" in err
    events = json.loads(trace.read_text())["traceEvents"]
    processes = sorted(e["args"]["name"] for e in events if e["name"] == "process_name")
    assert processes == ["Function first", "Function second"]
    assert sum(e.get("cat") == "call" for e in events) == 4
