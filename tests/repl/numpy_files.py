#!/usr/bin/env python3
"""numpy's own files through the arrayc tool, both ways: .npz files np.savez writes (zip64 local
headers, every dtype arrayc has, Fortran order, 0-d) load member by member; text np.savetxt writes
reads with loadtxt as np.loadtxt reads it; and np.load reads the .npz and .npy files arrayc
writes, value for value and dtype for dtype. Exits 77 (skipped) when no Python on PATH has numpy.

    numpy_files.py ARRAYC
"""
import os
import shutil
import subprocess
import sys
import tempfile


def python_with_numpy():
    """This interpreter if it has numpy, else the first python3 on PATH that has it."""
    try:
        import numpy  # noqa: F401
        return None
    except ImportError:
        pass
    seen = {os.path.realpath(sys.executable)}
    for d in os.environ.get("PATH", "").split(os.pathsep):
        exe = os.path.join(d, "python3")
        if not os.access(exe, os.X_OK) or os.path.realpath(exe) in seen:
            continue
        seen.add(os.path.realpath(exe))
        if subprocess.run([exe, "-c", "import numpy"], capture_output=True).returncode == 0:
            return exe
    return "none"


PROGRAM = """
save_npy(load("np.npz", "f4"), "out_f4.npy")
save_npy(load("np.npz", "f2"), "out_f2.npy")
save_npy(load("np.npz", "i1"), "out_i1.npy")
save_npy(load("np.npz", "u8"), "out_u8.npy")
save_npy(load("np.npz", "b1"), "out_b1.npy")
save_npy(load("np.npz", "fortran"), "out_fortran.npy")
save_npy(load("np.npz", "scalar"), "out_scalar.npy")
save_npy(load("np.npz", "empty"), "out_empty.npy")
save_npy(load("np.npz", "arr_0"), "out_arr_0.npy")
save_npy(load("one.npz"), "out_one.npy")
x = load("np.npz", "f4")
savez("ac.npz", x, x * 2, doubled=x + x, ints=arange(5), flag=x > 0.5, h=astype(x, f16))
save_npy(loadtxt("t.txt"), "out_t.npy")
save_npy(loadtxt("c.csv", i64, ",", 1, [2, 0]), "out_c.npy")
save_npy(loadtxt("col.txt", f32), "out_col.npy")
"""


def main():
    arrayc = os.path.abspath(sys.argv[1])
    other = python_with_numpy()
    if other == "none":
        print("skipped: no python3 on PATH has numpy")
        return 77
    if other is not None:
        return subprocess.run([other] + sys.argv).returncode
    import numpy as np

    d = tempfile.mkdtemp(prefix="arrayc_numpy_files_")
    try:
        rng = np.random.default_rng(5)
        f4 = rng.standard_normal((3, 4)).astype(np.float32)
        arrays = {
            "f4": f4,
            "f2": rng.standard_normal(7).astype(np.float16),
            "i1": np.array([-128, -1, 0, 127], dtype=np.int8),
            "u8": np.array([0, 2**64 - 1, 12345], dtype=np.uint64),
            "b1": np.array([[True, False], [False, True]]),
            "fortran": np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4)),
            "scalar": np.float64(-0.0),
            "empty": np.zeros((0, 3), dtype=np.int32),
        }
        np.savez(os.path.join(d, "np.npz"), rng.standard_normal(5), **arrays)
        np.savez(os.path.join(d, "one.npz"), only=np.arange(4, dtype=np.int16))
        text = rng.standard_normal((6, 3)) * 10.0 ** rng.integers(-30, 30, (6, 3))
        np.savetxt(os.path.join(d, "t.txt"), text, fmt="%.17g", header="a header line")
        ints = rng.integers(-2**62, 2**62, (5, 4))
        np.savetxt(os.path.join(d, "c.csv"), ints, fmt="%d", delimiter=",", header="w,x,y,z", comments="")
        with open(os.path.join(d, "col.txt"), "w") as f:
            f.write("# one column\n1.5\n-inf\n\n3e38\n4e38  # overflows float32\n")
        with open(os.path.join(d, "prog.ac"), "w") as f:
            f.write(PROGRAM)
        p = subprocess.run([arrayc, os.path.join(d, "prog.ac")], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, ARRAYC_CACHE="0"))
        assert p.returncode == 0, "arrayc exited %d: %s%s" % (p.returncode, p.stdout, p.stderr)

        def same(got, want, what):
            want = np.asarray(want)
            assert got.dtype == want.dtype, "%s: dtype %s, numpy's %s" % (what, got.dtype, want.dtype)
            assert got.shape == want.shape, "%s: shape %s, numpy's %s" % (what, got.shape, want.shape)
            assert np.array_equal(got, want, equal_nan=True), "%s: values differ:\n%s\n%s" % (what, got, want)
            if got.dtype.kind == "f":
                assert np.array_equal(np.signbit(got), np.signbit(want)), "%s: signs of zeros differ" % what

        out = lambda name: np.load(os.path.join(d, "out_%s.npy" % name))
        for name, want in arrays.items():
            same(out(name), want, "np.savez member " + name)
        same(out("arr_0"), np.load(os.path.join(d, "np.npz"))["arr_0"], "np.savez positional member")
        same(out("one"), np.arange(4, dtype=np.int16), "the only member")

        z = np.load(os.path.join(d, "ac.npz"))
        assert z.files == ["arr_0", "arr_1", "doubled", "ints", "flag", "h"], "arrayc's savez members: %s" % z.files
        same(z["arr_0"], f4, "arrayc savez arr_0")
        same(z["arr_1"], f4 * 2, "arrayc savez arr_1")
        same(z["doubled"], f4 + f4, "arrayc savez doubled")
        same(z["ints"], np.arange(5), "arrayc savez ints")
        same(z["flag"], f4 > 0.5, "arrayc savez flag")
        same(z["h"], f4.astype(np.float16), "arrayc savez h")

        same(out("t"), np.loadtxt(os.path.join(d, "t.txt")), "loadtxt of np.savetxt's floats")
        same(out("c"), np.loadtxt(os.path.join(d, "c.csv"), dtype=np.int64, delimiter=",", skiprows=1, usecols=(2, 0)),
             "loadtxt of a csv")
        with np.errstate(over="ignore"):
            same(out("col"), np.loadtxt(os.path.join(d, "col.txt"), dtype=np.float32), "loadtxt of one column")

        # np.savez_compressed: a clear error, not a crash.
        np.savez_compressed(os.path.join(d, "zipped.npz"), a=f4)
        p = subprocess.run([arrayc, "-c", 'load("%s", "a")' % os.path.join(d, "zipped.npz")],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and "compressed (method 8, deflate" in p.stderr, p.stderr
        print("numpy %s: np.savez, np.savetxt and np.load agree with arrayc's load, loadtxt and savez" % np.__version__)
        return 0
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    sys.exit(main())
