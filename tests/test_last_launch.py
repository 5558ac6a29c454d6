"""tcgemm.engine.gpu.gemm.LastLaunchCache, the one-entry cache behind tcgemm.engine.gpu.gemm.prepared (no GPU needed):
a run of calls with the same key reuses one launch, any other call replaces it, a key of None is never
reused, and a launch that fails to prepare leaves the cache as it was."""
import pytest

from tcgemm.engine.gpu.gemm import _LAST_LAUNCH, LastLaunchCache


def test_the_cache_keeps_the_last_launch_only():
    cache, made = LastLaunchCache(), []
    make = lambda value: lambda: made.append(value) or value
    assert cache.get("a", make(1)) == 1 and cache.get("a", make(2)) == 1      # the same key: reused
    assert cache.get("b", make(3)) == 3 and cache.get("a", make(4)) == 4      # one entry: "a" was replaced
    assert cache.get(None, make(5)) == 5 and cache.get(None, make(6)) == 6    # None: never reused
    assert made == [1, 3, 4, 5, 6] and (cache.key, cache.launch) == (None, 6)


def test_a_launch_that_fails_to_prepare_leaves_the_cache_as_it_was():
    cache = LastLaunchCache()
    cache.get("a", lambda: 1)

    def refused():
        raise ValueError("bad operands")
    with pytest.raises(ValueError, match="bad operands"):
        cache.get("b", refused)
    assert (cache.key, cache.launch) == ("a", 1)


def test_prepared_has_one_cache():
    assert isinstance(_LAST_LAUNCH, LastLaunchCache)
