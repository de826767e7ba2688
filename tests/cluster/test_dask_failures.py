"""Failures on the cluster: a worker killed in the middle of a computation is replaced and its
task retried, with the right result; a compiled function failing on a block names the block and
keeps the original error."""
import os
import signal

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import lowering as theano  # noqa: E402
import lowering.dask as ldask  # noqa: E402
import lowering.tensor as T  # noqa: E402

pytestmark = pytest.mark.distributed


def test_a_block_that_fails_names_its_index_and_chains_the_error(client):
    x = T.dvector("x")
    # each block is indexed by its first value: 5 is out of the last block's range
    f = theano.function([x], x + x[T.cast(x[0], "int64")], name="shift")
    out = ldask.map_blocks(f, da.from_array(np.array([0.0] * 8 + [5.0, 0.0]), chunks=4))
    with pytest.raises(ldask.BlockError, match=r"'shift' failed on block \(2,\)") as info:
        out.compute()
    assert info.value.block_id == (2,)
    assert isinstance(info.value.__cause__, IndexError)


def test_a_killed_worker_is_replaced_and_its_task_retried(client, tmp_path):
    marker = str(tmp_path / "killed")

    def kill_own_worker_once(block, block_id=None):
        # The first attempt at block 2 kills its worker process; the retry finds the marker.
        if block_id == (2,) and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return block

    x = T.dvector("x")
    f = theano.function([x], T.tanh(x) * 3, name="scaled")
    source = da.map_blocks(kill_own_worker_once, da.arange(40.0, chunks=8), dtype="float64")
    result = ldask.map_blocks(f, source).compute()
    assert os.path.exists(marker)
    np.testing.assert_allclose(result, np.tanh(np.arange(40.0)) * 3)
    client.wait_for_workers(2, timeout=120)  # the nanny's new worker, for the tests after this
