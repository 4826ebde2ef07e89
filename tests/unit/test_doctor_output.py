"""`doctor` for people: dozens of missing revocations are one finding with one script."""

from __future__ import annotations

import pytest

from schemawise.cli import _print_findings


def revocation(function: str) -> dict[str, str]:
    return {
        "severity": "warning", "check": "revocation",
        "message": f"PUBLIC may execute {function}(text): reads a file.",
        "fix": f"REVOKE EXECUTE ON FUNCTION {function}(text) FROM PUBLIC; -- as the owner",
    }  # fmt: skip


def test_many_revocations_are_one_finding_with_one_script(
    capsys: pytest.CaptureFixture[str],
) -> None:
    role = {"severity": "ok", "check": "superuser", "message": "not a superuser.", "fix": ""}
    _print_findings([role, *(revocation(f"f{n}") for n in range(10))])
    printed = capsys.readouterr().out
    assert printed.count("revocation:") == 1 and "10 functions" in printed
    assert printed.count("REVOKE EXECUTE ON FUNCTION") == 10
    assert "-- as the owner" not in printed  # said once, above the script
    assert "ok superuser: not a superuser." in printed


def test_a_few_revocations_are_listed_one_by_one(capsys: pytest.CaptureFixture[str]) -> None:
    _print_findings([revocation("a"), revocation("b")])
    printed = capsys.readouterr().out
    assert printed.count("revocation:") == 2
