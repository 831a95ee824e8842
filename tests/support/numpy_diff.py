#!/usr/bin/env python3
"""The NumPy side of test_api_tensor_numpy: recomputes every case the suite
wrote (inputs and hcq's result as raw little-endian files, a manifest line
per case) in NumPy and compares, bit for bit. Where tensor.h says hcq
differs from NumPy, the NumPy computation is adjusted to the stated rule
(and the rule itself is what is checked):
  - idiv/mod truncate (C) where NumPy floors; x / 0 and x % 0 are 0;
    x / -1 is -x wrapped (INT_MIN / -1 is INT_MIN) and x % -1 is 0;
  - shift counts are taken modulo the width (NumPy saturates);
  - sums and matmuls accumulate in the header's dtype (np.sum(dtype=...));
  - the result dtype of a binary op must be NumPy's result_type, except an
    integer with a float (hcq: the float; NumPy widens i16 + f16 and
    i32/i64 + f32) and arithmetic on two bools (hcq: i32).
Usage: numpy_diff.py DIR (exit 0: all agree; 1: a difference, printed;
77: numpy is not installed).
"""
import os
import sys

try:
    import numpy as np
except ImportError:
    print("numpy is not installed (pip install numpy)")
    sys.exit(77)

DT = {"bool": np.bool_, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32,
      "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64}


def load(d, name, dt, shape):
    return np.fromfile(os.path.join(d, name), dtype=DT[dt]).reshape(shape)


def c_divmod(a, b, op):
    """C's truncating division and remainder as tensor.h states them."""
    zero, neg1 = b == 0, b == -1 if np.issubdtype(b.dtype, np.signedinteger) else np.zeros(b.shape, bool)
    safe = np.where(zero | neg1, 1, b).astype(b.dtype)
    q, r = np.floor_divide(a, safe), np.remainder(a, safe)
    fix = (r != 0) & ((r < 0) != (a < 0))  # floor went one below the truncation
    q = np.where(fix, q + 1, q).astype(a.dtype)
    r = np.where(fix, r - safe, r).astype(a.dtype)
    if op == "idiv":
        return np.where(zero, 0, np.where(neg1, np.negative(a), q)).astype(a.dtype)
    return np.where(zero | neg1, 0, r).astype(a.dtype)


def expect_dtype(op, adt, bdt, got):
    """the binary op's result dtype: NumPy's, but for the stated exceptions"""
    a, b = np.dtype(DT[adt]), np.dtype(DT[bdt])
    if op in ("lt", "eq"):
        return "bool"
    kinds = {a.kind, b.kind}
    if "f" in kinds and kinds & {"i", "u", "b"}:
        return adt if a.kind == "f" else bdt  # the float wins (NumPy may widen it)
    if op in ("add", "sub", "mul") and adt == bdt == "bool":
        return "i32"
    r = np.result_type(a, b)
    return [k for k, v in DT.items() if np.dtype(v) == r][0]


def compute(op, a, b, rt, ct):
    with np.errstate(all="ignore"):
        if op in ("add", "sub", "mul", "maximum", "minimum", "and", "or", "xor"):
            f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
                 "minimum": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
            return f(a.astype(DT[rt]), b.astype(DT[rt])).astype(DT[rt])
        if op in ("lt", "eq"):
            x, y = a.astype(DT[ct]), b.astype(DT[ct])
            return (x < y) if op == "lt" else (x == y)
        if op in ("idiv", "mod"):
            return c_divmod(a.astype(DT[rt]), b.astype(DT[rt]), op)
        if op in ("shl", "shr"):  # the count modulo the width (tensor.h); NumPy's own saturates
            x, n = a.astype(DT[rt]), (b.astype(np.uint64) % np.uint64(8 * np.dtype(DT[rt]).itemsize)).astype(DT[rt])
            return (np.left_shift(x, n) if op == "shl" else np.right_shift(x, n)).astype(DT[rt])
        if op == "div":
            return np.divide(a.astype(DT[rt]), b.astype(DT[rt]))
        if op == "sqrt":
            return np.sqrt(a.astype(DT[rt]))
        if op == "cast":
            return a.astype(DT[rt])
        if op == "sum":
            return np.sum(a, axis=-1, dtype=DT[rt])
        if op == "mul3add1":
            return a.astype(DT[rt]) * 3 + 1
        if op == "sum0":
            return np.sum(a, axis=0, dtype=DT[rt])
        if op == "max0":
            return np.max(a, axis=0).astype(DT[rt])
        if op == "flip0":
            return np.flip(a, 0)
        if op == "slice1":
            return a[1:]
        if op == "pad12":
            return np.pad(a, ((1, 2), (0, 0)), constant_values=7).astype(DT[rt])
        if op == "step2":
            return a[::2]
        if op == "rstep2":
            return a[::-2]
        if op == "flat":
            return a.reshape(-1)
        if op == "matmul":
            return np.matmul(a.astype(DT[rt]), b.astype(DT[rt])).astype(DT[rt])
    raise ValueError("unknown op " + op)


def main():
    d = sys.argv[1]
    bad = 0
    cases = 0
    with open(os.path.join(d, "manifest")) as f:
        for line in f:
            name, op, adt, ashape, bdt, bshape, rt, ct, rshape = line.split()
            sh = lambda s: tuple(int(v) for v in s.split("x")) if s != "-" else ()
            a = load(d, name + ".a", adt, sh(ashape))
            b = load(d, name + ".b", bdt, sh(bshape)) if bdt != "-" else None
            got = load(d, name + ".out", rt, sh(rshape))
            cases += 1
            if b is not None and op not in ("matmul",):
                want_dt = expect_dtype(op, adt, bdt, rt)
                if want_dt != rt:
                    print(f"{name}: {op}({adt}, {bdt}) is {rt}; the stated rule gives {want_dt}")
                    bad += 1
                    continue
            if op in ("sum", "sum0"):
                acc = {"bool": "i32", "i8": "i32", "i16": "i32", "u8": "u32", "u16": "u32"}.get(adt, adt)
                if acc != rt:
                    print(f"{name}: sum of {adt} is {rt}; the stated accumulation dtype is {acc}")
                    bad += 1
                    continue
            want = compute(op, a, b, rt, ct)
            want = np.asarray(want, dtype=DT[rt]).reshape(got.shape)
            u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
            diff = np.nonzero(np.ascontiguousarray(want).reshape(-1).view(u) !=
                              np.ascontiguousarray(got).reshape(-1).view(u))[0]
            if len(diff):
                i = diff[:4]
                fa = a.reshape(-1)
                print(f"{name}: {op}({adt}, {bdt}) -> {rt} differs from NumPy {np.__version__} at flat {i}: "
                      f"got {got.reshape(-1)[i]} want {want.reshape(-1)[i]}"
                      + (f" (a {fa[i]}, b {b.reshape(-1)[i]})" if b is not None and b.shape == a.shape and
                         op != "matmul" else ""))
                bad += 1
    print(f"numpy_diff: {cases} cases, {bad} differ (NumPy {np.__version__})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
