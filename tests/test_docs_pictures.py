"""The picture of the logistic regression's training step in docs/ is drawn from the current
compiled graph (tools/gen_logreg_picture.py)."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_logistic_regression_picture_is_current():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_logreg_picture.py"),
                             "--check"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_docs_show_the_picture():
    text = (ROOT / "docs" / "compatibility.md").read_text()
    assert "images/logreg_train.svg" in text
    assert (ROOT / "docs" / "images" / "logreg_train.svg").read_text().startswith("<?xml")
