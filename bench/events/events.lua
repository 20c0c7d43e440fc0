-- wrk script: impressions and clicks at 20:1 for random (campaign, placement) pairs of the seeded store,
-- each with its own Idempotency-Key, as a well-behaved partner (and the SDK) sends them.
-- With PLACARD_BENCH_TOKENS (a file of `campaignId placement token` lines, bench/events/tokens.mjs),
-- each impression carries a fresh serve token of its own, and each click the token of an impression
-- sent CLICK_LAG requests earlier (a second or more at these rates, so not too fast for a person).
local headers = {
  ["Authorization"] = "Bearer " .. (os.getenv("PLACARD_BENCH_KEY") or "none"),
  ["Content-Type"] = "application/json",
}
local counter = 0
-- Not a multiple of 21, so the request it points back to was an impression (PLACARD_BENCH_CLICK_LAG
-- for slower loads: it should span a second or more).
local CLICK_LAG = tonumber(os.getenv("PLACARD_BENCH_CLICK_LAG") or "31501")

local pairs_list = {}
local tokens_file = os.getenv("PLACARD_BENCH_TOKENS")
if tokens_file then
  for line in io.lines(tokens_file) do
    local id, placement, token = line:match("^(%d+) (%S+) (%S+)$")
    pairs_list[#pairs_list + 1] = { id, placement, token }
  end
else
  pairs_list = dofile(os.getenv("PLACARD_BENCH_PAIRS"))
end

math.randomseed(os.time())
-- Unique across runs against the same store, so no request is a replay.
local prefix = "bench-" .. os.time() .. "-" .. math.random(1000000000) .. "-"
-- Idempotency-Keys in time order by default, as the SDK sends them (UUIDv7: the time first, the
-- random part after), so a batch's claims land side by side in the key's index. With
-- PLACARD_BENCH_KEYS=random, random UUIDs (v4), as a client that draws them sends them: each claim
-- then lands on a page of its own.
local random_keys = os.getenv("PLACARD_BENCH_KEYS") == "random"
local function random_uuid()
  return string.format("%08x-%04x-4%03x-%04x-%06x%06x", math.random(0, 0xffffffff), math.random(0, 0xffff),
    math.random(0, 0xfff), math.random(0x8000, 0xbfff), math.random(0, 0xffffff), math.random(0, 0xffffff))
end

request = function()
  counter = counter + 1
  local kind = (counter % 21 == 0) and "click" or "impression"
  local pair
  if tokens_file then
    local at = counter
    if kind == "click" and counter > CLICK_LAG then at = counter - CLICK_LAG end
    pair = pairs_list[(at - 1) % #pairs_list + 1]
  else
    pair = pairs_list[math.random(#pairs_list)]
  end
  -- The counter zero-padded: unpadded, "…-10" sorts before "…-9", and a batch's claims landed in
  -- several places of the index instead of side by side, as a UUIDv7's do.
  headers["Idempotency-Key"] = random_keys and random_uuid() or string.format("%s%012d", prefix, counter)
  local token = pair[3] and (',"token":"' .. pair[3] .. '"') or ""
  local body = '{"campaignId":' .. pair[1] .. ',"placement":"' .. pair[2] .. '","location":"US","device":"mobile"' .. token .. '}'
  return wrk.format("POST", "/api/v1/campaigns/" .. kind, headers, body)
end
