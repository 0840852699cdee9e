from ampere_tiles import ops

__all__ = ["ops"]
