"""The bit-exact behavioural model of the accelerator (the golden reference)."""
