// The live runtime: one module Worker per page session hosts Pyodide and the
// calculators wheel, and answers calls through calculators.core.bridge. All URLs are
// absolute (resolved against this script), which Pyodide needs to load the wheel.
import { RUNTIME } from "./runtime-config.js";

const indexURL = new URL(RUNTIME.indexURL, import.meta.url).href;
const lockFileURL = new URL(RUNTIME.lockFileURL, import.meta.url).href;
let bridgeCall = null;
// Boot phases, as epoch milliseconds, reported with "ready" (make bench prints them).
const timings = { start: performance.timeOrigin + performance.now() };
const stamp = (name) => {
  timings[name] = performance.timeOrigin + performance.now();
};

// Pyodide never settles if WebAssembly cannot be compiled (disabled, or a policy
// without 'wasm-unsafe-eval'), so check with an empty module first and fail fast.
async function checkWebAssembly() {
  if (typeof WebAssembly === "undefined") throw new Error("WebAssembly is disabled in this browser");
  try {
    await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
  } catch (err) {
    throw new Error(`WebAssembly is blocked here (${err && err.name ? err.name : "error"}; a ` +
      "Content-Security-Policy must allow 'wasm-unsafe-eval')");
  }
}

// The memory snapshot (made at build time by the same runtime) skips Python's start-up;
// it is fetched at once, in parallel with the runtime's own files. It is stored
// gzipped; a host that already decoded it (Content-Encoding) hands over the raw bytes.
async function fetchSnapshot(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`snapshot: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  const inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(inflated).arrayBuffer());
}

const snapshot = RUNTIME.snapshotURL && typeof DecompressionStream !== "undefined"
  ? fetchSnapshot(new URL(RUNTIME.snapshotURL, import.meta.url).href)
  : null;
if (snapshot) snapshot.catch(() => {}); // a failure is handled where it is awaited

// A snapshot is the runtime's whole WebAssembly memory after the calculators were
// imported, behind a header whose length is the header's second 32-bit word. Pyodide
// writes it into a fresh instance's memory as it is, and the fresh instance starts at
// the size its binary declares (30 MiB in Pyodide 314.0.7); once the imported package
// made the memory grow past that (36 MiB), the write fell out of bounds and every page
// started without the snapshot. So the module factory is wrapped to grow the memory to
// the snapshot's size first, with Emscripten's own growMemory (which also renews its
// views of the memory).
async function sizedForSnapshot(bytes) {
  const factory = (await import(new URL("pyodide.asm.mjs", indexURL).href)).default;
  const header = new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(4, true);
  const heapBytes = bytes.byteLength - header;
  return async (settings) => {
    const module = await factory(settings);
    if (module.HEAP8.length < heapBytes) module.growMemory(heapBytes);
    return module;
  };
}

// Resolves to the bridge's call function. The snapshot already holds the calculators,
// imported (made at build time from this site's wheel), so only a normal start installs
// the wheel and imports them.
async function start(loadPyodide, fromSnapshot) {
  const options = { indexURL, lockFileURL, stdout: () => {}, stderr: () => {} };
  if (fromSnapshot) {
    const bytes = await snapshot;
    options._loadSnapshot = bytes;
    options.createPyodideModule = await sizedForSnapshot(bytes);
  }
  const pyodide = await loadPyodide(options);
  if (!fromSnapshot) await pyodide.loadPackage(RUNTIME.package, { messageCallback: () => {} });
  stamp("pyodide");
  return pyodide.pyimport("calculators.core.bridge").call;
}

async function boot() {
  await checkWebAssembly();
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  stamp("module");
  if (snapshot) {
    try {
      bridgeCall = await start(loadPyodide, true);
      timings.snapshot = true;
    } catch {
      bridgeCall = null; // an unusable snapshot costs only the attempt: start normally
    }
  }
  if (!bridgeCall) bridgeCall = await start(loadPyodide, false);
  stamp("imported");
}

// Warm-up. Browsers compile WebAssembly twice: a quick baseline first, then optimised
// code for the functions that turn out hot, in the background. Python's interpreter
// loop is one such function, and a call that starts in the baseline code stays in it
// until it returns. So the first heavy computation a reader asks for (the capstone's
// sizing search) took 60-75 ms in headless Chromium against 25-35 ms a few calls
// later. Once the page has asked for nothing for half a second (a reader reading), the
// worker runs short computations (light calculators at their defaults, a few
// milliseconds each) until a round of them stops getting faster: 30-90 of them, 0.2-0.5
// s of one core, once per visit, and only for a reader who has used a calculator (the
// worker starts then). The first heavy call then took 33-40 ms. A call waits for
// at most the one short computation under way. It waits for quiet rather than running
// at once because a navigation right after a result (bench.py's second pages) would
// compete with it for the CPU: that made those pages 20-60 ms slower on two cores.
const WARM_UP_CALCULATORS = [
  "collective_time", "goodput", "fabric_sizing", "model_memory", "sparse_training",
  "embedding_sharding", "roofline", "incast",
];
const WARM_UP_IDLE_MS = 500; // how long the page must have asked for nothing
const WARM_UP_MAX_ROUNDS = 12;
const warmUp = {
  lastCall: 0, round: 0, next: 0, roundMs: 0, bestMs: Infinity, slower: 0, totalMs: 0,
};

function warmUpStep() {
  const waited = performance.now() - warmUp.lastCall;
  if (waited < WARM_UP_IDLE_MS) {
    setTimeout(warmUpStep, WARM_UP_IDLE_MS - waited);
    return;
  }
  const calc = WARM_UP_CALCULATORS[warmUp.next];
  const began = performance.now();
  try {
    bridgeCall("compute", JSON.stringify({ calc, inputs: {} }));
  } catch {
    return; // the bridge answers errors as data; anything else ends the warm-up, quietly
  }
  const took = performance.now() - began;
  warmUp.roundMs += took;
  warmUp.totalMs += took;
  warmUp.next = (warmUp.next + 1) % WARM_UP_CALCULATORS.length;
  if (warmUp.next === 0) {
    // Done once two rounds in a row are no faster than the fastest so far.
    warmUp.slower = warmUp.roundMs >= 0.95 * warmUp.bestMs ? warmUp.slower + 1 : 0;
    warmUp.bestMs = Math.min(warmUp.bestMs, warmUp.roundMs);
    warmUp.roundMs = 0;
    warmUp.round += 1;
    if (warmUp.slower >= 2 || warmUp.round >= WARM_UP_MAX_ROUNDS) {
      postMessage({ type: "warmed", rounds: warmUp.round, ms: warmUp.totalMs });
      return;
    }
  }
  setTimeout(warmUpStep, 0);
}

const booting = boot().then(
  () => {
    postMessage({ type: "ready", timings });
    if (bridgeCall) {
      warmUp.lastCall = performance.now();
      setTimeout(warmUpStep, WARM_UP_IDLE_MS);
    }
  },
  (err) => postMessage({ type: "failed", message: String(err && err.message ? err.message : err) }),
);

// What the page is about to wait for, said before the download starts (issue 37).
postMessage({ type: "loading", bytes: RUNTIME.downloadBytes || null });

self.addEventListener("message", async (event) => {
  const message = event.data || {};
  if (message.type !== "call") return;
  warmUp.lastCall = performance.now();
  await booting;
  let answer;
  if (!bridgeCall) {
    answer = { ok: false, error: { input: "calculator", message: "the live runtime is unavailable" } };
  } else {
    const started = performance.now();
    try {
      answer = JSON.parse(bridgeCall(String(message.op), String(message.payload)));
    } catch (err) {
      // The bridge answers every error as data; this is the last line of defence.
      answer = { ok: false, error: { input: "calculator", message: `internal error: ${err}` } };
    }
    answer.ms = performance.now() - started;
    warmUp.lastCall = performance.now();
  }
  postMessage({ type: "answer", id: message.id, answer });
});
