#!/usr/bin/python3
"""Fits the coefficients of plugins/common/fast_log.hpp (dev-time; numpy only).

For a normal float x = m * 2^e with m in [sqrt(1/2), sqrt(2)), fast_log takes ln m = ln(1 + t), t = m - 1
(exact in float), as t + t^2 P(t). This fits P of the given degree so that the absolute error of
t + t^2 P(t) is near its smallest possible maximum over the interval (least squares on Chebyshev nodes,
reweighted towards the largest errors), then evaluates the float32 Horner form over 400,001 points and
prints the coefficients as C++ float literals with the largest float32 error.

    /usr/bin/python3 scripts/fit_fast_log.py [--degree 6]
"""
import argparse

import numpy as np


def fit(degree):
    lo, hi = np.sqrt(0.5) - 1, np.sqrt(2) - 1
    k = np.arange(4000)
    t = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / len(k))
    target = (np.log1p(t) - t) / t**2
    scale = t**2  # an error in P is an error of t^2 times it in ln(1 + t)
    powers = np.vander(t, degree + 1, increasing=True)
    weight = scale.copy()
    for _ in range(30):
        coef = np.linalg.lstsq(powers * weight[:, None], target * weight, rcond=None)[0]
        err = np.abs(powers @ coef - target) * scale
        weight = weight * (1 + 50 * err / err.max())
    return coef.astype(np.float32), (lo, hi)


def float_error(coef, interval):
    t = np.linspace(*interval, 400001).astype(np.float32)
    p = np.full_like(t, coef[-1])
    for c in coef[-2::-1]:
        p = p * t + c
    got = (t + t * t * p).astype(np.float64)
    return np.abs(got - np.log1p(t.astype(np.float64))).max()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--degree", type=int, default=6)
    args = parser.parse_args()
    coef, interval = fit(args.degree)
    print("P(t) coefficients, t^0 first:", ", ".join(f"{float(c):.9g}f" for c in coef))
    print(f"largest |t + t^2 P(t) - ln(1 + t)| in float32: {float_error(coef, interval):.3g}")


if __name__ == "__main__":
    main()
