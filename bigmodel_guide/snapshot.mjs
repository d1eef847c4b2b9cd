// Make a Pyodide memory snapshot: the interpreter state right after start-up, so that a
// page can skip Python's initialisation (about 1.5 s of the runtime's 3 s start).
// Made at build time by the very runtime the site ships, so it is version-locked.
// usage: node snapshot.mjs <pyodide dir> <output file>
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, output] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ _makeSnapshot: true, stdout: () => {}, stderr: () => {} });
writeFileSync(output, pyodide.makeMemorySnapshot());
