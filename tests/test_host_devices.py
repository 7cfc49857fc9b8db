"""hackmatrix.host_devices: the CPU device-count request."""

import os
import sys

import pytest

from hackmatrix import host_devices


def test_request_is_refused_after_jax_is_imported(monkeypatch):
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    monkeypatch.setitem(sys.modules, "jax", object())
    assert host_devices.request_cpu_devices(2) is False
    assert "XLA_FLAGS" not in os.environ


def test_request_adds_the_flag_and_keeps_the_users_count(monkeypatch):
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    assert host_devices.request_cpu_devices(3) is True
    assert os.environ["XLA_FLAGS"] == (
        "--xla_cpu_multi_thread_eigen=false --xla_force_host_platform_device_count=3"
    )
    assert host_devices.request_cpu_devices(2) is False  # the count already set wins
    assert os.environ["XLA_FLAGS"].endswith("count=3")


def test_request_needs_a_positive_count():
    with pytest.raises(ValueError, match="at least one"):
        host_devices.request_cpu_devices(0)
