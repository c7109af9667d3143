-- The prompt templates' filler. A template is Markdown; its only special
-- text is a placeholder, {{name}}, where name is a lower-case identifier
-- ([a-z_][a-z0-9_]*) with no spaces. Each is replaced by values[name],
-- verbatim: nothing is escaped, and a value's own "{{x}}" is not filled
-- again. Any other text, "{{ x }}" or "{{X}}" included, is left as it is.
--
--   template.fill(text, values) -> text
--       raises (misuse) when a placeholder has no value, or a value is
--       not a string or number; values the template does not use are fine
--   template.placeholders(text) -> the names it uses, in order, once each
--   template.load(name) -> the text of prompts/<name>.md, or of the file
--       name itself when it ends in ".md" (a researcher's copy)
local M = {}

local PLACEHOLDER = "{{([a-z_][a-z0-9_]*)}}"

function M.placeholders(text)
  local names, seen = {}, {}
  for name in text:gmatch(PLACEHOLDER) do
    if not seen[name] then
      seen[name] = true
      names[#names + 1] = name
    end
  end
  return names
end

function M.fill(text, values)
  if type(text) ~= "string" then error("template.fill: the template must be a string", 2) end
  if type(values) ~= "table" then error("template.fill: values must be a table", 2) end
  for _, name in ipairs(M.placeholders(text)) do
    local v = values[name]
    if v == nil then error("template.fill: no value for the placeholder {{" .. name .. "}}", 2) end
    if type(v) ~= "string" and type(v) ~= "number" then
      error("template.fill: the value of {{" .. name .. "}} is a " .. type(v) .. ", not a string", 2)
    end
  end
  -- one pass: gsub never rescans what it inserted
  return (text:gsub(PLACEHOLDER, function(name) return tostring(values[name]) end))
end

local function prompts_dir()
  local here = package.searchpath("klineage.llm.template", package.path)
  if not here then error("template.load: klineage.llm is not on package.path") end
  return here:gsub("template%.lua$", "prompts")
end

function M.load(name)
  if type(name) ~= "string" or name == "" then error("template.load: a template name is needed", 2) end
  local path = name:match("%.md$") and name or (prompts_dir() .. "/" .. name .. ".md")
  local text, f = require("klineage.base.files").read_text(path, 1 << 20, "a prompt template")
  if not text then error("template.load: no template " .. path .. " (" .. f.message .. ")", 2) end
  return text
end

return M
