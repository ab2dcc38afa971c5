#!/usr/bin/env python3
"""Minimax coefficients for vmath's sin/cos polynomials, by the Remez exchange algorithm.

f32 cos: cos(r) ~ 1 + z * P(z) with z = r^2 and P of degree 2, minimising the relative error of
cos over |r| <= pi/4 + 2^-12 (the widest reduced argument of the f32 float paths,
lib/codegen/cpu/vmath/trig.cpp). In terms of g(z) = (cos(sqrt z) - 1) / z that is a weighted minimax
problem: the relative error is w(z) * (P(z) - g(z)) with w(z) = z / cos(sqrt z).

f64 sin and cos, on |r| <= pi/4 + 2^-20 (the double reduction's q is one off only that close to
a half-integer): sin(r) ~ r + r^3 S(z) with S of degree 5 (g = (sin r - r) / r^3, w = r^3 / sin r),
and cos(r) ~ 1 + z P(z) as above with P of degree 6 whose constant term is then set to -1/2
exactly (it comes out within 1e-17 of it), so that vmath evaluates 1 - z/2 + z^2 C(z) with C the
other six. sin or cos alone reduces modulo pi: sin(r) ~ r + r^3 S(z) on |r| <= pi/2 + 2^-20
with S of degree 7 (f64), on |r| <= pi/2 + 2^-12 with S of degree 3 (f32, below 2^10).

f32 tanh below 0.625: tanh(x) ~ x + x^3 P(z), z = x^2, P of degree 4 (g = (tanh x - x) / x^3,
w = x^3 / tanh x).

Prints the coefficients (rounded to float or double, as hex literals for
lib/codegen/cpu/vmath/trig.cpp and tanh_pow.cpp) and the maximum relative error in units of one
ULP of a result in [0.5, 1) (2^-24 or 2^-53) with exact and with rounded coefficients. Needs
python3-mpmath. Usage: scripts/minimax.py
"""
import struct

import mpmath as mp

mp.mp.prec = 120


def remez(g, w, zmax, n, grid_points=3000, iterations=12):
    """Coefficients c of P(z) = sum c[i] z^i (degree n-1) minimising max |w (P - g)| on (0, zmax]."""
    grid = [zmax * k / grid_points for k in range(1, grid_points + 1)]
    # Start from Chebyshev points; n coefficients plus the levelled error need n + 1 points.
    pts = [zmax * (1 - mp.cos(mp.pi * (k + 0.5) / (n + 1))) / 2 for k in range(n + 1)]
    pts[-1] = zmax
    for _ in range(iterations):
        a = mp.matrix(n + 1, n + 1)
        b = mp.matrix(n + 1, 1)
        for k, z in enumerate(pts):
            for i in range(n):
                a[k, i] = w(z) * z**i
            a[k, n] = -((-1) ** k)
            b[k] = w(z) * g(z)
        sol = mp.lu_solve(a, b)
        c = [sol[i] for i in range(n)]
        err = [w(z) * (sum(c[i] * z**i for i in range(n)) - g(z)) for z in grid]
        # New reference: the local extrema of |err|, one per run of equal sign, trimmed to n + 1.
        peaks = []
        for k in range(len(grid)):
            left = abs(err[k - 1]) if k else 0
            right = abs(err[k + 1]) if k + 1 < len(grid) else 0
            if abs(err[k]) < left or abs(err[k]) < right:
                continue
            if peaks and mp.sign(err[peaks[-1]]) == mp.sign(err[k]):
                if abs(err[k]) > abs(err[peaks[-1]]):
                    peaks[-1] = k
            else:
                peaks.append(k)
        while len(peaks) > n + 1:
            peaks.pop(0 if abs(err[peaks[0]]) < abs(err[peaks[-1]]) else -1)
        pts = [grid[k] for k in peaks]
    return c, grid


def to_f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def hex_literal(v):
    mant, exp = v.hex().split("p")
    return mant.rstrip("0") + "p" + exp


def report(title, g, w, zmax, n, bits, fix=None):
    """Prints the degree n-1 minimax P for g with weight w on (0, zmax], its coefficients rounded
    to float (bits 24) or double (53); fix: (index, value) to set one coefficient to afterwards."""
    c, grid = remez(g, w, zmax, n)
    if fix:
        c[fix[0]] = mp.mpf(fix[1])
    rounded = [mp.mpf(to_f32(v) if bits == 24 else float(v)) for v in c]
    ulp = mp.mpf(2) ** -bits

    def max_rel(coef):
        return max(abs(w(z) * (sum(coef[i] * z**i for i in range(len(coef))) - g(z))) for z in grid)

    print(title)
    print("  coefficients:", ", ".join(hex_literal(float(v)) for v in rounded))
    print("  max relative error: %s ULP exact coefficients, %s ULP rounded"
          % (mp.nstr(max_rel(c) / ulp, 3), mp.nstr(max_rel(rounded) / ulp, 3)))


def odd_problem(f):
    """g and w of the relative error of f(x) ~ x + x^3 P(z), z = x^2, for an odd f."""

    def g(z):
        x = mp.sqrt(z)
        return (f(x) - x) / (x * z)

    def w(z):
        x = mp.sqrt(z)
        return x * z / f(x)

    return g, w


def main():
    def g_cos(z):
        return (mp.cos(mp.sqrt(z)) - 1) / z

    def w_cos(z):
        return z / mp.cos(mp.sqrt(z))

    g_sin, w_sin = odd_problem(mp.sin)

    r32 = mp.pi / 4 + mp.mpf(2) ** -12
    report("f32 cos(r) = 1 + z P(z), z = r^2, |r| <= pi/4 + 2^-12", g_cos, w_cos, r32 * r32, 3, 24)
    r64 = mp.pi / 4 + mp.mpf(2) ** -20
    report("f64 sin(r) = r + r^3 S(z), |r| <= pi/4 + 2^-20", g_sin, w_sin, r64 * r64, 6, 53)
    report("f64 cos(r) = 1 + z P(z), P[0] = -1/2 (C: the other six), |r| <= pi/4 + 2^-20",
           g_cos, w_cos, r64 * r64, 7, 53, fix=(0, -0.5))
    r64_half_pi = mp.pi / 2 + mp.mpf(2) ** -20
    report("f64 sin(r) = r + r^3 S(z), |r| <= pi/2 + 2^-20 (sin or cos alone, reduced modulo pi)",
           g_sin, w_sin, r64_half_pi * r64_half_pi, 8, 53)
    r32_half_pi = mp.pi / 2 + mp.mpf(2) ** -12
    report("f32 sin(r) = r + r^3 S(z), |r| <= pi/2 + 2^-12 (sin or cos alone below 2^10, modulo pi)",
           g_sin, w_sin, r32_half_pi * r32_half_pi, 4, 24)
    g_tanh, w_tanh = odd_problem(mp.tanh)
    report("f32 tanh(x) = x + x^3 P(z), |x| <= 0.625", g_tanh, w_tanh, mp.mpf(0.625) ** 2, 5, 24)


if __name__ == "__main__":
    main()
