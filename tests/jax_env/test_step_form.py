"""The switch between the step's two compiled forms (jax_env/machinery/form.py)."""

import pytest

from hackmatrix.jax_env.machinery import form


def test_the_default_is_gathered_on_every_backend(monkeypatch):
    monkeypatch.delenv(form.ENV_VAR, raising=False)
    assert form.default_form() == form.current() == form.GATHERED
    assert not form.masked()


def test_the_environment_variable_chooses(monkeypatch):
    monkeypatch.setenv(form.ENV_VAR, "masked")
    assert form.current() == form.MASKED and form.masked()


def test_a_bad_environment_value_names_the_variable(monkeypatch):
    monkeypatch.setenv(form.ENV_VAR, "fused")
    with pytest.raises(ValueError, match="HACKMATRIX_STEP_FORM='fused'.*gathered, masked"):
        form.default_form()


def test_using_nests_and_restores(monkeypatch):
    monkeypatch.delenv(form.ENV_VAR, raising=False)
    with form.using(form.MASKED):
        assert form.masked()
        with form.using(form.GATHERED):
            assert form.current() == form.GATHERED
        assert form.masked()
    assert form.current() == form.GATHERED
    with pytest.raises(ValueError, match="step form must be one of"), form.using("fused"):
        pass
    assert form.current() == form.GATHERED
