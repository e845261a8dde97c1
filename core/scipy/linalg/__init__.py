"""`core.scipy.linalg`: `scipy.linalg`'s names over the `lax.linalg` primitives, as `jax.scipy.linalg`.

Signatures are SciPy's (and JAX's); the SciPy arguments that only concern memory or input checks
(`overwrite_a`, `overwrite_b`, `check_finite`, `lwork`, `debug`, `turbo`, `lapack_driver`) are
accepted and ignored. Where JAX and SciPy differ we do as JAX: no LinAlgError (a singular or
indefinite matrix gives inf/NaN), factors come back clean (`cho_factor` zeroes the unused
triangle), `sqrtm` is always complex, and leading dimensions are a batch. Derivatives come from the
primitives' rules (cholesky, lu, qr, eigh, svd, triangular_solve) and from `lax` control flow
(`expm`, `expm_frechet`, `polar`); `schur`, and so `sqrtm`, `logm`, `rsf2csf` and `funm`, have
none, nor has `hessenberg` (as in JAX); `solve(..., assume_a="pos")` has its own rule so that the
gradient with respect to `a` is that of the full matrix, as with JAX's `custom_linear_solve`, and
`solve_sylvester` is differentiated implicitly through `lax.custom_linear_solve` (JAX's has no
derivative).

The functions live in small private modules by topic (`_solves`, `_decompositions`,
`_matrix_functions`, `_schur_forms`, `_sylvester`, `_tridiagonal`, `_special_matrices`,
`_sized_matrices`); this package is their one public face.
"""
from ._decompositions import eigh, hessenberg, polar, qr, qr_multiply, schur, svd
from ._matrix_functions import expm, expm_frechet, logm, sqrtm
from ._schur_forms import funm, rsf2csf
from ._solves import cho_factor, cho_solve, cholesky, det, inv, lu, lu_factor, lu_solve, solve, solve_triangular
from ._sized_matrices import dft, hadamard, helmert, hilbert, invhilbert, invpascal, pascal
from ._sylvester import solve_sylvester
from ._tridiagonal import eigh_tridiagonal
from ._special_matrices import (block_diag, circulant, companion, convolution_matrix, fiedler, fiedler_companion, hankel,
                                leslie, toeplitz)

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "lu", "lu_factor", "lu_solve", "qr",
           "svd", "eigh", "schur", "inv", "det", "solve", "expm", "sqrtm", "logm", "block_diag", "toeplitz",
           "hankel", "circulant", "leslie", "companion", "fiedler", "fiedler_companion", "convolution_matrix",
           "hilbert", "invhilbert", "pascal", "invpascal", "helmert", "hadamard", "dft",
           "hessenberg", "qr_multiply", "polar", "expm_frechet", "rsf2csf", "funm",
           "solve_sylvester", "eigh_tridiagonal"]

# the public names belong to this module (doctest finds their examples here; reprs name it)
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
