"""Operational errors: the one exception tree of scanpipe.

Per-card problems are never exceptions that escape a stage: they are values
(:class:`scanpipe.types.UnreadableCard`). These exceptions are for problems that stop a
command as a whole; the CLI maps them to exit status 2 in one place::

    ScanpipeError
     +-- ConfigError        a definition, layout, calibration file or argument is wrong
     |    +-- DefinitionError   election.json / layouts: carries every Problem found
     +-- SourceError        an input path, scanner or scheduler cannot be used
     +-- StorageError       the database cannot be opened, migrated or written
     +-- DecisionError      an adjudication or identification that cannot be recorded
"""

from __future__ import annotations

from dataclasses import dataclass


class ScanpipeError(Exception):
    """Base of every operational error."""


class ConfigError(ScanpipeError):
    pass


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem in a definition file: file, JSON path (``$.contests[2].id``) and reason."""

    file: str
    json_path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.json_path}: {self.reason}"


class DefinitionError(ConfigError):
    def __init__(self, problems: list[Problem]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"the election definition has {len(problems)} problem(s):\n{lines}")


class SourceError(ScanpipeError):
    pass


class StorageError(ScanpipeError):
    pass


class DecisionError(ScanpipeError):
    pass
