"""``--output`` of ``audit`` and ``show``: checked before the launch, named when it fails."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankaug.cli import audit, show
from rankaug.cli.output import check_output, output_error, write_text
from tests.cli_helpers import T, run_main


def no_launch(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("launched although --output cannot be written")


class TestCheckOutput:
    def test_files_to_be_made_pass(self, tmp_path: Path) -> None:
        assert (
            check_output(tmp_path / "new" / "deeper" / "r.json") == tmp_path / "new/deeper/r.json"
        )
        assert check_output("relative.json") == Path("relative.json")

    def test_a_folder_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match=r"--output: '.*' is a folder; give a file path"):
            check_output(tmp_path)

    def test_a_path_under_a_file_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "f.txt").write_text("x")
        with pytest.raises(ValueError, match=r"--output: cannot write .*/f.txt' is a file, not"):
            check_output(tmp_path / "f.txt" / "sub" / "r.json")
        with pytest.raises(ValueError, match=r"^--out: cannot write"):
            check_output(tmp_path / "f.txt" / "r.json", "--out")

    def test_a_folder_without_write_permission_is_refused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path)
        with pytest.raises(ValueError, match=r"the folder '.*' is not writable"):
            check_output(tmp_path / "a" / "r.json")

    def test_a_name_the_system_refuses_is_a_value_error(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="--output: cannot write"):
            check_output(tmp_path / ("x" * 5000) / "r.json")


class TestWriteText:
    def test_writes_making_the_folder(self, tmp_path: Path) -> None:
        path = write_text(tmp_path / "a" / "r.json", "{}\n")
        assert path.read_text() == "{}\n"

    def test_a_failure_names_the_option(self, tmp_path: Path) -> None:
        (tmp_path / "f.txt").write_text("x")
        with pytest.raises(OSError, match=r"^--output: cannot write '.*r.json': ") as caught:
            write_text(tmp_path / "f.txt" / "r.json", "{}")
        assert isinstance(caught.value.__cause__, OSError)
        error = output_error("r.json", PermissionError(13, "Permission denied"), "--to")
        assert str(error) == "--to: cannot write 'r.json': Permission denied"


class TestAuditOutput:
    @pytest.mark.parametrize("under", ["", "file.txt/report.json"])
    def test_checked_before_the_launch(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, under: str
    ) -> None:
        # the whole audit ran, then exit 2 on an OSError naming no option, no report
        (tmp_path / "file.txt").write_text("x")
        monkeypatch.setattr(audit, "launch", no_launch)
        code, out, err = run_main("audit", T + "plain", "--output", str(tmp_path / under), "-q")
        assert code == 2
        assert out == ""
        assert err.startswith("rankaug audit: error: --output: ")

    def test_the_report_is_printed_before_a_write_that_fails(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        class Report:
            exit_code = 1

            def to_text(self) -> str:
                return "FAIL: the report"

            def to_json(self) -> str:
                return "{}"

        (tmp_path / "file.txt").write_text("x")
        monkeypatch.setattr(audit, "check_output", lambda path: Path(path))
        monkeypatch.setattr(audit, "run_audit", lambda config: Report())
        output = str(tmp_path / "file.txt" / "r.json")
        code, out, err = run_main("audit", T + "plain", "--output", output, "-q")
        assert code == 2
        assert out == "FAIL: the report\n"
        assert err.startswith(f"rankaug audit: error: --output: cannot write {output!r}: ")


class TestShowOutput:
    def test_checked_before_the_launch(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(show, "launch", no_launch)
        folder = tmp_path / "sheet.png"
        folder.mkdir()
        code, _, err = run_main("show", T + "plain", "--output", str(folder), "-q")
        assert code == 2
        assert (
            err == f"rankaug show: error: --output: {str(folder)!r} is a folder; give a file path\n"
        )

    def test_a_write_that_fails_names_the_option(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (tmp_path / "file.txt").write_text("x")
        monkeypatch.setattr(show, "check_output", lambda path: Path(path))
        monkeypatch.setattr(
            show, "launch", lambda job, ranks, seed: [[np.zeros((64, 32, 3), np.uint8)]]
        )
        output = str(tmp_path / "file.txt" / "s.png")
        code, _, err = run_main("show", T + "plain", "--output", output, "--thumb", "32", "-q")
        assert code == 2
        assert err.startswith(f"rankaug show: error: --output: cannot write {output!r}: ")

    def test_the_epoch_is_bounded(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # 2**32 passed argparse and failed in the ranks with a traceback
        monkeypatch.setattr(show, "launch", no_launch)
        code, _, err = run_main("show", T + "plain", "--epoch", str(2**32), "-q")
        assert code == 2
        assert "argument --epoch: must be an integer in [0, 4294967295], got '4294967296'" in err
        with pytest.raises(ValueError, match=r"--epoch must be an integer in \[0, 2\*\*32\)"):
            show.run_show(show.ShowConfig(T + "plain", epoch=2**32))
