-- The page around a report's body: reports/templates/page.html with the
-- style of reports/style/report.css inlined, both read at render time
-- from the engine's home, so that a researcher changes the look without
-- touching Lua.
--
--   page.html(kind, title, body) -> html | nil, failure (io_error: a
--       template or style that cannot be read, or that would break the
--       page: a style holding "</style" or a url(...) to anywhere)
--   page.paths() -> template path, style path
--
-- Slots in the template, each replaced once: {{kind}} and {{title}}
-- (escaped), {{style}} and {{body}} (the engine's own text). The template
-- must hold <main> around {{body}} and the klineage-report meta.
local escape = require "klineage.report.escape"
local files = require "klineage.base.files"
local verdicts = require "klineage.base.verdicts"
local host = require "kl.host"

local M = {}

function M.paths()
  local home = host.home or "."
  return home .. "/reports/templates/page.html", home .. "/reports/style/report.css"
end

local function fill(template, slots)
  return (template:gsub("{{(%a+)}}", function(name) return slots[name] end))
end

function M.html(kind, title, body)
  local tpath, spath = M.paths()
  local template, tf = files.read_text(tpath, 1 << 20)
  if not template then return nil, verdicts.failure("io_error", "the report template: " .. tf.message) end
  local style, sf = files.read_text(spath, 1 << 20)
  if not style then return nil, verdicts.failure("io_error", "the report style: " .. sf.message) end
  if style:lower():find("</style", 1, true) then
    return nil, verdicts.failure("io_error", files.display(spath) .. " holds </style: it would end the page's style early")
  end
  if style:lower():find("url%s*%(") or style:lower():find("@import", 1, true) then
    return nil, verdicts.failure("io_error", files.display(spath) .. " loads something (url() or @import): the page makes no request")
  end
  for _, slot in ipairs({ "{{kind}}", "{{title}}", "{{style}}", "{{body}}" }) do
    if not template:find(slot, 1, true) then
      return nil, verdicts.failure("io_error", string.format("%s has no %s slot", files.display(tpath), slot))
    end
  end
  return fill(template, { kind = escape.html(kind), title = escape.html(title), style = style, body = body })
end

return M
