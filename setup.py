"""Where the package's files come from (the project's metadata is in pyproject.toml).

The CUDA sources stay in the top-level kernels/, where the book's layout puts them, and ship as the
package data tcgemm/kernels/ (package_dir maps the one onto the other, no copy or symlink in the
tree). tcgemm.KERNEL_DIR reads the checkout's kernels/ when there is one, else that package data.
"""
from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["tcgemm*"]) + ["tcgemm.kernels"],
    package_dir={"tcgemm.kernels": "kernels"},
    package_data={"tcgemm.kernels": ["*.cu", "*.cuh"], "tcgemm.widgets": ["*.js", "*.css"]},
)
