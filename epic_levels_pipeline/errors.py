"""Problems found in input files, and the exceptions that carry them.

One exception type per kind of failure, caught once at the edge (CLI, asset) and turned into lines a person can
act on: ``FILE:ROW:COLUMN: message``. ROW is the 1-based line of a CSV file (the header is line 1), a JSON record's
key path (``P02_R06/captures/0``) or a pickled table's row position; COLUMN is the column or field, or ``-`` for
the whole row or file."""

from __future__ import annotations

from dataclasses import dataclass

from .terminal import printable

#: Longest message of one problem shown (its file, row and column are cut at ``terminal.VALUE_LIMIT``).
MESSAGE_LIMIT = 600


@dataclass(frozen=True)
class Problem:
    file: str
    row: int | str
    column: str
    message: str
    # "error": the file is not usable as it is (validate exits 1).
    # "dropped": a known, explained defect; the row is left out and counted with this reason.
    # "kept": would be an error, but the user marked the row as meant (the manifest's `deliberate`); reported.
    severity: str = "error"

    def __str__(self) -> str:
        """``FILE:ROW:COLUMN: message``, every part made safe to print (the parts come from files)."""
        prefix = "dropped: " if self.severity == "dropped" else ""
        return (f"{printable(self.file)}:{printable(self.row)}:{printable(self.column)}: "
                f"{prefix}{printable(self.message, MESSAGE_LIMIT)}")


class AnnotationError(Exception):
    """Raised when annotation files fail validation; carries every problem found, not only the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = [p for p in problems if p.severity == "error"]
        shown = "\n".join(str(p) for p in self.problems[:50])
        more = f"\n... and {len(self.problems) - 50} more" if len(self.problems) > 50 else ""
        super().__init__(f"{len(self.problems)} problem(s) in annotation files:\n{shown}{more}")


class ManifestError(Exception):
    """The clip manifest (data/clips.csv) is malformed; the message names file, row and column."""


class ClipKeyError(ValueError):
    """A clip key does not have the form ``dataset__video__start-end``."""
