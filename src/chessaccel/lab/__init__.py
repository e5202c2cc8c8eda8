"""The lab: benchmarks, sweeps and profilers beside the product (lab/README.md lists each). It may
import any part of chessaccel; no part of the product imports it."""
