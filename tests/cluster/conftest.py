"""A real Dask cluster for the tests of ``lowering.dask``: a scheduler and two worker
processes with one thread each (the CI machine has two cores), started for this package's tests
and closed after them: a live client's event loop in the test process slows every later test
of the session (about 2.4x on 2 cores)."""
import pytest


@pytest.fixture(scope="package")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client
