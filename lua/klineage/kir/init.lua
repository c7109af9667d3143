-- klineage.kir: a small loop-nest IR for naive one-thread-per-output
-- kernels, its analysis, one emitter and schedule primitives.
--
--   kir.lift(text [, { kernel = NAME, workload = SPEC }]) -> kernel | nil, reason
--     (with a workload, kernel.sizes: its parameters at the bench size,
--     which unflatten, stage and register_tile shape their candidates to)
--   kir.lift_all(text) -> { { name, kernel } | { name, why } } each __global__
--     function of the file lifted on its own, in the file's order
--   kir.emit(kernel) -> text | nil, reason
--   kir.analyze(kernel) -> the accesses and loops (klineage.kir.analysis)
--   kir.primitive(name) -> { name, apply(kernel, params) -> kernel', reason | nil, reason,
--                            candidates(kernel) -> { params... } (to try, not all legal) }
--   kir.apply(kernel, "map(x=j,block=256) coarsen(4)" | steps) -> kernel', log | nil, reason, log
--   kir.candidates(kernel) -> { { name, params, text, reason } } the legal single applications
--   kir.sequences(kernel [, depth=2 [, limit=200]]) -> { { text, kernel, reasons } }
--     legal sequences, breadth first, each primitive at most once a sequence
--   kir.schedule(text, "map(...) ...", { kernel }) -> emitted text, log | nil, reason, log
--   kir.sites(text) -> sites, kernels: every legal single application of each
--     kernel of the file that lifts, as a site of the family "schedule", and
--     each kernel's lift ({ fn, lifted, why }) (klineage.kir.sites)
--   kir.PRIMITIVES: the primitives' names, in the order they compose
--     (unflatten, map, register_tile, stage, split_reduce, unroll, coarsen, vectorize,
--     privatize, scan, segscan, bound, persist); each refuses, with a reason, to follow one it
--     cannot build on, and nothing follows persist.
local M = {}

M.PRIMITIVES = require("klineage.kir.schedule").ORDER

function M.lift(...) return require("klineage.kir.lift").lift(...) end
function M.sites(...) return require("klineage.kir.sites").of(...) end
function M.lift_all(...) return require("klineage.kir.lift").lift_all(...) end
function M.emit(...) return require("klineage.kir.emit").emit(...) end
function M.analyze(...) return require("klineage.kir.analysis").analyze(...) end
function M.primitive(name) return require("klineage.kir.schedule").primitive(name) end
function M.apply(...) return require("klineage.kir.schedule").apply(...) end
function M.candidates(...) return require("klineage.kir.schedule").candidates(...) end
function M.sequences(...) return require("klineage.kir.schedule").sequences(...) end

function M.schedule(text, steps, opts)
  local k, why = M.lift(text, opts)
  if not k then return nil, why, {} end
  local out, reason, log = M.apply(k, steps)
  if not out then return nil, reason, log end
  local emitted, ewhy = M.emit(out)
  if not emitted then return nil, ewhy, reason end
  return emitted, reason
end

return M
