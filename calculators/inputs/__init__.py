"""Input declarations shared by several calculators, each declared once with its
source, and how validated inputs are read into the formulas' records."""
