"""The op reference in docs/ is generated from the op definitions and must be current."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_op_reference_is_generated_from_the_current_op_definitions():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_op_reference.py"), "--check"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_op_reference_names_every_registered_op():
    import lowering.dialects  # noqa: F401
    from lowering.ir.context import default_context
    text = (ROOT / "docs" / "ops.md").read_text()
    missing = [name for name in default_context().ops if f"`{name}`" not in text]
    assert missing == []
