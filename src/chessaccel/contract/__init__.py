"""The contract every implementation shares: the shapes and codes (defs), board geometry, the
evaluation tables, the link protocol, the bench positions and the reading of positions. It imports
nothing else of chessaccel; everything else imports it (docs/semantics.md defines the search)."""
