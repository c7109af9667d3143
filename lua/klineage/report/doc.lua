-- A report document: Markdown for the text and the tables, and pieces of
-- the engine's own HTML (charts, highlighted diffs, the <section> and
-- <article> around a step or a skill card) that Markdown cannot say.
--
--   local d = doc.new()
--   d:md(text)              Markdown the engine wrote; whatever came from
--                           outside the engine in it went through
--                           klineage.report.escape first
--   d:raw(html [, md])      the engine's HTML, for the page; md (default
--                           none) stands in for it in report.md
--   d:markdown() -> the report.md text
--   d:body_html() -> the page's body: the Markdown rendered by kl.md
--                    (safe: raw HTML dropped), then each raw piece put
--                    where its placeholder paragraph was
--
-- The placeholders are paragraphs of one word, "klraw<nonce>x<n>", where
-- the nonce is a hash of all the Markdown text: a word no text in the
-- document contains (checked), so no outside text can stand for one and
-- have engine HTML put in its place. A raw piece is never given to cmark.
local hash = require "kl.hash"
local md = require "kl.md"

local M = {}

local Doc = {}
Doc.__index = Doc

function M.new() return setmetatable({ parts = {} }, Doc) end

function Doc:md(text)
  if type(text) ~= "string" then error("doc:md: text expected", 2) end
  self.parts[#self.parts + 1] = { md = text }
  return self
end

function Doc:raw(html, fallback)
  if type(html) ~= "string" then error("doc:raw: html expected", 2) end
  self.parts[#self.parts + 1] = { raw = html, fallback = fallback }
  return self
end

-- Markdown blocks are separated by blank lines, so that each placeholder
-- is a paragraph of its own and no block runs into the next.
local function joined(list)
  local out = {}
  for _, s in ipairs(list) do
    if s ~= "" then out[#out + 1] = (s:gsub("\n*$", "")) end
  end
  return table.concat(out, "\n\n") .. "\n"
end

function Doc:markdown()
  local list = {}
  for _, p in ipairs(self.parts) do list[#list + 1] = p.md or p.fallback or "" end
  return joined(list)
end

function Doc:body_html()
  local texts = {}
  for _, p in ipairs(self.parts) do texts[#texts + 1] = p.md or "" end
  local nonce = "klraw" .. hash.sha256(table.concat(texts, "\0")):sub(1, 20)
  for _, t in ipairs(texts) do
    if t:find(nonce, 1, true) then error("doc: the placeholder word occurs in the text (a hash collision)", 2) end
  end
  local list, pieces = {}, {}
  for _, p in ipairs(self.parts) do
    if p.raw then
      pieces[#pieces + 1] = p.raw
      list[#list + 1] = nonce .. "x" .. #pieces
    else
      list[#list + 1] = p.md
    end
  end
  local html = md.html(joined(list))
  local seen = 0
  html = html:gsub("<p>(" .. nonce .. "x(%d+))</p>\n?", function(_, n)
    seen = seen + 1
    return pieces[tonumber(n)] .. "\n"
  end)
  -- Every placeholder must have come back as its own paragraph, and none
  -- may remain: anything else is a bug in a report kind's Markdown.
  if seen ~= #pieces or html:find(nonce, 1, true) then
    error(string.format("doc: %d of %d engine pieces found their place", seen, #pieces), 2)
  end
  return html
end

return M
