"""The machinery that knows nothing about training: declarations and validation
(``spec``), units, the lazy registry, share links and exports, SVG charts, the command
line and the worker's JSON bridge. Nothing in ``core`` imports a formula, a catalogue
or a calculator; it reaches calculators only through the package's public API."""
