"""chessaccel: a Hydra-style chess search accelerator, its model and its host."""
