// Load the pinned Pyodide from node_modules, install the calculators wheel, and run
// every case through the same JSON bridge the browser worker uses.
// usage: node run_calculators.mjs <wheel> <cases.json> [<memory snapshot>]
//   -> {"python", "snapshot", "preloaded", "specialised", "answers"} on stdout; with a snapshot, the runtime starts from it and
//   uses the calculators imported in it (the wheel is not installed), as the site's
//   worker does.
import { readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import { pathToFileURL } from "node:url";
import { loadPyodide } from "pyodide";

const [wheel, casesPath, snapshotPath] = process.argv.slice(2);
const cases = JSON.parse(await readFile(casesPath, "utf8"));
const options = { stdout: () => {}, stderr: (line) => process.stderr.write(line + "\n") };
if (snapshotPath) {
  const bytes = gunzipSync(await readFile(snapshotPath));
  options._loadSnapshot = bytes;
  // As the site's worker does (sizedForSnapshot in worker.js): the snapshot's memory can
  // be larger than the one a fresh runtime starts with, so it is grown first.
  const factory = (await import("pyodide/pyodide.asm.mjs")).default;
  const heapBytes = bytes.byteLength - bytes.readUInt32LE(4);
  options.createPyodideModule = async (settings) => {
    const module = await factory(settings);
    if (module.HEAP8.length < heapBytes) module.growMemory(heapBytes);
    return module;
  };
}
const pyodide = await loadPyodide(options);
if (!snapshotPath) await pyodide.loadPackage(pathToFileURL(wheel).href, { messageCallback: () => {} });
// What the runtime holds before the first call: from the snapshot, every module.
const preloaded = pyodide.runPython(
  "import sys; sorted(m for m in sys.modules if m.split('.')[0] == 'calculators')",
).toJs();
// Which calculators' functions the interpreter has already specialised (run once): from
// the snapshot, those it warmed (snapshot.mjs); from a fresh start, none.
const specialised = pyodide.runPython(`
import dis
from calculators.registry import REGISTRY


def specialised(code):
    adaptive = dis.get_instructions(code, adaptive=True)
    return any(a.opname != b.opname for a, b in zip(adaptive, dis.get_instructions(code)))


sorted(c for c in REGISTRY if specialised(REGISTRY[c].function.__code__))
`).toJs();
const compute = pyodide.pyimport("calculators.core.bridge").compute_json;
const version = pyodide.runPython("import sys; sys.version.split()[0]");
const answers = cases.map(([calc, inputs]) => {
  const started = performance.now();
  const text = compute(calc, JSON.stringify(inputs));
  return { text, ms: performance.now() - started };
});
process.stdout.write(JSON.stringify({
  python: version, snapshot: Boolean(snapshotPath), preloaded, specialised, answers,
}));
