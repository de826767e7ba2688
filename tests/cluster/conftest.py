"""A real Dask cluster for the tests of ``lowering.dask``: a scheduler and two worker
processes with one thread each (the CI machine has two cores), started once per session."""
import pytest


@pytest.fixture(scope="session")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client
