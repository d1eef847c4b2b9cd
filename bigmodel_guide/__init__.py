"""The MkDocs plugin that turns ```calculator fences into live calculators (build time only)."""
