-- Schedule rows for the forward search: the node's kernel lifted by kir,
-- its legal primitive sequences (depth 2, capped), each emitted and
-- predicted by the static model (search/schedule_rank.lua), best first.
-- The emitted text is never trusted: the gate judges it as any source row.
--   schedules.rows(state, node, { depth = 2, limit = 40 }) -> rows
local kir = require "klineage.kir"
local rank = require "klineage.search.schedule_rank"

local M = {}

M.DEPTH, M.LIMIT = 2, 40

function M.rows(state, node, opts)
  opts = opts or {}
  local ok, kernel, why = pcall(kir.lift, node.source, { kernel = state.workload.kernel })
  if not ok then kernel, why = nil, tostring(kernel):gsub("\n.*", "") end
  if not kernel then
    state.unlifted = state.unlifted or {}
    if not state.unlifted[node.sha256] then
      state.unlifted[node.sha256] = true
      state:decide({ skill = "schedule", site = "lift" }, node,
                   { status = "skipped", why = "the kernel does not lift to the IR: " .. tostring(why) })
    end
    return {}
  end
  local sok, seqs = pcall(kir.sequences, kernel, opts.depth or M.DEPTH, opts.limit or M.LIMIT)
  if not sok then return {} end
  local rows = {}
  for _, seq in ipairs(seqs) do
    local eok, text = pcall(kir.emit, seq.kernel)
    local first = seq.text:match("^([%w_]+)")
    local key = node.sha256 .. "|schedule:" .. tostring(first) .. "|" .. seq.text .. "|{}"
    if eok and type(text) == "string" and text ~= node.source and not state.tried[key] then
      rows[#rows + 1] = { skill = "schedule:" .. first, site = seq.text, schedule = seq.text, params_key = "{}",
                          source = text, by = "schedule", because = seq.reasons, node = node,
                          predicted = rank.predict(kernel, seq.kernel, seq.text, seq.reasons) }
    end
  end
  return rank.rank(rows)
end

return M
