// The live runtime as seen from the page: one module Worker (Pyodide + calculators)
// per page session, started on demand, kept across Material's instant navigation.
// Every call has a watchdog: a call that never answers ends the worker, which is then
// restarted, so one runaway input cannot leave the calculators dead.

import { pageLanguage, t } from "./language.js";
const WORKER_URL = new URL("./worker.js", import.meta.url);
export const WATCHDOG_MS = window.__bmWatchdogMs || 10000;
const LOAD_TIMEOUT_MS = 60000;

const listeners = new Set();
const runtime = {
  worker: null,
  state: "idle", // idle | loading | ready | failed
  failure: "",
  nextId: 1,
  pending: new Map(),
  waiters: [],
};

/** Subscribe to state changes: fn(state, detail). */
export function onRuntime(fn) {
  listeners.add(fn);
}

export function runtimeState() {
  return runtime.state;
}

export function runtimeFailure() {
  return runtime.failure;
}

function emit(state, detail) {
  for (const fn of listeners) fn(state, detail);
}

function settleWaiters(error) {
  const waiters = runtime.waiters.splice(0);
  for (const { resolve, reject } of waiters) (error ? reject(error) : resolve());
}

function fail(message) {
  runtime.state = "failed";
  runtime.failure = message;
  if (runtime.worker) runtime.worker.terminate();
  runtime.worker = null;
  for (const call of runtime.pending.values()) {
    clearTimeout(call.watchdog);
    call.reject(new RuntimeUnavailable(message));
  }
  runtime.pending.clear();
  settleWaiters(new RuntimeUnavailable(message));
  emit("failed", message);
}

export class RuntimeUnavailable extends Error {}
export class Runaway extends Error {}

function onMessage(event) {
  const message = event.data || {};
  if (message.type === "ready") {
    runtime.state = "ready";
    performance.mark("bm:runtime-ready");
    window.__bmBoot = message.timings || {};
    settleWaiters(null);
    emit("ready");
  } else if (message.type === "loading") {
    // The runtime's download size (bundle.install writes it): the page says it.
    emit("loading", { bytes: message.bytes });
  } else if (message.type === "warmed") {
    // The worker's idle warm-up is done (worker.js): kept for make bench and the tests.
    window.__bmWarmUp = { rounds: message.rounds, ms: message.ms };
  } else if (message.type === "failed") {
    fail(String(message.message || "the runtime could not start"));
  } else if (message.type === "answer") {
    const call = runtime.pending.get(message.id);
    if (!call) return;
    runtime.pending.delete(message.id);
    clearTimeout(call.watchdog);
    call.resolve(message.answer);
  }
}

/** Start the worker if it is not running (idempotent). */
export function startRuntime() {
  if (runtime.state !== "idle") return;
  runtime.state = "loading";
  emit("loading");
  let worker;
  try {
    worker = new Worker(WORKER_URL, { type: "module" });
  } catch (err) {
    fail(String(err && err.message ? err.message : err));
    return;
  }
  runtime.worker = worker;
  worker.addEventListener("message", onMessage);
  worker.addEventListener("error", (event) => {
    event.preventDefault();
    fail(event.message || "the runtime's files could not be loaded");
  });
  setTimeout(() => {
    if (runtime.worker === worker && runtime.state === "loading") {
      fail(`the runtime did not load within ${LOAD_TIMEOUT_MS / 1000} s`);
    }
  }, LOAD_TIMEOUT_MS);
}

function whenReady() {
  if (runtime.state === "ready") return Promise.resolve();
  if (runtime.state === "failed") return Promise.reject(new RuntimeUnavailable(runtime.failure));
  startRuntime();
  return new Promise((resolve, reject) => runtime.waiters.push({ resolve, reject }));
}

function runaway(id) {
  const call = runtime.pending.get(id);
  if (!call) return;
  runtime.pending.delete(id);
  const others = Array.from(runtime.pending.values());
  runtime.pending.clear();
  if (runtime.worker) runtime.worker.terminate();
  runtime.worker = null;
  runtime.state = "idle";
  call.reject(new Runaway(t("This computation ran for more than {seconds} s and was stopped; the live runtime is restarting. Try smaller inputs.", { seconds: WATCHDOG_MS / 1000 })));
  emit("restarting");
  startRuntime();
  // Calls that were merely queued behind the runaway one are sent again.
  for (const other of others) {
    clearTimeout(other.watchdog);
    send(other);
  }
}

function send(call) {
  whenReady().then(() => {
    const id = runtime.nextId++;
    call.watchdog = setTimeout(() => runaway(id), WATCHDOG_MS);
    runtime.pending.set(id, call);
    runtime.worker.postMessage({ type: "call", id, op: call.op, payload: call.payload });
  }, call.reject);
}

/** Ask the calculators: op is compute | decode | encode | export | compare. They answer
 * in the page's language (notes, warnings, errors, tables); the numbers are the same. */
export function ask(op, payload) {
  const asked = { ...payload, lang: pageLanguage() };
  return new Promise((resolve, reject) => {
    send({ op, payload: JSON.stringify(asked), resolve, reject, watchdog: 0 });
  });
}
