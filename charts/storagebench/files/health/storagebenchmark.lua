-- Argo CD health of a StorageBenchmark (resource.customizations.health.
-- storagebench.io_StorageBenchmark; docs/install.md). A run in progress is
-- Progressing; a failed run, or a completed one whose SLOs were not met or
-- that regressed against its baseline, is Degraded; a completed run is
-- Healthy.
local hs = { status = "Progressing", message = "waiting for the operator" }
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
local cond = {}
for _, c in ipairs(obj.status.conditions) do
  cond[c.type] = c
end
local function text(c)
  if c.message ~= nil and c.message ~= "" then
    return c.reason .. ": " .. c.message
  end
  return c.reason
end
if cond.Failed ~= nil and cond.Failed.status == "True" then
  hs.status = "Degraded"
  hs.message = text(cond.Failed)
elseif cond.Complete ~= nil and cond.Complete.status == "True" then
  if cond.SLOMet ~= nil and cond.SLOMet.status == "False" then
    hs.status = "Degraded"
    hs.message = text(cond.SLOMet)
  elseif cond.Regressed ~= nil and cond.Regressed.status == "True" then
    hs.status = "Degraded"
    hs.message = text(cond.Regressed)
  else
    hs.status = "Healthy"
    hs.message = text(cond.Complete)
  end
elseif cond.Reconciling ~= nil and cond.Reconciling.status == "True" then
  hs.message = text(cond.Reconciling)
end
return hs
