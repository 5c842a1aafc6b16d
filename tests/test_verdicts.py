"""The verdict vocabulary is one enum: its precedence decides a row, and the README's table is its
output."""

from pathlib import Path

from mkbench.verdicts import SEVERITY, Verdict, markdown, worst

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_table_is_the_enums_output():
    text = README.read_text()
    begin, end = "<!-- verdicts:begin -->\n", "\n<!-- verdicts:end -->"
    assert begin in text and end in text, "README lost its verdict table markers"
    table = text[text.index(begin) + len(begin):text.index(end)]
    assert table.strip() == markdown().strip()


def test_every_verdict_has_a_rank_and_the_worst_wins():
    assert set(SEVERITY) == set(Verdict)
    assert worst([Verdict.CORRECT, Verdict.HACK, Verdict.INCORRECT]) == Verdict.HACK
    assert worst([Verdict.CORRECT, Verdict.FRAMEWORK]) == Verdict.FRAMEWORK
    assert worst([Verdict.CORRECT]) == Verdict.CORRECT
