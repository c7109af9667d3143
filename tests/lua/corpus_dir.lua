-- Where scripts/fetch-corpus.sh puts the outside corpus by default, for
-- corpus_run.lua and corpus_transforms.lua: KLINEAGE_CORPUS, else
-- $XDG_CACHE_HOME/klineage/corpus, else ~/.cache/klineage/corpus.
local dir = os.getenv("KLINEAGE_CORPUS")
if dir and dir ~= "" then return dir end
local xdg = os.getenv("XDG_CACHE_HOME")
if xdg and xdg ~= "" then return xdg .. "/klineage/corpus" end
return (os.getenv("HOME") or "") .. "/.cache/klineage/corpus"
