// Make a Pyodide memory snapshot: the interpreter state right after start-up, so that a
// page can skip Python's initialisation (about 1.5 s of the runtime's 3 s start), with
// the calculators package already imported, so that a page also skips fetching and
// unpacking its wheel and compiling its modules (a calculator's first use cost about
// 60 ms in Node for the import alone, more in a browser, and was paid again on each
// page with a calculator not used before). Made at build time by the very runtime the
// site ships, from the very wheel it ships, so it is version-locked to both.
// usage: node snapshot.mjs <pyodide dir> <wheel> <package> <output file>
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, wheel, packageName, output] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ _makeSnapshot: true, stdout: () => {}, stderr: () => {} });
// Unzipped into site-packages rather than installed with loadPackage: a snapshot cannot
// carry loadPackage's bookkeeping (Pyodide refuses to serialise it). The files
// themselves are not in the snapshot either (the file system lives outside the
// WebAssembly memory), which is why every module is imported here, now.
pyodide.FS.writeFile("/tmp/package.whl", readFileSync(wheel));
pyodide.runPython(`
def import_everything(wheel, name):
    import gc, importlib, os, pkgutil, site, zipfile

    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site.getsitepackages()[0])
    os.remove(wheel)
    package = importlib.import_module(name)
    for module in pkgutil.walk_packages(package.__path__, name + "."):
        # __main__ and the command line are for a terminal, not a page.
        if module.name.rsplit(".", 1)[-1] not in ("__main__", "cli"):
            importlib.import_module(module.name)
    gc.collect()

import_everything("/tmp/package.whl", ${JSON.stringify(packageName)})
del import_everything
`);
writeFileSync(output, pyodide.makeMemorySnapshot());
