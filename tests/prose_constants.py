"""The measured-looking numbers the book's prose may type: constants that were not measured by the
run beside them (datasheet figures, PTX constants, figures other authors published), each with its
source. tests/test_prose.py fails on any other number with a unit of time, rate, clock, power, a
percentage or a factor in a markdown cell or a reading template.

Each entry names its page, the exact text as the page types it (a phrase around the number, so the
test can find it), and where the number comes from.
"""
from dataclasses import dataclass

MAX_CONSTANTS = 40


@dataclass(frozen=True)
class Constant:
    page: str      # file name under book/
    text: str      # the phrase, exactly as typed
    source: str    # where the number comes from


CONSTANTS: list[Constant] = [
    Constant("hopper.ipynb", "2-4% faster than 5.6 at both sizes, and `SKIP_STORE` saving 5.8 under 2%",
             "the chapter's prediction for Kernel 5.8, written before it first ran (not a measurement)"),
    Constant("hopper.ipynb", "the pipelines chapter's target of 90% of the ceiling",
             "the book's goal for its mma.sync kernels, set in the pipelines chapter (a target, not a measurement)"),
    Constant("numerics.ipynb", "Patterson's worklog paid about 1% for the same change on an RTX 4090",
             "Sam Patterson's worklog, appendix on floating-point accuracy: the cost of the fresh accumulator added outside the mma, on an RTX 4090"),
    Constant("pipelines.ipynb", "gained 3% (1030 µs to 1000 µs)",
             "Patterson's worklog, benchmark table of github.com/spatters/mma-matmul (README): Kernel 2.1 1030 us, "
             "Kernel 3.0 1000 us at 4096^3 on an RTX 4090 under Nsight Compute; 3% is their ratio"),
    Constant("pipelines.ipynb", "The target was 90% of the `mma.sync` ceiling",
             "the chapter's goal for its last mma.sync kernels at 4096^3, set before measuring (a target, not a measurement)"),
    Constant("intro.ipynb", "153.6 TFLOP/s, 93% of peak",
             "Patterson's worklog (spatters.ca/mma-matmul): cuBLAS and its Kernel 3.1 on an RTX 4090, 4096^3"),
    Constant("mma_fragments.ipynb", "19% (its Kernel 1.0) and 37% (its Kernel 1.1)",
             "Patterson's worklog (spatters.ca/mma-matmul): its Kernels 1.0 and 1.1 against cuBLAS on an RTX 4090"),
]
