from .dot import tile_dot

__all__ = ["tile_dot"]
