"""Changes of many steps (a write's commit, a DDL of many metastore calls) made whole or not at all: each
step written to an undo log before it is taken, and what a killed process left undone, completed (a change
written down whole first) or finished by the next to look."""

from hms_catalog.commits.recovery import finish_unfinished, process_folder
from hms_catalog.commits.undo import UndoLog, decode_struct, encode_struct

__all__ = ["UndoLog", "decode_struct", "encode_struct", "finish_unfinished", "process_folder"]
