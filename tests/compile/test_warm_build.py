"""A build from a filled disk cache in a new process loads code and does not compile any: no LLVM
optimization and no code generation, neither for the function nor for the process's runtime
libraries (thread pool, Ctrl-C counter, call wrapper). Counted on llvmlite's API, in child
processes, so that nothing of this process's state is shared."""
import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import json
    import llvmlite.binding as llvm
    import numpy as np

    counts = {"optimize": [], "emit_object": 0}
    real_pass_builder = llvm.create_pass_builder
    real_emit = llvm.TargetMachine.emit_object

    def pass_builder(tm, pto):
        counts["optimize"].append(pto.speed_level)
        return real_pass_builder(tm, pto)

    def emit_object(self, module):
        counts["emit_object"] += 1
        return real_emit(self, module)

    llvm.create_pass_builder = pass_builder
    llvm.TargetMachine.emit_object = emit_object

    import lowering as theano
    import lowering.tensor as T

    rng = np.random.RandomState(0)
    X = rng.rand(64, 16).astype("float32")
    Y = (rng.rand(64) > 0.5).astype("float32")
    x, y = T.fmatrix("x"), T.fvector("y")
    w = theano.shared(np.zeros(16, dtype="float32"), name="w")
    p = T.nnet.sigmoid(T.dot(x, w))
    cost = T.nnet.binary_crossentropy(p, y).mean()
    train = theano.function([x, y], cost, updates=[(w, w - 0.1 * T.grad(cost, w))])
    costs = [float(train(X, Y)) for _ in range(3)]
    print(json.dumps({**counts, "costs": costs, "w": w.get_value().tolist()}))
""")


def _run(script, env):
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_warm_build_in_a_new_process_compiles_nothing(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("LOWERING_FLAGS", "THEANO_FLAGS")}
    env["LOWERING_CACHE_DIR"] = str(tmp_path / "cache")
    env["LOWERING_FLAGS"] = "openmp=True,cpu_threads=2"  # the thread pool is loaded too
    cold, warm = _run(script, env), _run(script, env)
    # Cold: the function, the call wrapper and the Ctrl-C counter go through LLVM's
    # optimizations; the thread pool is compiled at O0, without them.
    assert cold["emit_object"] > len(cold["optimize"]) >= 2
    assert 3 in cold["optimize"]
    assert warm["optimize"] == [] and warm["emit_object"] == 0
    assert warm["costs"] == cold["costs"] and warm["w"] == cold["w"]
