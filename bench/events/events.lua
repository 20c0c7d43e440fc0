-- wrk script: impressions and clicks at 20:1 for random (campaign, placement) pairs of the seeded store,
-- each with its own Idempotency-Key, as a well-behaved partner (and the SDK) sends them.
local pairs_list = dofile(os.getenv("PLACARD_BENCH_PAIRS"))
local headers = {
  ["Authorization"] = "Bearer " .. (os.getenv("PLACARD_BENCH_KEY") or "none"),
  ["Content-Type"] = "application/json",
}
local counter = 0

math.randomseed(os.time())
-- Unique across runs against the same store, so no request is a replay.
local prefix = "bench-" .. os.time() .. "-" .. math.random(1000000000) .. "-"

request = function()
  counter = counter + 1
  local pair = pairs_list[math.random(#pairs_list)]
  local kind = (counter % 21 == 0) and "click" or "impression"
  headers["Idempotency-Key"] = prefix .. counter
  local body = '{"campaignId":' .. pair[1] .. ',"placement":"' .. pair[2] .. '","location":"US","device":"mobile"}'
  return wrk.format("POST", "/api/v1/campaigns/" .. kind, headers, body)
end
