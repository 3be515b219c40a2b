"""The typed board model: ``load_boards(Path("boards"))`` is the only way other stages read board files."""

from xzbuild.model.loader import load_boards
from xzbuild.model.types import Board, BoardSet, FirmwareFacts, KconfigEntry, SourceFacts, Variant

__all__ = ["Board", "BoardSet", "FirmwareFacts", "KconfigEntry", "SourceFacts", "Variant", "load_boards"]
