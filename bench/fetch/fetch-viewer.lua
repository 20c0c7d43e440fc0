-- wrk script: fetch.lua's requests, each naming one of 100,000 viewers (D20), as a partner passing
-- its readers' ids does.
local placements = { "header_banner", "article_inline", "feed_sponsored", "sidebar_top", "sidebar_bottom",
  "footer_banner", "article_top", "article_bottom", "homepage_hero", "category_listing", "search_results",
  "related_content", "newsletter_inline", "mobile_sticky", "interstitial" }
local locations = { "US", "GB", "DE", "FR", "CA", "IE", "AT", "CH", "JP", "BR", "IN", "AU", "ES", "IT", "NL",
  "SE", "PL", "MX", "KR", "ZA" }
local devices = { "mobile", "desktop", "tablet" }
local headers = { ["Authorization"] = "Bearer " .. (os.getenv("PLACARD_BENCH_KEY") or "none") }

math.randomseed(os.time())

request = function()
  local path = "/api/v1/campaigns/fetch?limit=10&placement=" .. placements[math.random(#placements)]
    .. "&location=" .. locations[math.random(#locations)] .. "&device=" .. devices[math.random(#devices)]
    .. "&viewer=reader-" .. math.random(100000)
  return wrk.format("GET", path, headers)
end
