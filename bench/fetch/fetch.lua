-- wrk script: fetch with a random placement, location and device on every request; with
-- PLACARD_BENCH_VIEWERS=N, each naming one of N viewers (D20), as a partner passing its readers' ids.
local placements = { "header_banner", "article_inline", "feed_sponsored", "sidebar_top", "sidebar_bottom",
  "footer_banner", "article_top", "article_bottom", "homepage_hero", "category_listing", "search_results",
  "related_content", "newsletter_inline", "mobile_sticky", "interstitial" }
local locations = { "US", "GB", "DE", "FR", "CA", "IE", "AT", "CH", "JP", "BR", "IN", "AU", "ES", "IT", "NL",
  "SE", "PL", "MX", "KR", "ZA" }
local devices = { "mobile", "desktop", "tablet" }
local headers = { ["Authorization"] = "Bearer " .. (os.getenv("PLACARD_BENCH_KEY") or "none") }
local viewers = tonumber(os.getenv("PLACARD_BENCH_VIEWERS") or "0")

math.randomseed(os.time())

request = function()
  local path = "/api/v1/campaigns/fetch?limit=10&placement=" .. placements[math.random(#placements)]
    .. "&location=" .. locations[math.random(#locations)] .. "&device=" .. devices[math.random(#devices)]
  if viewers > 0 then path = path .. "&viewer=reader-" .. math.random(viewers) end
  return wrk.format("GET", path, headers)
end

-- With PLACARD_BENCH_PAUSE_MS=N, each connection waits N ms after an answer before its next
-- request: a steady load below what the server can take (50 connections and 5 ms: at most 10,000
-- requests/s), where a latency measures the work of a request rather than the queue in front of it.
local pause = tonumber(os.getenv("PLACARD_BENCH_PAUSE_MS") or "0")
if pause > 0 then
  delay = function()
    return pause
  end
end
