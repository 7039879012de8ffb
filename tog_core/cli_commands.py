"""Sub-commands beyond `inspect` (query, bench, export) register themselves here."""
