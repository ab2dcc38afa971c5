#!/usr/bin/env python3
"""Minimax coefficients for vmath's f32 cos polynomial, by the Remez exchange algorithm.

cos(r) ~ 1 + z * P(z) with z = r^2 and P of degree 2, minimising the relative error of cos over
|r| <= pi/4 + 2^-12 (the widest reduced argument of the f32 float paths, lib/codegen/vmath.cpp).
In terms of g(z) = (cos(sqrt z) - 1) / z that is a weighted minimax problem: the relative error is
w(z) * (P(z) - g(z)) with w(z) = z / cos(sqrt z).

Prints the coefficients (double, then rounded to float as hex literals for vmath.cpp) and the
maximum relative error in units of 2^-24 (one ULP of a result in [0.5, 1)) before and after the
rounding. Needs python3-mpmath. Usage: scripts/minimax.py
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


def main():
    rmax = mp.pi / 4 + mp.mpf(2) ** -12
    zmax = rmax * rmax

    def g(z):
        return (mp.cos(mp.sqrt(z)) - 1) / z

    def w(z):
        return z / mp.cos(mp.sqrt(z))

    c, grid = remez(g, w, zmax, 3)
    ulp = mp.mpf(2) ** -24

    def max_rel(coef):
        return max(abs(w(z) * (sum(coef[i] * z**i for i in range(len(coef))) - g(z))) for z in grid)

    c32 = [to_f32(v) for v in c]
    print("cos(r) = 1 + z P(z), z = r^2, |r| <= pi/4 + 2^-12")
    print("P (double):", ", ".join(repr(float(v)) for v in c))
    print("P (float): ", ", ".join(hex_literal(v) for v in c32))
    print("max relative error: %s ULP exact coefficients, %s ULP float coefficients"
          % (mp.nstr(max_rel(c) / ulp, 3), mp.nstr(max_rel([mp.mpf(v) for v in c32]) / ulp, 3)))


if __name__ == "__main__":
    main()
