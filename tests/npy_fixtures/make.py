# Regenerates the .npy files beside it with numpy's own writer (numpy/lib/format.py), so the
# reader is tested against the real thing. The values are chosen so the tests can state their
# bit patterns from the IEEE formats, not from this output.
import numpy as np
from numpy.lib import format as npf

def save(name, a, version=None):
    with open(name, "wb") as f:
        npf.write_array(f, a, version=version, allow_pickle=False)

f4 = np.array([[1.0, -2.0, 0.5], [0.0, -0.0, np.inf]], dtype="<f4")
save("f4_2x3.npy", f4)
save("f2_5.npy", np.array([1.0, -2.0, 65504.0, 2.0**-24, 0.0], dtype="<f2"))
save("u1_scalar.npy", np.array(7, dtype="u1"))
save("i1_4.npy", np.array([-128, -1, 0, 127], dtype="i1"))
save("u2_3.npy", np.array([0, 1, 65535], dtype="<u2"))
save("u4_2.npy", np.array([1, 0xDEADBEEF], dtype="<u4"))
save("i4_2x2x2.npy", np.arange(-4, 4, dtype="<i4").reshape(2, 2, 2))
save("f4_v2.npy", f4, version=(2, 0))
save("f4_v3.npy", f4, version=(3, 0))
save("f4_empty_0x3.npy", np.zeros((0, 3), dtype="<f4"))
save("f4_fortran.npy", np.asfortranarray(f4))
save("f4_bigendian.npy", f4.astype(">f4"))
save("f8_2.npy", np.array([1.0, 2.0], dtype="<f8"))
