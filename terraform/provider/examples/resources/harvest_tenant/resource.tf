resource "harvest_tenant" "search_frontend" {
  environment       = "search"
  function          = "frontend"
  storage_mb        = 20480
  reserve_cpu       = 1.5
  reserve_memory_mb = 2048
}
