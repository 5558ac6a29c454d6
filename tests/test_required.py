"""tests/required.py: a test that lacks a tool skips with the reason, or fails where the tool's
TCGEMM_REQUIRE_* variable is 1 (as in CI)."""
import pytest

from required import require_cuda_tool, skip_or_fail


def test_a_missing_tool_skips_with_the_reason(monkeypatch):
    monkeypatch.delenv("TCGEMM_REQUIRE_NODE", raising=False)
    with pytest.raises(pytest.skip.Exception, match="^node is not installed$"):
        skip_or_fail("TCGEMM_REQUIRE_NODE", "node is not installed")
    monkeypatch.setenv("TCGEMM_REQUIRE_NODE", "0")
    with pytest.raises(pytest.skip.Exception):
        skip_or_fail("TCGEMM_REQUIRE_NODE", "node is not installed")


def test_a_required_tool_fails_instead(monkeypatch):
    monkeypatch.setenv("TCGEMM_REQUIRE_NODE", "1")
    with pytest.raises(pytest.fail.Exception,
                       match="^node is not installed; TCGEMM_REQUIRE_NODE=1 makes this a failure$"):
        skip_or_fail("TCGEMM_REQUIRE_NODE", "node is not installed")


def test_cuda_tools_answer_to_tcgemm_require_nvcc(monkeypatch):
    monkeypatch.setattr("required.cuda_tool", lambda name: None)
    monkeypatch.setenv("TCGEMM_REQUIRE_NVCC", "1")
    with pytest.raises(pytest.fail.Exception, match=r"cuobjdump not found \(pip install -r requirements-test.txt"):
        require_cuda_tool("cuobjdump")
    monkeypatch.setattr("required.cuda_tool", lambda name: f"/bin/{name}")
    assert require_cuda_tool("nvcc") == "/bin/nvcc"
