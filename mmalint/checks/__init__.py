"""The rules layer: normalized calls of every instruction family in, findings out.

`call` (the normalized site), `families/` (one module per instruction family, and their registry),
`conditions/` (one module per family), `rules` (the catalog's checks run over a call) and
`availability` (API uses). Import what you need from those modules: this package imports
nothing itself, so the catalog can read the conditions' names without loading the rules.
"""
