-- One HTTP call of a provider, made resilient: a timeout per attempt,
-- retries with exponential backoff that honour Retry-After, and the
-- client's rate limit. kl.http does the request itself.
--
--   transport.post(ctx, req) -> response, attempts | nil, failure
--       req = { url, headers = { "K: v" }, body }
--       ctx = { name, http, sleep, bucket, scrub, log, timeout, retries,
--               backoff, max_backoff, max_wait, now_epoch }
--       response = kl.http's { status, body, headers } with a 2xx status.
--   Failures (messages scrubbed of keys):
--       llm_unavailable  unreachable (refused, unknown host: not retried,
--                        failure.kind "connect" | "resolve"), or no answer
--                        within the timeout, a broken connection or a
--                        429/5xx still after the retries; failure.attempts
--       llm_refused      any other status (400, 401, 404): failure.status
--   transport.retry_after(value, now_epoch) -> seconds | nil
--       value is a Retry-After header: delay-seconds or an IMF-fixdate
--       ("Wed, 21 Oct 2015 07:28:00 GMT"); the obsolete date forms are nil.
--   transport.RETRY_STATUS -> the statuses retried
local verdicts = require "klineage.base.verdicts"

local M = {}

-- 408 timeout, 409 (OpenAI: a conflicting concurrent request), 425, 429
-- rate limit, 5xx server trouble, 529 Anthropic's "overloaded"
M.RETRY_STATUS = { [408] = true, [409] = true, [425] = true, [429] = true, [500] = true,
  [502] = true, [503] = true, [504] = true, [529] = true }

local MONTHS = { Jan = 1, Feb = 2, Mar = 3, Apr = 4, May = 5, Jun = 6,
  Jul = 7, Aug = 8, Sep = 9, Oct = 10, Nov = 11, Dec = 12 }

-- Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar, with
-- no time zone involved (os.time of a table reads local time).
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = (y >= 0 and y or y - 399) // 400
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = (153 * mp + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  return era * 146097 + doe - 719468
end

function M.retry_after(value, now_epoch)
  if type(value) ~= "string" then return nil end
  local secs = value:match("^%s*(%d+)%s*$")
  if secs then return tonumber(secs) end
  local d, mon, y, hh, mm, ss = value:match("^%s*%a%a%a, (%d%d) (%a%a%a) (%d%d%d%d) (%d%d):(%d%d):(%d%d) GMT%s*$")
  if not d or not MONTHS[mon] then return nil end
  local at = days_from_civil(tonumber(y), MONTHS[mon], tonumber(d)) * 86400
    + tonumber(hh) * 3600 + tonumber(mm) * 60 + tonumber(ss)
  return math.max(0, at - (now_epoch or os.time()))
end

-- The reason a server gives in an error body: OpenAI's and Anthropic's
-- error.message, else the start of the body.
local function reason_of(body)
  local ok, decoded = pcall(require("cjson").decode, body)
  if ok and type(decoded) == "table" and type(decoded.error) == "table" and type(decoded.error.message) == "string" then
    return decoded.error.message
  end
  local text = (body or ""):gsub("%s+", " ")
  if #text > 300 then text = text:sub(1, 300) .. "..." end
  return text
end

function M.post(ctx, req)
  local scrub = ctx.scrub
  local attempts, last = 0, nil
  local tries = (ctx.retries or 0) + 1
  while attempts < tries do
    attempts = attempts + 1
    ctx.bucket:take()
    local r, err, kind = ctx.http.request {
      url = req.url, method = "POST", headers = req.headers, body = req.body, timeout = ctx.timeout,
    }
    local wait
    if not r then
      if kind == "connect" or kind == "resolve" then
        return nil, verdicts.failure("llm_unavailable", scrub(string.format(
          "%s is unreachable: %s", ctx.name, err)), { attempts = attempts, kind = kind })
      end
      -- a timeout, or a connection cut mid-answer: worth another try
      last = kind == "timeout" and string.format("no answer within %g s", ctx.timeout) or err
    elseif r.status >= 200 and r.status < 300 then
      return r, attempts
    elseif M.RETRY_STATUS[r.status] then
      last = string.format("HTTP %d: %s", r.status, reason_of(r.body))
      wait = M.retry_after(r.headers and r.headers["retry-after"], ctx.now_epoch and ctx.now_epoch())
      if wait and wait > ctx.max_wait then
        return nil, verdicts.failure("llm_unavailable", scrub(string.format(
          "%s asks to wait %g s (Retry-After), more than the %g s allowed: %s", ctx.name, wait, ctx.max_wait, last)),
          { attempts = attempts, status = r.status })
      end
    else
      return nil, verdicts.failure("llm_refused", scrub(string.format(
        "%s refused the request: HTTP %d: %s", ctx.name, r.status, reason_of(r.body))),
        { attempts = attempts, status = r.status })
    end
    if attempts < tries then
      wait = wait or math.min(ctx.max_backoff, ctx.backoff * 2 ^ (attempts - 1))
      if ctx.log then
        ctx.log(scrub(string.format("llm %s: %s; retry %d of %d in %g s", ctx.name, last, attempts, tries - 1, wait)))
      end
      ctx.sleep(wait)
    end
  end
  return nil, verdicts.failure("llm_unavailable", scrub(string.format(
    "%s gave no answer after %d attempts: %s", ctx.name, attempts, last)), { attempts = attempts })
end

return M
