-- klineage.kir: a small loop-nest IR for naive one-thread-per-output
-- kernels, its analysis, one emitter and schedule primitives.
--
--   kir.lift(text [, { kernel }]) -> kernel | nil, reason
--   kir.emit(kernel) -> text | nil, reason
--   kir.analyze(kernel) -> analysis (klineage.kir.analysis)
--   kir.primitives: name -> { apply(kernel, params) -> kernel' | nil, reason, ... }
--   kir.apply(kernel, "map(x=j,block=256) coarsen(4)") -> kernel', log | nil, reason, log
--   kir.candidates(kernel) -> { { name, params, reason } } the legal applications
local M = {}

M.lift = function(...) return require("klineage.kir.lift").lift(...) end
M.emit = function(...) return require("klineage.kir.emit").emit(...) end

return M
