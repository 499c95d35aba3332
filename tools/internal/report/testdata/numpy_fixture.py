"""Writes numpy_fixture.json: numpy's statistics of seeded samples, for
TestNumpyFixture (python3 testdata/numpy_fixture.py > testdata/numpy_fixture.json;
numpy 1.24 from Debian's python3-numpy). Values are integer nanoseconds
divided by 1e9, as the processor turns timestamps into seconds."""
import json, random
import numpy as np

random.seed(15)
cases = []
for n in [1, 2, 3, 7, 8, 9, 100, 128, 129, 1000, 8192, 8193, 10000]:
    ns = [int(random.lognormvariate(18, 1.5)) for _ in range(n)]
    a = np.array(ns) / 1e9
    cases.append({
        "ns": ns,
        "mean": float(np.mean(a)),
        "median": float(np.median(a)),
        "percentiles": {str(p): float(np.percentile(a, p)) for p in [50, 90, 99, 99.9]},
    })
print(json.dumps({"numpy": np.__version__, "cases": cases}))
