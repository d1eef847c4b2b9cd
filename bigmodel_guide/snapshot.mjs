// Make a Pyodide memory snapshot: the interpreter state after start-up, so that a page
// can skip Python's initialisation (about 1.5 s of the runtime's 3 s start), with the
// calculators package already imported, so that a page also skips fetching and
// unpacking its wheel and compiling its modules (a calculator's first use cost about
// 60 ms in Node for the import alone, more in a browser, and was paid again on each
// page with a calculator not used before), and with the calculators already run once
// (see warmUp). Made at build time by the very runtime the site ships, from the very
// wheel it ships, so it is version-locked to both.
// usage: node snapshot.mjs <pyodide dir> <wheel> <package> <output file>
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, wheel, packageName, output] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);

// A fresh runtime with every module of the package imported.
async function startWithPackage() {
  const pyodide = await loadPyodide({ _makeSnapshot: true, stdout: () => {}, stderr: () => {} });
  // Unzipped into site-packages rather than installed with loadPackage: a snapshot
  // cannot carry loadPackage's bookkeeping (Pyodide refuses to serialise it). The files
  // themselves are not in the snapshot either (the file system lives outside the
  // WebAssembly memory), which is why every module is imported here, now.
  pyodide.FS.writeFile("/tmp/package.whl", readFileSync(wheel));
  pyodide.runPython(`
def import_everything(wheel, name):
    import importlib, os, pkgutil, site, zipfile

    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site.getsitepackages()[0])
    os.remove(wheel)
    package = importlib.import_module(name)
    for module in pkgutil.walk_packages(package.__path__, name + "."):
        # __main__ and the command line are for a terminal, not a page.
        if module.name.rsplit(".", 1)[-1] not in ("__main__", "cli"):
            importlib.import_module(module.name)
    # The message catalogues are files too: read them now, into the memory the
    # snapshot keeps (calculators.core.i18n caches each language's).
    i18n = importlib.import_module(name + ".core.i18n")
    for lang in i18n.LANGUAGES:
        i18n.catalogue(lang)

import_everything("/tmp/package.whl", ${JSON.stringify(packageName)})
del import_everything
`);
  return pyodide;
}

// Each calculator computes its defaults once, through the bridge as a page calls it, so
// that the snapshot holds a warm interpreter: the bytecode the interpreter specialises
// on its first runs, and what the calculators cache of pure functions (the planner's
// cost of each layout). Without this, a page's first sizing search took about twice as
// long as the next (natively 9-11 ms against 4-6). The snapshot is the whole WebAssembly
// memory, so a calculator whose defaults make that memory grow is left cold: the
// planner's search grew it from 31.5 to 37.7 MB, 0.7 MB more for every reader to
// fetch. Returns the id of the calculator that made it grow, or null.
function warmUp(pyodide, skipped) {
  const memoryBytes = () => pyodide._module.HEAP8.length;
  const before = memoryBytes();
  const ids = JSON.parse(pyodide.runPython(`
import importlib, json
bridge = importlib.import_module(${JSON.stringify(packageName)} + ".core.bridge")
json.dumps(list(importlib.import_module(${JSON.stringify(packageName)} + ".registry").REGISTRY))
`));
  for (const id of ids) {
    if (skipped.has(id)) continue;
    pyodide.runPython(`bridge.call("compute", json.dumps({"calc": ${JSON.stringify(id)}, "inputs": {}}))`);
    if (memoryBytes() > before) return id;
  }
  pyodide.runPython("del bridge, importlib, json\nimport gc\ngc.collect()\ndel gc");
  return null;
}

const skipped = new Set();
for (;;) {
  const pyodide = await startWithPackage();
  const grew = warmUp(pyodide, skipped);
  if (grew === null) {
    writeFileSync(output, pyodide.makeMemorySnapshot());
    break;
  }
  skipped.add(grew); // start again without it: memory once grown does not shrink
}
