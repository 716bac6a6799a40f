data "harvest_blob_repair_state" "now" {}

output "under_replicated" {
  value = data.harvest_blob_repair_state.now.under_replicated
}
