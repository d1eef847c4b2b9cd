// The live runtime: one module Worker per page session hosts Pyodide and the
// calculators wheel, and answers compute requests. All URLs are absolute (resolved
// against this script), which Pyodide needs to load the site's own wheel.
import { RUNTIME } from "./runtime-config.js";

const indexURL = new URL(RUNTIME.indexURL, import.meta.url).href;
const lockFileURL = new URL(RUNTIME.lockFileURL, import.meta.url).href;
let computeJson = null;

async function boot() {
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  const pyodide = await loadPyodide({
    indexURL,
    lockFileURL,
    packages: [RUNTIME.package],
    stdout: () => {},
    stderr: () => {},
  });
  computeJson = pyodide.pyimport("calculators.bridge").compute_json;
}

const booting = boot().then(
  () => postMessage({ type: "ready" }),
  (err) => postMessage({ type: "failed", message: String(err && err.message ? err.message : err) }),
);

self.addEventListener("message", async (event) => {
  const message = event.data || {};
  if (message.type !== "compute") return;
  await booting;
  if (!computeJson) {
    postMessage({
      type: "result", id: message.id, ok: false,
      error: { input: "calculator", message: "the live runtime is unavailable" },
    });
    return;
  }
  const started = performance.now();
  const answer = JSON.parse(computeJson(String(message.calc), JSON.stringify(message.inputs || {})));
  postMessage({ type: "result", id: message.id, ms: performance.now() - started, ...answer });
});
