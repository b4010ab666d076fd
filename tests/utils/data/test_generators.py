"""
Tests of the test-data generators heat.utils.data.spherical and heat.utils.data.matrixgallery,
under 1-4 processes: their known properties (cluster centres; singular values, rank,
orthogonality and symmetry) checked with NumPy on the gathered matrix.
"""

import numpy as np
import pytest

import heat as ht
from heat.utils.data import matrixgallery, spherical
from tests.helpers import assert_raises_then_collective_works, collective_assert


def test_spherical_clusters():
    n = 50
    x = spherical.create_spherical_dataset(n, radius=1.0, offset=4.0, random_state=3)
    assert x.shape == (4 * n, 3) and x.split == 0 and x.dtype == ht.float32
    data = x.numpy()
    centres = spherical.spherical_centres(4.0)
    for k in range(4):
        block = data[k * n : (k + 1) * n]
        dist = np.linalg.norm(block - centres[k], axis=1)
        assert dist.max() <= 1.0 + 1e-5
        assert np.linalg.norm(block.mean(axis=0) - centres[k]) < 0.3
    # independent of the process count: the same as without splitting
    y = spherical.create_spherical_dataset(n, random_state=3, split=None)
    np.testing.assert_allclose(y.numpy(), data)
    z = spherical.create_spherical_dataset(n, random_state=4)
    assert not np.allclose(z.numpy(), data)


def test_create_clusters():
    means = [[0.0, 0.0], [10.0, 10.0], [-10.0, 10.0]]
    x = spherical.create_clusters(301, 2, 3, means, 0.5, cluster_weight=[1, 1, 2], random_state=0)
    data = x.numpy()
    assert data.shape == (301, 2)
    sizes = [76, 75, 150]
    starts = np.cumsum([0] + sizes)
    for k in range(3):
        np.testing.assert_allclose(data[starts[k] : starts[k + 1]].mean(axis=0), means[k], atol=0.2)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_parter(split):
    a = matrixgallery.parter(20, split=split, dtype=ht.float64)
    m = a.numpy()
    i = np.arange(20)
    np.testing.assert_allclose(m, 1.0 / (i[:, None] - i[None, :] + 0.5))
    s = np.linalg.svd(m, compute_uv=False)
    assert np.sum(np.abs(s - np.pi) < 1e-2) >= 10  # most singular values cluster at pi


@pytest.mark.parametrize("split", [None, 0, 1])
def test_known_singular_values_and_rank(split):
    s = [5.0, 3.0, 2.0, 0.5]
    a, (u, sv, v) = matrixgallery.random_known_singularvalues(
        9, 6, s, split=split, dtype=ht.float64, random_state=1
    )
    m = a.numpy()
    assert a.shape == (9, 6) and a.split == split
    np.testing.assert_allclose(np.linalg.svd(m, compute_uv=False)[:4], s, rtol=1e-10)
    assert np.linalg.matrix_rank(m) == 4
    np.testing.assert_allclose(u.numpy().T @ u.numpy(), np.eye(4), atol=1e-12)
    np.testing.assert_allclose((u.numpy() * sv.numpy()) @ v.numpy().T, m, atol=1e-12)
    b, (_, sr, _) = matrixgallery.random_known_rank(
        10, 7, 3, split=split, dtype=ht.float64, random_state=2
    )
    mb = b.numpy()
    assert np.linalg.matrix_rank(mb) == 3
    np.testing.assert_allclose(np.linalg.svd(mb, compute_uv=False)[:3], sr.numpy(), rtol=1e-10)
    assert (np.diff(sr.numpy()) <= 0).all()


def test_orthogonal_and_hermitian():
    q = matrixgallery.random_orthogonal(8, 5, split=0, dtype=ht.float64, random_state=0).numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(5), atol=1e-12)
    h = matrixgallery.hermitian(6, dtype=ht.complex128, split=0, random_state=0).numpy()
    np.testing.assert_allclose(h, h.conj().T)
    p = matrixgallery.hermitian(
        6, dtype=ht.float64, split=1, positive_definite=True, random_state=0
    ).numpy()
    w = np.linalg.eigvalsh(p)
    assert w.min() >= 1 - 1e-10 and w.max() < 2 and np.allclose(p, p.T)


def _same_on_every_rank(values: np.ndarray) -> bool:
    everyone = ht.MPI_WORLD.allgather(values)
    return all(np.array_equal(v, everyone[0]) for v in everyone)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_without_random_state_one_matrix_for_any_process_count(split):
    """
    Without ``random_state`` the generators draw from heat's global generator: every process
    holds a block of the same matrix (not each its own), and the matrix is the one a single
    process draws after the same ``ht.random.seed``.
    """
    means = [[0.0, 0.0], [5.0, 5.0]]

    def draw(split, comm):
        q = matrixgallery.random_orthogonal(20, 8, split=split, dtype=ht.float64, comm=comm)
        a, (u, s, v) = matrixgallery.random_known_rank(
            9, 7, 3, split=split, dtype=ht.float64, comm=comm
        )
        h = matrixgallery.hermitian(6, dtype=ht.complex128, split=split, comm=comm)
        p = matrixgallery.hermitian(
            5, dtype=ht.float64, split=split, positive_definite=True, comm=comm
        )
        w, _ = matrixgallery.random_known_singularvalues(
            7, 4, [3.0, 1.0], split=split, dtype=ht.float64, comm=comm
        )
        c = spherical.create_clusters(11, 2, 2, means, 0.5, split=split, comm=comm)
        return [x.numpy() for x in (q, a, s, h, p, w, c)]

    ht.random.seed(11)
    q, a, s, h, p, w, c = draw(split, None)
    ht.random.seed(11)
    alone = draw(None, ht.MPI_SELF)
    problems = []
    if np.abs(q.T @ q - np.eye(8)).max() > 1e-12:
        problems.append(f"Q^T Q - I up to {np.abs(q.T @ q - np.eye(8)).max()}")
    if np.linalg.matrix_rank(a) != 3:
        problems.append(f"rank {np.linalg.matrix_rank(a)}, not 3")
    np_s = np.linalg.svd(a, compute_uv=False)[:3]
    if not np.allclose(np_s, s, rtol=1e-10):
        problems.append(f"singular values {np_s}, stated {s}")
    if not np.allclose(h, h.conj().T) or not np.allclose(p, p.T):
        problems.append("hermitian is not Hermitian")
    elif np.linalg.eigvalsh(p).min() < 1 - 1e-10:
        problems.append("positive definite hermitian has eigenvalues below 1")
    if not np.allclose(np.linalg.svd(w, compute_uv=False)[:2], [3.0, 1.0]):
        problems.append("random_known_singularvalues has other singular values")
    for name, mine, single in zip("qashpwc", (q, a, s, h, p, w, c), alone):
        if not np.array_equal(mine, single):
            problems.append(f"{name} differs from the one process's draw")
        if not _same_on_every_rank(mine):
            problems.append(f"{name} differs between the processes")
    collective_assert(not problems, "; ".join(problems))
    # the global generator advanced: the next draw is another matrix
    again = matrixgallery.random_orthogonal(20, 8, split=split, dtype=ht.float64).numpy()
    collective_assert(not np.allclose(again, q), "two draws gave the same matrix")


def test_generators_bad_input():
    assert_raises_then_collective_works(ValueError, spherical.create_spherical_dataset, 0)
    assert_raises_then_collective_works(
        ValueError, spherical.create_spherical_dataset, 5, radius=-1.0
    )
    assert_raises_then_collective_works(TypeError, spherical.create_spherical_dataset, 5.0)
    assert_raises_then_collective_works(
        ValueError, spherical.create_clusters, 10, 2, 2, [[0, 0]], 1.0
    )
    assert_raises_then_collective_works(ValueError, matrixgallery.random_known_rank, 4, 3, 5)
    assert_raises_then_collective_works(
        ValueError, matrixgallery.random_known_singularvalues, 4, 3, [1, -1]
    )
    assert_raises_then_collective_works(ValueError, matrixgallery.random_orthogonal, 3, 4)
    assert_raises_then_collective_works(TypeError, matrixgallery.parter, "5")
    collective_assert(True)
