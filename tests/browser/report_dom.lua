-- The report writer's DOM conventions, read back from Chromium's dumped DOM
-- (double-quoted attributes), and what a run journal says should be there.
--
--   report_dom.kind(dom)          -> content of <meta name="klineage-report"> | nil
--   report_dom.has_main(dom)      -> boolean
--   report_dom.steps(dom)         -> { id... }  each <section class="step" id="step-...">
--   report_dom.skill_cards(dom)   -> { id... }  each <article class="skill-card" data-skill="ID">
--   report_dom.charts(dom)        -> { { titled = boolean }... }  each <svg role="img">
--   report_dom.journal_steps(path) -> number of walk_step records | nil, failure
--   report_dom.missing_skill_cards(dom, expected_ids) -> { id... } expected but absent,
--                                                        { id... } present but not expected
local journal = require "klineage.store.journal"

local M = {}

local function tags(dom, name)
  local found = {}
  for tag in dom:gmatch("<" .. name .. "[%s>][^>]*>?") do found[#found + 1] = tag end
  return found
end

local function attr(tag, name)
  return tag:match("%s" .. name:gsub("%-", "%%-") .. '="([^"]*)"')
end

-- class="a b": one of its words.
local function has_class(tag, class)
  local value = attr(tag, "class")
  if not value then return false end
  for word in value:gmatch("%S+") do
    if word == class then return true end
  end
  return false
end

function M.kind(dom)
  for _, tag in ipairs(tags(dom, "meta")) do
    if attr(tag, "name") == "klineage-report" then return attr(tag, "content") end
  end
  return nil
end

function M.has_main(dom) return #tags(dom, "main") > 0 end

-- The task names of an eval report: its <section class="task" id="task-NAME">.
function M.tasks(dom)
  local names = {}
  for _, tag in ipairs(tags(dom, "section")) do
    if has_class(tag, "task") then
      local id = attr(tag, "id")
      names[#names + 1] = id and id:match("^task%-(.+)$") or false
    end
  end
  return names
end

function M.steps(dom)
  local ids = {}
  for _, tag in ipairs(tags(dom, "section")) do
    if has_class(tag, "step") then
      local id = attr(tag, "id")
      ids[#ids + 1] = id and id:match("^step%-") and id or false
    end
  end
  return ids
end

function M.skill_cards(dom)
  local ids = {}
  for _, tag in ipairs(tags(dom, "article")) do
    if has_class(tag, "skill-card") then ids[#ids + 1] = attr(tag, "data-skill") or false end
  end
  return ids
end

-- An <svg role="img"> is titled when a <title> comes before its </svg>.
function M.charts(dom)
  local charts = {}
  local at = 1
  while true do
    local s, e, tag = dom:find("(<svg[%s>][^>]*>)", at)
    if not s then break end
    if attr(tag, "role") == "img" then
      local close = dom:find("</svg>", e, true) or #dom
      local title = dom:find("<title[%s>]", e)
      charts[#charts + 1] = { titled = title ~= nil and title < close }
    end
    at = e + 1
  end
  return charts
end

function M.journal_steps(path)
  local records, f = journal.read(path)
  if not records then return nil, f end
  local n = 0
  for _, r in ipairs(records) do
    if r.kind == "walk_step" then n = n + 1 end
  end
  return n
end

-- >>> The skill-card check. The expected list is the caller's: for now the
-- fixture's own list; once the report writer settles which skills a report
-- shows, derive it from the run (or the skill repository) and pass it here.
function M.missing_skill_cards(dom, expected_ids)
  if type(expected_ids) ~= "table" then error("report_dom.missing_skill_cards: a list of skill ids expected", 2) end
  local present, wanted = {}, {}
  for _, id in ipairs(M.skill_cards(dom)) do present[id] = true end
  for _, id in ipairs(expected_ids) do wanted[id] = true end
  local missing, extra = {}, {}
  for _, id in ipairs(expected_ids) do
    if not present[id] then missing[#missing + 1] = id end
  end
  for _, id in ipairs(M.skill_cards(dom)) do
    if not wanted[id] then extra[#extra + 1] = tostring(id) end
  end
  return missing, extra
end

return M
