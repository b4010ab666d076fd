"""
Standardize features and cluster them with k-means, distributed over the processes.

    mpiexec -n 2 python examples/clustering.py          # or: python examples/clustering.py
    mpiexec -n 2 python examples/clustering.py --small  # CI size (or HEAT_EXAMPLES_SMALL=1)

The estimators follow scikit-learn: parameters go to the constructor, ``fit`` returns the
estimator, learned attributes end in ``_``. Every process calls them with the same split array;
each works on its own rows and the processes combine partial results with a few collectives
per iteration. When scikit-learn is installed, rank 0 fits it on the same data for comparison.
"""

import argparse
import os

import numpy as np

import heat as ht

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--small", action="store_true", help="CI sizes (also HEAT_EXAMPLES_SMALL=1)")
args = parser.parse_args()
small = args.small or os.environ.get("HEAT_EXAMPLES_SMALL") == "1"
samples_per_blob, features, blobs = (150, 4, 3) if small else (50_000, 8, 5)

comm = ht.MPI_WORLD
say = print if comm.rank == 0 else (lambda *a, **k: None)

# -- synthetic blobs ---------------------------------------------------------------------------
# Every process builds the same small NumPy description (centres and scales of the features);
# the samples themselves are drawn by heat, already split: each process creates only its rows.
rng = np.random.default_rng(0)
centres = rng.uniform(-10, 10, (blobs, features))
feature_scales = np.geomspace(1, 1000, features)  # very different units: scaling matters
ht.random.seed(0)
n = samples_per_blob * blobs
noise = ht.random.randn(n, features, dtype=ht.float64, split=0)
blob_of_row = ht.arange(n, split=0) % blobs  # row i belongs to blob i % blobs
x = (ht.array(centres)[blob_of_row] + noise) * ht.array(feature_scales)
say(f"{n:,} samples x {features} features in {blobs} blobs, split over {comm.size} process(es)")

# -- standardize: per-feature mean and standard deviation (one collective) ---------------------
scaler = ht.preprocessing.StandardScaler()
x_scaled = scaler.fit_transform(x)
say(f"feature standard deviations before scaling: {[f'{s:.3g}' for s in scaler.scale_.numpy()]}")

# -- k-means -----------------------------------------------------------------------------------
kmeans = ht.cluster.KMeans(n_clusters=blobs, init="k-means++", random_state=0)
kmeans.fit(x_scaled)  # returns kmeans itself; cluster_centers_ is replicated on every process
labels = kmeans.predict(x_scaled)  # split like x_scaled, no communication
sizes = ht.bincount(labels.flatten(), minlength=blobs)  # one all-reduce of the local counts
say(f"k-means: {kmeans.n_iter_} iterations, inertia {kmeans.inertia_:.2f}")
say(f"cluster sizes: {sizes.numpy().tolist()} (each blob has {samples_per_blob:,} samples)")

# -- compare with scikit-learn on rank 0 (optional) --------------------------------------------
data = x_scaled.numpy()  # gathers the whole array: only for checking a small example
if comm.rank == 0:
    try:
        from sklearn.cluster import KMeans
    except ImportError:
        print("scikit-learn is not installed: no comparison")
    else:
        reference = KMeans(n_clusters=blobs, init="k-means++", n_init=1, random_state=0).fit(data)
        print(f"scikit-learn inertia {reference.inertia_:.2f}")
